import { mkdtemp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresSessionStore } from '../src/postgres/index.js';
import { repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';
import { cliWorkerWorkspace, saveScenario } from './support/cli-worker.js';
import { freshDatabase } from './support/postgres.js';
import { type RestateServer, restateServerBinary, startRestateServer } from './support/restate-server.js';

// agentloop worker --engine and agentloop send --engine, as users run them (node dist/cli/main.js),
// on a real restate-server and on DBOS on the run's PostgreSQL cluster.

const bundle = path.join(repoRoot, 'bundles', 'requirements-workflow');
const workspace = cliWorkerWorkspace('agentloop-cli-engines-', { 'save.yaml': saveScenario });
const startCliWorker = workspace.startWorker;
process.env.RESTATE_LOGGING ??= 'ERROR';

interface EngineCase {
  worker: string[];
  send: string[];
  /** The sessions the worker kept in its session store (by --store, or dbos's default). */
  kept: () => Promise<{ id: string; state: string }[]>;
}

const engines: [string, () => Promise<EngineCase | undefined>][] = [
  [
    'restate',
    async () => {
      if ('missing' in restateServerBinary()) return undefined;
      const server: RestateServer = await startRestateServer();
      workspace.cleanup(() => server.stop());
      const sessions = path.join(workspace.work(), 'restate-sessions');
      return {
        worker: ['--engine', 'restate', '--port', '0', '--register', server.admin, '--store', sessions],
        send: ['--engine', 'restate', '--url', server.ingress],
        // Read as users read them: agentloop sessions.
        kept: async () => {
          const listed = await runCli(['sessions', '--sessions-dir', sessions, '--json']);
          expect(listed.code, listed.stderr).toBe(0);
          return JSON.parse(listed.stdout) as { id: string; state: string }[];
        },
      };
    },
  ],
  [
    'dbos',
    async () => {
      const database = await freshDatabase('dbos_cli');
      workspace.cleanup(database.drop);
      const url = new URL(database.url);
      return {
        worker: ['--engine', 'dbos', '--database', url.href],
        send: ['--engine', 'dbos', '--database', url.href],
        // By default in the PostgreSQL session store on the same database.
        kept: async () => {
          const store = new PostgresSessionStore({ connectionString: url.href, max: 1 });
          try {
            return (await store.list()) as { id: string; state: string }[];
          } finally {
            await store.close();
          }
        },
      };
    },
  ],
];

describe.each(engines)('agentloop worker and send --engine %s', (_name, makeCase) => {
  it('a message waits for approval (exit 3), an answer from another process finishes the turn, SIGTERM stops the worker', async () => {
    const engine = await makeCase();
    if (!engine) return;
    const output = await mkdtemp(path.join(workspace.work(), 'out-'));
    const agent = ['--agent', 'intake-facilitator'];
    const worker = startCliWorker([
      ...engine.worker,
      '--bundle',
      bundle,
      ...agent,
      '--output',
      output,
      '--scenario',
      path.join(workspace.work(), 'save.yaml'),
    ]);
    await worker.waitFor(/Ctrl-C stops/, 60_000);

    const send = (args: string[]) =>
      runCli(['send', ...engine.send, ...agent, '--session', 'notes-1', ...args], { timeoutMs: 60_000 });
    const asked = await send(['save the notes', '--wait']);
    expect(asked.code, asked.stderr).toBe(3);
    expect(asked.stderr).toContain('session notes-1 waits for approval:\n');
    expect(asked.stderr).toContain(
      'call_0_0 save_output {"file_path":"{output_folder}/notes.md","content":"hello notes"}\n',
    );
    const unknown = await send(['--approve', 'call_9_9']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /no call "call_9_9" waits for approval in session "notes-1" of agent "intake-facilitator"/,
    );

    const approved = await send(['--approve', 'call_0_0', '--wait']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe('Saved the notes.\n');
    expect(await readFile(path.join(output, 'notes.md'), 'utf8')).toBe('hello notes');
    expect(await engine.kept()).toMatchObject([{ id: 'notes-1', state: 'Completed' }]);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toMatch(/stopped\n$/);
  }, 180_000);
});

describe('agentloop worker --engine without the engine', () => {
  it('says it cannot reach Restate, naming the address', async () => {
    const result = await runCli(
      [
        'worker',
        '--engine',
        'restate',
        '--port',
        '0',
        '--register',
        'http://127.0.0.1:9',
        '--bundle',
        bundle,
        '--agent',
        'intake-facilitator',
      ],
      { timeoutMs: 30_000 },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot reach Restate's admin API at http://127.0.0.1:9");
  }, 60_000);

  it('refuses --engine with anything but restate or dbos (exit 2)', async () => {
    const result = await runCli(['send', '--engine', 'temporal', '--agent', 'a', '--session', 's', 'hi']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--engine is restate or dbos');
  });
});
