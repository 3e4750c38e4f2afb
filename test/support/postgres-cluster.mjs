// A throwaway PostgreSQL cluster for tests, the chaos run and the benchmarks: Debian's `postgresql`
// binaries, a fresh data directory in a temp folder, 127.0.0.1 on a free port, the unix socket in the
// temp folder too. Never a system service. initdb refuses root, so as root the cluster runs as
// `nobody` (through runuser). Plain JavaScript so that bench/ (node, no TypeScript) can use it.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What to install when no binaries are found. */
export const POSTGRES_PACKAGE_HINT =
  "PostgreSQL server binaries (initdb, pg_ctl) were not found in /usr/lib/postgresql/*/bin or on PATH. Install Debian's `postgresql` package (apt-get install -y postgresql); .ci/run installs it.";

/** The folder holding initdb and pg_ctl, or undefined. `AGENTLOOP_PG_BIN`, when set, is the only place looked at. */
export function findPostgresBin() {
  const only = process.env.AGENTLOOP_PG_BIN;
  if (only)
    return existsSync(path.join(only, 'initdb')) && existsSync(path.join(only, 'pg_ctl')) ? only : undefined;
  const candidates = [];
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(path.join(debian, v, 'bin'));
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) if (dir) candidates.push(dir);
  return candidates.find(
    (dir) => existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl')),
  );
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster and resolves with `{ url, port, dir, stop() }`. `durable: false` (tests) turns
 * fsync off; the benchmarks keep PostgreSQL's defaults. Throws {@link POSTGRES_PACKAGE_HINT} when the
 * binaries are missing. `settings` adds `name=value` server settings.
 */
export async function startPostgresCluster(options = {}) {
  const bin = findPostgresBin();
  if (!bin) throw new Error(POSTGRES_PACKAGE_HINT);
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const user = options.user ?? 'nobody';
  const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) {
    const { stdout } = await run('id', ['-u', user]);
    const { stdout: gid } = await run('id', ['-g', user]);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(dir, 0o700);
  const exec = (file, args) =>
    asRoot
      ? run('runuser', ['-u', user, '--', path.join(bin, file), ...args])
      : run(path.join(bin, file), args);
  await exec('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N']);
  const port = await freePort();
  const settings = [
    `-p ${port}`,
    "-c listen_addresses='127.0.0.1'",
    `-c unix_socket_directories='${dir}'`,
    `-c max_connections=${options.maxConnections ?? 200}`,
    '-c shared_buffers=32MB',
  ];
  if (options.durable === false) {
    settings.push('-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off');
  }
  // Extra `-c name=value` settings (a bench's pg_stat_statements, say).
  for (const setting of options.settings ?? []) settings.push(`-c ${setting}`);
  const log = path.join(dir, 'postgres.log');
  try {
    await exec('pg_ctl', ['-D', data, '-l', log, '-o', settings.join(' '), '-w', '-t', '60', 'start']);
  } catch (error) {
    const text = await readFile(log, 'utf8').catch(() => '');
    await rm(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${error.message}\n${text}`);
  }
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    async stop() {
      if (stopped) return;
      stopped = true;
      await exec('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
