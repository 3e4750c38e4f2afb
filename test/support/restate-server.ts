import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** A Restate server started for tests: its ingress and admin URLs. */
export interface RestateServer {
  ingress: string;
  admin: string;
  /** Registers a deployment (an endpoint serving services) with the server. */
  register(uri: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The restate-server binary of the `@restatedev/restate-server` dev dependency for this platform, or
 * why it cannot run here.
 */
export function restateServerBinary(): { path: string } | { missing: string } {
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
export async function startRestateServer(): Promise<RestateServer> {
  const binary = restateServerBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-restate-'));
  const child: ChildProcess = spawn(
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
  const ports: Record<string, number> = {};
  const log: string[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      log.push(line);
      if (log.length > 200) log.shift();
      try {
        const span = (JSON.parse(line) as { span?: Record<string, unknown> }).span;
        if (typeof span?.server_name === 'string' && typeof span['server.port'] === 'number') {
          ports[span.server_name] = span['server.port'];
        }
      } catch {}
      if (ports['http-ingress-server'] && ports['admin-api-server']) resolve();
    });
    child.stderr!.on('data', (d: Buffer) => log.push(d.toString()));
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

async function untilHealthy(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`restate-server: ${url} never answered`);
}

/** Serves a Restate endpoint's HTTP/2 handler on 127.0.0.1 (an OS-chosen port). */
export async function serveEndpoint(
  handler: (request: http2.Http2ServerRequest, response: http2.Http2ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Restate keeps its HTTP/2 connections open: end them so the server can close.
        for (const session of sessions) session.destroy();
      }),
  };
}
