/**
 * `forkSession`: a new session holding a recorded session's transcript up to a rest point, on the file,
 * memory and PostgreSQL stores. Recorded and continued through the real SDK against the scripted server;
 * tool runs are counted where the tool runs.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  Cassette,
  ForkError,
  forkCutProblem,
  forkPoints,
  forkSession,
  replaySession,
  trajectoryMessages,
} from '../src/evals/index.js';
import { FileSessionStore, MemorySessionStore, type SessionStore } from '../src/index.js';
import type { TranscriptEntry } from '../src/session/transcript.js';
import { agentAt, serve, testDir } from './support/harness.js';
import { disposablePostgresStore } from './support/postgres.js';
import { countingEcho, recordSession as record } from './support/recorded-session.js';

/** Everything a store holds of a session, as text: the transcript's entries and the record. */
async function stored(store: SessionStore, id: string): Promise<string> {
  const files = store.files?.(id);
  if (files) return (await readFile(files.transcript, 'utf8')) + (await readFile(files.snapshot, 'utf8'));
  return JSON.stringify([(await store.readTranscript(id)).entries, await store.load(id)]);
}

/** `store` whose first record write (`save`) fails; everything else passes through to it. */
function failingFirstSave(store: SessionStore): SessionStore {
  let failed = false;
  return {
    save: async (record, options) => {
      if (!failed) {
        failed = true;
        throw new Error('record write refused');
      }
      return store.save(record, options);
    },
    load: (id) => store.load(id),
    list: () => store.list(),
    delete: (id) => store.delete(id),
    appendTranscript: (id, entries, options) => store.appendTranscript(id, entries, options),
    readTranscript: (id) => store.readTranscript(id),
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanups.splice(0)) await step();
});

const stores: [string, () => Promise<SessionStore>][] = [
  ['file store', async () => new FileSessionStore({ dir: await testDir('fork-') })],
  ['memory store', async () => new MemorySessionStore()],
  ['PostgreSQL store', async () => disposablePostgresStore('fork', cleanups)],
];

describe.each(stores)('forkSession on the %s', (_name, makeStore) => {
  it('copies the prefix to a new session, changes nothing of the original, and runs no tool before the cut again', async () => {
    const store = await makeStore();
    const { entries, runs, seq } = await record(store);
    expect(runs).toEqual(['a', 'b']);
    const before = await stored(store, 'orig');

    const fork = await forkSession(store, 'orig', { at: seq.lastResult });
    expect(await stored(store, 'orig')).toBe(before);
    const forked = (await store.readTranscript(fork.id)).entries;
    expect(forked.slice(0, seq.lastResult)).toEqual(entries.slice(0, seq.lastResult));
    expect(forked[seq.lastResult]).toMatchObject({
      seq: seq.lastResult + 1,
      kind: 'event',
      event: 'session_forked',
      data: { session: 'orig', seq: seq.lastResult },
    });
    // The usage at the cut: the one model call before it, as its model_call entry recorded it.
    const firstCall = entries.find((e) => e.kind === 'event' && e.event === 'model_call')!;
    const { usage } = (firstCall as { data: { usage: { totalTokens: number } } }).data;
    const listed = (await store.list()).find((s) => s.id === fork.id);
    expect(listed).toMatchObject({ usage: { totalTokens: usage.totalTokens } });
    expect(usage.totalTokens).toBeGreaterThan(0);
    expect(fork.record).toMatchObject({
      state: 'Interrupted',
      turns: 1,
      meta: { forkedFrom: { session: 'orig', seq: seq.lastResult } },
    });

    // Continued: restored from its transcript with the recorded results, then live after the cut.
    // The scripted server answers by the number of assistant messages in the request: one so far.
    const server = await serve({
      turns: [
        { content: 'not asked' },
        { toolCalls: [{ id: 'call_c', name: 'echo', arguments: { text: 'c' } }] },
        { content: 'forked answer' },
      ],
    });
    const echo = countingEcho();
    const agent = agentAt(server, { tools: [echo.tool], store, session: fork.id });
    await agent.ready();
    expect(agent.state).toBe('Interrupted');
    expect(echo.runs).toEqual([]);
    const result = await agent.resume();
    expect(result.response).toBe('forked answer');
    expect(echo.runs).toEqual(['c']);
    const first = server.requests[0]!.messages.map((m) => [m.role, m.content]);
    expect(first).toEqual([
      ['system', 'be nice'],
      ['user', 'go'],
      ['assistant', null],
      ['tool', 'echo: a'],
      ['tool', 'echo: b'],
    ]);
    await agent.flush();
    agent.stop();
    expect(await stored(store, 'orig')).toBe(before);
    const after = (await store.readTranscript(fork.id)).entries;
    expect(after.filter((e) => e.kind === 'tool_call_started').map((e) => e.seq > seq.lastResult)).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('writes a secret in the new system prompt or message redacted to the transcript, and runs with it exact', async () => {
    const store = await makeStore();
    const { seq } = await record(store);
    const key = 'sk-forkTESTabcdefghijklmnopqrstuvwxyz0123';
    const fork = await forkSession(store, 'orig', {
      at: seq.done,
      message: `use ${key} now`,
      system: `the key is ${key}`,
    });
    const written = JSON.stringify((await store.readTranscript(fork.id)).entries);
    expect(written).not.toContain(key);
    expect(written).toContain('use [REDACTED] now');
    expect(written).toContain('the key is [REDACTED]');

    const server = await serve({ turns: [{ content: 'x' }, { content: 'x' }, { content: 'done again' }] });
    const agent = agentAt(server, { tools: [countingEcho().tool], store, session: fork.id });
    await agent.ready();
    expect((await agent.resume()).response).toBe('done again');
    const sent = server.requests[0]!.messages.map((m) => m.content);
    expect(sent[0]).toBe(`the key is ${key}`);
    expect(sent.at(-1)).toBe(`use ${key} now`);
    await agent.flush();
    agent.stop();
    expect(JSON.stringify((await store.readTranscript(fork.id)).entries)).not.toContain(key);
  });

  it('appends the next user message, replaces the system prompt and remembers the model', async () => {
    const store = await makeStore();
    const { seq } = await record(store);
    const fork = await forkSession(store, 'orig', {
      at: seq.done,
      message: 'something else',
      system: 'be terse',
      model: 'other-model',
    });
    expect(fork.record).toMatchObject({ state: 'Interrupted', turns: 2, meta: { model: 'other-model' } });
    const forked = (await store.readTranscript(fork.id)).entries;
    expect(forked.at(-1)).toMatchObject({
      kind: 'message',
      message: { role: 'user', content: 'something else' },
    });
    expect(forked.find((e) => e.kind === 'message')).toMatchObject({ message: { content: 'be nice' } });
    expect(forked.find((e) => e.kind === 'event' && e.event === 'session_forked')).toMatchObject({
      data: { session: 'orig', seq: seq.done, model: 'other-model', system: 'be terse' },
    });

    const server = await serve({ turns: [{ content: 'x' }, { content: 'x' }, { content: 'terse answer' }] });
    const agent = agentAt(server, {
      tools: [countingEcho().tool],
      store,
      session: fork.id,
      model: 'other-model',
    });
    await agent.ready();
    expect((await agent.resume()).response).toBe('terse answer');
    // The conversation the model is asked with: the new prompt, the prefix, the new message.
    const conversation = ['be terse', 'go', null, 'echo: a', 'echo: b', 'done', 'something else'];
    expect(server.requests[0]!.messages.map((m) => m.content)).toEqual(conversation);
    await agent.flush();
    agent.stop();
    // Exported as OpenAI messages, the fork shows the prompt it ran with.
    const exported = trajectoryMessages((await store.readTranscript(fork.id)).entries);
    expect(exported.map((m) => m.content)).toEqual([...conversation, 'terse answer']);
    // A later restore keeps the replaced system prompt (the record holds it; the transcript keeps the original's).
    const again = agentAt(server, { store, session: fork.id });
    await again.ready();
    expect(again.messages[0]).toEqual({ role: 'system', content: 'be terse' });
    again.stop();
    // So does a fork of the fork that does not replace it.
    const cut = forked.at(-1)!.seq;
    const second = await forkSession(store, fork.id, { at: cut });
    const twice = agentAt(server, { store, session: second.id });
    await twice.ready();
    expect(twice.messages.map((m) => m.content)).toEqual(conversation);
    twice.stop();
    expect(trajectoryMessages((await store.readTranscript(second.id)).entries)[0]).toEqual({
      role: 'system',
      content: 'be terse',
    });
  });

  it('refuses a cut that is not a rest point, naming why, and writes nothing', async () => {
    const store = await makeStore();
    const { seq } = await record(store);
    const sessions = (await store.list()).length;
    const cases: [number, RegExp][] = [
      [
        seq.started,
        /not at seq \d+: it is at a tool call that started and has no result \("echo", call \S+, started at seq \d+\)/,
      ],
      [
        seq.modelCall,
        /it is at a model call that started and has no result \(the model_call entry at seq \d+/,
      ],
      [seq.batch, /it is inside a tool batch \(the assistant message at seq \d+ asked for 2 call\(s\)/],
      [seq.firstResult, /it is inside a tool batch \(the assistant message at seq \d+ asked for 1 call\(s\)/],
      [1, /there is no user message before it/],
      [999, /there is no entry seq 999 \(the transcript has seq 1 to \d+\)/],
      [0, /"at" must be an entry seq \(1 or more\), got 0/],
      [1.5, /"at" must be an entry seq/],
    ];
    for (const [at, reason] of cases) {
      const error = await forkSession(store, 'orig', { at }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForkError);
      expect((error as Error).message).toMatch(/^cannot fork session "orig": /);
      expect((error as Error).message).toMatch(reason);
    }
    await expect(forkSession(store, 'ghost', { at: 3 })).rejects.toThrow(
      'cannot fork session "ghost": there is no such session',
    );
    await expect(forkSession(store, 'orig', { at: seq.go, id: 'orig' })).rejects.toThrow(
      'session "orig" exists already',
    );
    await expect(forkSession(store, 'orig', { at: seq.go, message: ' ' })).rejects.toThrow(
      '"message" must be a non-empty string',
    );
    expect((await store.list()).length).toBe(sessions);
  });
  it('leaves nothing when its record write fails, so the same id can be retried', async () => {
    const store = await makeStore();
    const { seq } = await record(store);
    const sessions = (await store.list()).length;
    const failing = failingFirstSave(store);
    const error = await forkSession(failing, 'orig', { at: seq.done, id: 'retried' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ForkError);
    expect((error as Error).message).toBe(
      'cannot fork session "orig": writing session "retried" failed (record write refused); nothing of it was kept',
    );
    expect(await store.load('retried')).toBeUndefined();
    expect((await store.readTranscript('retried')).entries).toEqual([]);
    expect((await store.list()).length).toBe(sessions);

    const fork = await forkSession(failing, 'orig', { at: seq.done, id: 'retried' });
    expect(fork.id).toBe('retried');
    expect(fork.record.state).toBe('Completed');
    expect((await store.readTranscript('retried')).entries.at(-1)).toMatchObject({ event: 'session_forked' });
  });
});

describe('a fork as a recording', () => {
  it('replays with ok: true up to its cut, no tool run', async () => {
    const store = new FileSessionStore({ dir: await testDir('fork-replay-') });
    const { seq } = await record(store);
    const fork = await forkSession(store, 'orig', { at: seq.done });
    const echo = countingEcho();
    const replay = await replaySession(await Cassette.fromSession(store, fork.id), {
      agent: { tools: [echo.tool], instructions: 'be nice' },
    });
    expect(replay.divergence).toBeUndefined();
    expect(replay.ok).toBe(true);
    expect(replay.turns.map((t) => [t.input, t.result.response])).toEqual([['go', 'done']]);
    expect(echo.runs).toEqual([]);
  });
});

describe('a hostile transcript', () => {
  it('is refused, naming the field, when its prefix does not rebuild, and nothing is written', async () => {
    const store = new MemorySessionStore();
    await record(store);
    const { snapshot } = (await store.load('orig'))!;
    await store.appendTranscript('bad', [
      { kind: 'message', message: { role: 'user', content: 'go' } },
      {
        kind: 'message',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 7, type: 'function', function: { name: 'echo', arguments: '{}' } }],
        } as never,
      },
      { kind: 'message', message: { role: 'tool', tool_call_id: '7', content: 'r' } },
    ]);
    await store.save({ id: 'bad', state: 'Completed', snapshot });
    await expect(forkSession(store, 'bad', { at: 3 })).rejects.toThrow(
      /^cannot fork session "bad": its transcript up to seq 3 does not rebuild \(snapshot\.context\.messages\.1/,
    );
    expect((await store.list()).map((s) => s.id).sort()).toEqual(['bad', 'orig']);
  });
});

describe('fork points', () => {
  it('are the user messages, the last result of each batch and the final answers', async () => {
    const store = new FileSessionStore({ dir: await testDir('fork-points-') });
    const { entries, seq } = await record(store);
    expect(forkPoints(entries)).toEqual([seq.go, seq.lastResult, seq.done, seq.again, entries.at(-1)!.seq]);
    for (const entry of entries) {
      const allowed = forkCutProblem(entries, entry.seq) === undefined;
      if (entry.kind === 'message') expect(allowed).toBe(forkPoints(entries).includes(entry.seq));
    }
  });

  it('refuses a cut after a tool call that finished before the assistant message asking for it was written', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const entries: TranscriptEntry[] = [
      { seq: 1, at, kind: 'message', message: { role: 'user', content: 'go' } },
      { seq: 2, at, kind: 'tool_call_started', toolCallId: 'c1', name: 'echo', args: {} },
      {
        seq: 3,
        at,
        kind: 'tool_call_finished',
        toolCallId: 'c1',
        name: 'echo',
        result: 'r',
        isError: false,
        durationMs: 1,
      },
    ];
    expect(forkCutProblem(entries, 3)).toBe(
      'it is inside a tool batch ("echo", call c1, ran from seq 2 for an assistant message after the cut)',
    );
  });
});
