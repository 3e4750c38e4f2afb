// restate-server from the npm package, started for tests and the chaos run (plain JS so that the
// chaos scripts, which run without a TypeScript loader, share it with the tests).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The restate-server binary of the `@restatedev/restate-server` dev dependency for this platform, or
 * why it cannot run here.
 */
export function restateServerBinary() {
  const require = createRequire(import.meta.url);
  const pkg = `@restatedev/restate-server-${process.platform}-${process.arch}`;
  try {
    const dir = path.dirname(require.resolve(`${pkg}/package.json`));
    const binary = path.join(dir, 'bin', 'restate-server');
    return existsSync(binary) ? { path: binary } : { missing: `${binary} is missing` };
  } catch {
    return {
      missing: `${pkg} is not installed (no restate-server binary for ${process.platform}-${process.arch})`,
    };
  }
}

/**
 * Starts restate-server on 127.0.0.1 with OS-chosen ports (read from its JSON log) and its data in a
 * temp folder; resolves once its ingress and admin API listen. `halt()` stops the process and keeps
 * its data; `resume()` starts it again on the same folder and ports (the engine gone and back).
 */
export async function startRestateServer() {
  const binary = restateServerBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-restate-'));
  let running = await spawnServer(binary.path, dir);
  const { ports } = running;
  const admin = `http://127.0.0.1:${ports['admin-api-server']}`;
  const ingress = `http://127.0.0.1:${ports['http-ingress-server']}`;
  await untilHealthy(`${admin}/health`);
  const halt = async () => {
    const { child } = running;
    const exited = new Promise((r) => child.once('exit', r));
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    else return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return {
    ingress,
    admin,
    /** The running process's pid (a new one after `resume()`). */
    get pid() {
      return running.child.pid;
    },
    async register(uri) {
      const response = await fetch(`${admin}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri, force: true }),
      });
      if (!response.ok)
        throw new Error(`registering ${uri}: HTTP ${response.status} ${await response.text()}`);
    },
    halt,
    async resume() {
      await halt();
      running = await spawnServer(binary.path, dir, ports);
      await untilHealthy(`${admin}/health`);
    },
    async stop() {
      await halt();
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** One restate-server process on `dir`: on OS-chosen ports, or on `fixed` ones (a restart). */
async function spawnServer(binary, dir, fixed) {
  const where = fixed
    ? ['--bind-address', `127.0.0.1:${fixed['message-fabric-server']}`]
    : ['--use-random-ports', 'true', '--bind-ip', '127.0.0.1'];
  const child = spawn(
    binary,
    ['--no-logo', ...where, '--listen-mode', 'tcp', '--base-dir', dir, '--default-num-partitions', '2'],
    {
      env: {
        ...process.env,
        RESTATE_LOG_FORMAT: 'json',
        RESTATE_LOG_FILTER: 'info',
        ...(fixed
          ? {
              RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${fixed['http-ingress-server']}`,
              RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${fixed['admin-api-server']}`,
            }
          : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const ports = {};
  const log = [];
  const ready = new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      log.push(line);
      if (log.length > 200) log.shift();
      try {
        const span = JSON.parse(line).span;
        if (typeof span?.server_name === 'string' && typeof span['server.port'] === 'number') {
          ports[span.server_name] = span['server.port'];
        }
      } catch {}
      if (ports['http-ingress-server'] && ports['admin-api-server'] && ports['message-fabric-server']) {
        resolve();
      }
    });
    child.stderr.on('data', (d) => log.push(d.toString()));
    child.once('exit', (code) => reject(new Error(`restate-server exited (${code}):\n${log.join('\n')}`)));
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    await ready;
  } finally {
    clearTimeout(timer);
  }
  return { child, ports };
}

async function untilHealthy(url) {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`restate-server: ${url} never answered`);
}
