/**
 * `agentloop fork` and `agentloop sessions export --format trajectory`, run as users run them (the
 * built CLI in a child process) on a sessions folder recorded through the real SDK.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../src/index.js';
import { buildDist } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';
import { serve, testDir } from './support/harness.js';
import { dropSchema, freshSchema, postgresStore, postgresUrl } from './support/postgres.js';
import { recordSession } from './support/recorded-session.js';

beforeAll(async () => {
  await buildDist();
}, 180_000);

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanups.splice(0)) await step();
});

/** A project folder holding session `orig` in `sessions/`. */
async function project() {
  const dir = await testDir('cli-fork-');
  const sessions = path.join(dir, 'sessions');
  const store = new FileSessionStore({ dir: sessions });
  const recorded = await recordSession(store);
  return { dir, sessions, store, ...recorded };
}

describe('agentloop fork', () => {
  it('prints the new id; chat --resume goes on from the cut on the remembered model', async () => {
    const { dir, sessions, store, seq } = await project();
    const original = await readFile(store.files('orig').transcript, 'utf8');
    const forked = await runCli(
      ['fork', 'orig', '--at', String(seq.lastResult), '--model', 'fork-model', '--sessions-dir', sessions],
      { cwd: dir },
    );
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stdout).toMatch(/^[a-z0-9._-]+\n$/);
    const id = forked.stdout.trim();
    expect(await store.load(id)).toMatchObject({ state: 'Interrupted', meta: { model: 'fork-model' } });
    expect(await readFile(store.files('orig').transcript, 'utf8')).toBe(original);

    // A model server in this process, to see the model asked for; it answers by the number of
    // assistant messages in the request: one before the cut.
    const model = await serve({ turns: [{ content: 'not asked' }, { content: 'The fork went on.' }] });
    const chat = await runCli(
      [
        'chat',
        '--resume',
        id,
        '--sessions-dir',
        sessions,
        '--base-url',
        model.url,
        '--api-key',
        'k',
        '--yes',
      ],
      { cwd: dir, input: '/continue\n/exit\n' },
    );
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain('The fork went on.');
    expect(model.requests.map((r) => r.model)).toEqual(['fork-model']);
    // The fork's model and origin outlive chat's saves.
    expect(await store.load(id)).toMatchObject({
      state: 'Completed',
      meta: { model: 'fork-model', forkedFrom: { session: 'orig', seq: seq.lastResult } },
    });
    expect(await readFile(store.files('orig').transcript, 'utf8')).toBe(original);
  });

  it('exits 2 with one line on bad input', async () => {
    const { dir, sessions, seq } = await project();
    const cases: [string[], RegExp][] = [
      [['ghost', '--at', '3'], /^agentloop fork: cannot fork session "ghost": there is no such session\n$/],
      [
        ['orig', '--at', String(seq.modelCall)],
        /^agentloop fork: cannot fork session "orig": not at seq \d+: it is at a model call that started and has no result .*\n$/,
      ],
      [
        ['orig', '--at', String(seq.firstResult)],
        /^agentloop fork: cannot fork session "orig": not at seq \d+: it is inside a tool batch .*\n$/,
      ],
      [['orig', '--at', '999'], /there is no entry seq 999/],
      [
        ['orig', '--at', 'two'],
        /^agentloop fork: --at needs a transcript entry seq \(a whole number above 0\), got "two"; see agentloop fork --help\n$/,
      ],
      [['orig'], /^agentloop fork: missing --at <seq>/],
      [[], /^agentloop fork: give one session id/],
      [['../x', '--at', '3'], /^agentloop fork: Invalid session id "..\/x"/],
    ];
    for (const [args, stderr] of cases) {
      const result = await runCli(['fork', ...args, '--sessions-dir', sessions], { cwd: dir });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(stderr);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stdout).toBe('');
    }
    const list = await runCli(['sessions', '--sessions-dir', sessions, '--json'], { cwd: dir });
    expect(JSON.parse(list.stdout)).toHaveLength(1);
  });

  it('forks and exports on the PostgreSQL store --store names', async () => {
    const schema = freshSchema('clifork');
    const store = postgresStore(schema);
    cleanups.push(async () => {
      await store.close();
      await dropSchema(schema);
    });
    const { seq } = await recordSession(store);
    const before = JSON.stringify(await store.readTranscript('orig'));
    const pg = ['--store', postgresUrl(), '--schema', schema];
    const forked = await runCli(['fork', 'orig', '--at', String(seq.done), '--message', 'and then?', ...pg]);
    expect(forked.code, forked.stderr).toBe(0);
    const id = forked.stdout.trim();
    expect(await store.load(id)).toMatchObject({ state: 'Interrupted', turns: 2 });
    expect(JSON.stringify(await store.readTranscript('orig'))).toBe(before);
    const exported = await runCli(['sessions', 'export', id, '--format', 'trajectory', ...pg]);
    expect(exported.code, exported.stderr).toBe(0);
    expect((JSON.parse(exported.stdout) as { content: unknown }[]).map((m) => m.content)).toEqual([
      'be nice',
      'go',
      null,
      'echo: a',
      'echo: b',
      'done',
      'and then?',
    ]);
  });

  it('reads the store --store names', async () => {
    const { dir, sessions, seq } = await project();
    const result = await runCli(['fork', 'orig', '--at', String(seq.go), '--store', sessions], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
  });
});

describe('agentloop sessions export --format trajectory', () => {
  const expected = [
    { role: 'system', content: 'be nice' },
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_0_0', type: 'function', function: { name: 'echo', arguments: '{"text":"a"}' } },
        { id: 'call_0_1', type: 'function', function: { name: 'echo', arguments: '{"text":"b"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_0_0', content: 'echo: a' },
    { role: 'tool', tool_call_id: 'call_0_1', content: 'echo: b' },
    { role: 'assistant', content: 'done' },
    { role: 'user', content: 'again' },
    { role: 'assistant', content: 'second' },
  ];

  it('writes the OpenAI messages of a session to stdout or --out', async () => {
    const { dir, sessions } = await project();
    const out = await runCli(
      ['sessions', 'export', 'orig', '--format', 'trajectory', '--sessions-dir', sessions],
      {
        cwd: dir,
      },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual(expected);
    const file = path.join(dir, 'trajectory.json');
    const written = await runCli(
      ['sessions', 'export', 'orig', '--format', 'trajectory', '--out', file, '--store', sessions],
      { cwd: dir },
    );
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toBe('');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(expected);
  });

  it('exits 2 on an unknown session or format', async () => {
    const { dir, sessions } = await project();
    const cases: [string[], RegExp][] = [
      [
        ['ghost', '--format', 'trajectory'],
        /^agentloop sessions export: no session "ghost" with a transcript in sessions folder .*\n$/,
      ],
      [['orig', '--format', 'xml'], /--format "xml" is not known \(formats: trajectory\)/],
      [['orig'], /missing --format trajectory/],
    ];
    for (const [args, stderr] of cases) {
      const result = await runCli(['sessions', 'export', ...args, '--sessions-dir', sessions], { cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(stderr);
    }
  });
});
