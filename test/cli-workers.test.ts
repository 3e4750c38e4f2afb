import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresSessionStore } from '../src/postgres/postgres-session-store.js';
import { FileSessionStore } from '../src/session/file-store/file-session-store.js';
import type { SessionStore } from '../src/session/session-store.js';
import { cliPath, repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';
import { cliWorkerWorkspace, saveScenario } from './support/cli-worker.js';
import { dropSchema, freshSchema, postgresUrl } from './support/postgres.js';

const bundle = path.join(repoRoot, 'bundles', 'requirements-workflow');
// Turn 0 saves (needs approval), turn 1 answers: one scenario for every session (turns go by the
// number of assistant messages). The slow one stays in the first model call long enough to be killed.
const workspace = cliWorkerWorkspace('agentloop-cli-workers-', {
  'save.yaml': saveScenario,
  'slow.yaml': `turns:
  - content: First answer.
    delayMs: 2500
  - content: Second answer.
`,
});
const startCliWorker = workspace.startWorker;

interface StoreCase {
  /** The --store (and --schema) flags. */
  flags: string[];
  /** The same store, opened in the test to read what the processes wrote. */
  open: () => SessionStore & { close?(): Promise<void> };
}

const cases: [string, () => Promise<StoreCase>][] = [
  [
    'a sessions folder',
    async () => {
      const dir = await mkdtemp(path.join(workspace.work(), 'sessions-'));
      return { flags: ['--store', dir], open: () => new FileSessionStore({ dir }) };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const schema = freshSchema('cli');
      workspace.cleanup(() => dropSchema(schema));
      // A password in the URL (the test cluster trusts local connections): it must never be printed.
      const url = postgresUrl().replace('postgres://postgres@', 'postgres://postgres:pw-s3cret-9@');
      return {
        flags: ['--store', url, '--schema', schema],
        open: () => new PostgresSessionStore({ connectionString: postgresUrl() }, { schema }),
      };
    },
  ],
];

describe.each(cases)('agentloop worker and send on %s', (_name, makeCase) => {
  it('send --wait lists the call waiting for approval (exit 3); two answers from two processes apply once; SIGTERM stops the worker', async () => {
    const { flags, open } = await makeCase();
    const output = await mkdtemp(path.join(workspace.work(), 'out-'));
    const common = ['--bundle', bundle, '--agent', 'intake-facilitator', '--output', output];
    const worker = startCliWorker([
      ...flags,
      ...common,
      '--scenario',
      path.join(workspace.work(), 'save.yaml'),
    ]);
    await worker.waitFor(/Ctrl-C stops/);

    const asked = await runCli(['send', ...flags, '--session', 'notes-1', 'save the notes', '--wait'], {
      timeoutMs: 60_000,
    });
    expect(asked.code, asked.stderr).toBe(3);
    expect(asked.stdout).toBe('');
    expect(asked.stderr).toContain('session notes-1 waits for approval:\n');
    expect(asked.stderr).toContain(
      'call_0_0 save_output {"file_path":"{output_folder}/notes.md","content":"hello notes"}\n',
    );

    // Two processes answer at once: one is taken (and waits for the reply), the other is refused.
    const answer = () =>
      runCli(['send', ...flags, '--session', 'notes-1', '--approve', 'call_0_0', '--wait'], {
        timeoutMs: 60_000,
      });
    const both = await Promise.all([answer(), answer()]);
    const taken = both.find((r) => r.code === 0);
    const refused = both.find((r) => r.code === 1);
    expect(both.map((r) => r.code).sort(), both.map((r) => r.stderr).join('\n')).toEqual([0, 1]);
    expect(taken!.stdout).toBe('Saved the notes.\n');
    expect(refused!.stderr).toContain('tool call call_0_0 of session notes-1 was answered already');
    expect(await readFile(path.join(output, 'notes.md'), 'utf8')).toBe('hello notes');
    // Later: still refused.
    const late = await runCli(['send', ...flags, '--session', 'notes-1', '--reject', 'call_0_0']);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('was answered already');

    const store = open();
    const { entries } = await store.readTranscript('notes-1');
    expect(entries.filter((e) => e.kind === 'event' && e.event === 'approval_resolved')).toHaveLength(1);
    expect(entries.filter((e) => e.kind === 'tool_call_finished')).toHaveLength(1);
    await store.close?.();

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toContain('session notes-1: carrying\n');
    expect(worker.stderr()).toContain('session notes-1: let go in WaitingApproval\n');
    expect(worker.stderr()).toContain('session notes-1: let go in Completed\n');
    expect(worker.stderr()).toMatch(/stopped\n$/);
    expect(worker.stderr() + asked.stderr + both[0]!.stderr).not.toContain('pw-s3cret-9');
  }, 120_000);

  it('a worker killed with SIGKILL mid-turn: a second worker carries the session on', async () => {
    const { flags, open } = await makeCase();
    const args = [...flags, '--bundle', bundle, '--agent', 'intake-facilitator', '--scenario'];
    const first = startCliWorker([...args, path.join(workspace.work(), 'slow.yaml')]);
    await first.waitFor(/Ctrl-C stops/);
    expect((await runCli(['send', ...flags, '--session', 'slow-1', 'hello'])).code).toBe(0);
    await first.waitFor(/session slow-1: carrying/);
    await new Promise((r) => setTimeout(r, 600)); // in the model call (2.5 s)
    first.child.kill('SIGKILL');
    await first.exited;

    const second = startCliWorker([...args, path.join(workspace.work(), 'slow.yaml')]);
    const next = await runCli(['send', ...flags, '--session', 'slow-1', 'and then?', '--wait'], {
      timeoutMs: 60_000,
    });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toBe('Second answer.\n');
    expect(second.stderr()).toContain('session slow-1: carrying');

    const store = open();
    const { entries } = await store.readTranscript('slow-1');
    const said = entries.flatMap((e) =>
      e.kind === 'message' ? [`${e.message.role}: ${e.message.content}`] : [],
    );
    // Each input applied once, the cut-off turn finished by the second worker.
    expect(said.filter((s) => s.startsWith('user:'))).toEqual(['user: hello', 'user: and then?']);
    expect(said.filter((s) => s.startsWith('assistant:'))).toEqual([
      'assistant: First answer.',
      'assistant: Second answer.',
    ]);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    await store.close?.();
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 120_000);
});

describe('agentloop worker and send: bad input is one line and an exit code', () => {
  it('names the flag, never prints a password, says when the database is unreachable', async () => {
    const dir = path.join(workspace.work(), 'flags');
    const cases: [string[], number, string][] = [
      [['worker', '--agent', 'x'], 2, 'agentloop worker: missing --store <url-or-dir>'],
      [
        ['worker', '--store', dir, '--agent', 'x', '--concurrency', '0'],
        2,
        '--concurrency needs a whole number above 0, got "0"',
      ],
      [
        ['send', '--store', dir, '--session', 's1'],
        2,
        'give one of "<message>", --approve <id>, --reject <id> or --interrupt',
      ],
      [['send', '--store', dir, '--session', 's1', 'hi', '--interrupt'], 2, 'give one of'],
      [['send', '--store', dir, 'hi'], 2, 'missing --session <id>'],
      [['send', '--store', dir, '--session', 's1', 'hi', '--always'], 2, '--always goes with --approve'],
      [['send', '--store', dir, '--session', 's1', 'hi', '--timeout', '5'], 2, '--timeout goes with --wait'],
      [
        ['send', '--store', 'mysql://root:hunter2-pw@db/x', '--session', 's1', 'hi'],
        2,
        'got "mysql://root:***@db/x"',
      ],
      [['send', '--store', cliPath, '--session', 's1', 'hi'], 2, 'is a file, not a sessions folder'],
      [['send', '--store', dir, '--session', 'no such/id', 'hi'], 1, 'Invalid session id "no such/id"'],
      [
        ['send', '--store', dir, '--session', 's1', '--approve', 'call_9'],
        1,
        'tool call call_9 of session s1 is not waiting for approval',
      ],
    ];
    for (const [args, code, text] of cases) {
      const result = await runCli(args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(code);
      expect(result.stderr, args.join(' ')).toContain(text);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(result.stderr).not.toContain('hunter2-pw');
    }
  }, 120_000); // eleven CLI processes one after another: seconds each on a loaded machine

  it('an unreachable database: one line naming the redacted URL, exit 1, quickly', async () => {
    const port = await closedPort();
    const url = `postgresql://app:pw-unreach-7@127.0.0.1:${port}/app`;
    for (const command of [
      ['send', '--session', 's1', 'hi'],
      ['worker', '--agent', 'intake-facilitator', '--bundle', bundle],
    ]) {
      const result = await runCli([...command, '--store', url], { timeoutMs: 20_000 });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(
        `cannot use the database at postgresql://app:***@127.0.0.1:${port}/app: `,
      );
      expect(result.stderr).toContain('ECONNREFUSED');
      expect(result.stderr).not.toContain('pw-unreach-7');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

/** A port nothing listens on (taken from the OS, then freed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
