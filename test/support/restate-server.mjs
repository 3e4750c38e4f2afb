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
 * temp folder; resolves once its ingress and admin API listen.
 */
export async function startRestateServer() {
  const binary = restateServerBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-restate-'));
  const child = spawn(
    binary.path,
    [
      '--no-logo',
      '--use-random-ports',
      'true',
      '--bind-ip',
      '127.0.0.1',
      '--listen-mode',
      'tcp',
      '--base-dir',
      dir,
      '--default-num-partitions',
      '2',
    ],
    {
      env: { ...process.env, RESTATE_LOG_FORMAT: 'json', RESTATE_LOG_FILTER: 'info' },
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
      if (ports['http-ingress-server'] && ports['admin-api-server']) resolve();
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
  const admin = `http://127.0.0.1:${ports['admin-api-server']}`;
  const ingress = `http://127.0.0.1:${ports['http-ingress-server']}`;
  await untilHealthy(`${admin}/health`);
  return {
    ingress,
    admin,
    async register(uri) {
      const response = await fetch(`${admin}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri, force: true }),
      });
      if (!response.ok)
        throw new Error(`registering ${uri}: HTTP ${response.status} ${await response.text()}`);
    },
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
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
