import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import { defineTool, FileSessionStore, MemorySessionStore, SessionStoreError } from '../src/index.js';
import { CrashableStore } from './support/crashable-store.js';
import { agentAt, assertToolCallsAnswered, deferred, serve, testDir } from './support/harness.js';
import { readRecordFile } from './support/record-file.js';

let dir: string;

beforeEach(async () => {
  dir = await testDir('agentloop-persist-');
});

/** A tool that counts its runs; `gate` holds it until the test lets it finish. */
function countingTool(
  name: string,
  runs: Map<string, number>,
  extra: Partial<{ idempotent: boolean; needsApproval: boolean; gate: Promise<void> }> = {},
) {
  return defineTool({
    name,
    description: name,
    parameters: z.object({ n: z.number().optional() }),
    ...(extra.idempotent ? { idempotent: true } : {}),
    ...(extra.needsApproval ? { needsApproval: true } : {}),
    execute: async () => {
      runs.set(name, (runs.get(name) ?? 0) + 1);
      if (extra.gate) await extra.gate;
      return `${name} done`;
    },
  });
}

describe('session persistence', () => {
  it('saves at rest points and continues the conversation in a new agent', async () => {
    const server = await serve({
      turns: [{ content: 'Hello! What is your name?' }, { content: 'Nice to meet you, Ada.' }],
    });
    const store = new FileSessionStore({ dir });
    const first = agentAt(server, { store, session: 'chat-1', name: 'greeter', instructions: 'Be brief.' });
    expect(first.sessionId).toBe('chat-1');
    const r1 = await first.send('hi');
    expect(r1.response).toBe('Hello! What is your name?');
    await first.flush();
    first.stop();

    const record = await store.load('chat-1');
    expect(record).toMatchObject({
      id: 'chat-1',
      state: 'Completed',
      agentName: 'greeter',
      title: 'hi',
      turns: 1,
    });
    const { entries } = await store.readTranscript('chat-1');
    expect(
      entries.filter((e) => e.kind === 'message').map((e) => e.kind === 'message' && e.message.role),
    ).toEqual(['system', 'user', 'assistant']);

    const second = agentAt(server, {
      store,
      session: 'chat-1',
      instructions: 'ignored: the session has its own',
    });
    await second.ready();
    expect(second.state).toBe('Completed');
    expect(second.restoreReport).toMatchObject({
      savedState: 'Completed',
      state: 'Completed',
      replayedMessages: 0,
    });
    const r2 = await second.send('Ada');
    expect(r2.response).toBe('Nice to meet you, Ada.');
    expect(server.requests[1]!.messages.map((m) => m.content)).toEqual([
      'Be brief.',
      'hi',
      'Hello! What is your name?',
      'Ada',
    ]);
    await second.flush();
    expect((await store.load('chat-1'))!.turns).toBe(2);
  });

  it('creates the session under the given id when the store has none, with the file store by default', async () => {
    const server = await serve({ turns: [{ content: 'ok' }] });
    const agent = agentAt(server, { session: 'fresh-1', store: new FileSessionStore({ projectRoot: dir }) });
    await agent.send('x');
    await agent.flush();
    const { record } = await readRecordFile(path.join(dir, '.agentloop', 'sessions', 'fresh-1'));
    expect(record).toMatchObject({ id: 'fresh-1', state: 'Completed' });
  });

  it('continues a session saved in WaitingApproval after a restart: approve, and the loop goes on', async () => {
    const runs = new Map<string, number>();
    const server = await serve({
      turns: [
        {
          toolCalls: [
            { name: 'lookup', arguments: {} },
            { name: 'deploy', arguments: {} },
          ],
        },
        { content: 'deployed' },
      ],
    });
    const tools = () => [countingTool('lookup', runs), countingTool('deploy', runs, { needsApproval: true })];
    const store = new FileSessionStore({ dir });
    const first = agentAt(server, { store, session: 'approve-1', tools: tools() });
    await first.ready();
    void first.send('deploy it');
    await waitFor(
      first.actor,
      (s) => s.matches('WaitingApproval') && Object.keys(s.context.batch.results).length === 1,
    );
    await first.flush();
    first.stop();
    expect((await store.load('approve-1'))!.state).toBe('WaitingApproval');

    const second = agentAt(server, { store, session: 'approve-1', tools: tools() });
    await second.ready();
    expect(second.state).toBe('WaitingApproval');
    expect(second.pendingApprovals.map((p) => p.name)).toEqual(['deploy']);
    const turn = new Promise((r) => second.on('turn_end', r));
    second.approve(second.pendingApprovals[0]!.toolCallId);
    await turn;
    expect(second.state).toBe('Completed');
    expect(second.context.response).toBe('deployed');
    expect(Object.fromEntries(runs)).toEqual({ lookup: 1, deploy: 1 });
    assertToolCallsAnswered(second.messages);
  });

  it('never runs a recorded call twice and reports a cut-off one, when the batch restarts on restore', async () => {
    const runs = new Map<string, number>();
    const hold = deferred();
    const server = await serve({
      turns: [
        {
          toolCalls: [
            { name: 'fast', arguments: {} },
            { name: 'slow', arguments: {} },
            { name: 'reread', arguments: {} },
            { name: 'deploy', arguments: {} },
          ],
        },
        { content: 'done' },
      ],
    });
    const release = deferred();
    const tools = (gates?: { fast: Promise<void>; hold: Promise<void> }) => [
      countingTool('fast', runs, gates ? { gate: gates.fast } : {}),
      countingTool('slow', runs, gates ? { gate: gates.hold } : {}),
      countingTool('reread', runs, { idempotent: true, ...(gates ? { gate: gates.hold } : {}) }),
      countingTool('deploy', runs, { needsApproval: true }),
    ];
    const inner = new FileSessionStore({ dir });
    const store = new CrashableStore(inner);
    const first = agentAt(server, {
      store,
      session: 'batch-1',
      tools: tools({ fast: release.promise, hold: hold.promise }),
      // The process dies right after fast's result is on disk, before the save that would follow.
      toolHooks: { afterRun: (result) => (result.name === 'fast' ? store.crash() : undefined) },
    });
    await first.ready();
    void first.send('go');
    await waitFor(first.actor, (s) => s.matches('WaitingApproval'));
    await first.flush();
    release.resolve();
    await waitFor(first.actor, (s) => Object.keys(s.context.batch.results).length === 1);
    first.stop();
    const saved = await inner.load('batch-1');
    expect(saved!.state).toBe('WaitingApproval');
    // The saved snapshot still has fast running: XState will start it again on restore.
    expect(JSON.stringify((saved!.snapshot as { children: object }).children)).toContain('"name":"fast"');

    const second = agentAt(server, { store: inner, session: 'batch-1', tools: tools() });
    await second.ready();
    expect(second.restoreReport!.calls.map((c) => `${c.name}:${c.outcome}`).sort()).toEqual([
      'deploy:rerun',
      'fast:recorded',
      'reread:rerun',
      'slow:interrupted',
    ]);
    const turn = new Promise((r) => second.on('turn_end', r));
    await waitFor(second.actor, (s) => Object.keys(s.context.batch.results).length === 3);
    second.approve(second.pendingApprovals[0]!.toolCallId);
    await turn;
    expect(Object.fromEntries(runs)).toEqual({ fast: 1, slow: 1, reread: 2, deploy: 1 });
    const slowResult = second.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_0_1');
    expect(slowResult?.content).toMatch(/interrupted.*may or may not have taken effect/);
    assertToolCallsAnswered(second.messages);
  });

  it('rebuilds a turn that crashed between rest points from the transcript and rests in Interrupted', async () => {
    const runs = new Map<string, number>();
    const hold = deferred();
    const server = await serve({
      turns: [
        {
          toolCalls: [
            { name: 'fast', arguments: {} },
            { name: 'slow', arguments: {} },
          ],
        },
        { content: 'picked up where we left off' },
      ],
    });
    const tools = (gate?: Promise<void>) => [
      countingTool('fast', runs),
      countingTool('slow', runs, gate ? { gate } : {}),
    ];
    const inner = new MemorySessionStore();
    const store = new CrashableStore(inner);
    const first = agentAt(server, { store, session: 'crash-1', tools: tools(hold.promise) });
    await first.ready();
    await first.ready();
    void first.send('go');
    await waitFor(
      first.actor,
      (s) => s.matches('ExecutingTool') && Object.keys(s.context.batch.results).length === 1,
    );
    await first.flush();
    store.crash();
    first.stop();
    expect((await inner.load('crash-1'))!.state).toBe('AwaitingInput');

    const second = agentAt(server, { store: inner, session: 'crash-1', tools: tools() });
    await second.ready();
    expect(second.state).toBe('Interrupted');
    expect(second.restoreReport).toMatchObject({
      savedState: 'AwaitingInput',
      state: 'Interrupted',
      replayedMessages: 2,
      calls: [
        { name: 'fast', outcome: 'recorded' },
        { name: 'slow', outcome: 'interrupted' },
      ],
    });
    assertToolCallsAnswered(second.messages);
    const result = await second.resume();
    expect(result.response).toBe('picked up where we left off');
    expect(Object.fromEntries(runs)).toEqual({ fast: 1, slow: 1 });
    const sent = server.requests.at(-1)!.messages;
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'fast done',
      expect.stringMatching(/interrupted/),
    ]);
    // The restore's decisions are in the transcript, so a second crash decides nothing twice.
    await second.flush();
    second.stop();
    const third = agentAt(server, { store: inner, session: 'crash-1', tools: tools() });
    await third.ready();
    expect(third.state).toBe('Completed');
    expect(third.messages).toEqual(second.messages);
  });

  it('keeps "always allow" across a restart', async () => {
    const runs = new Map<string, number>();
    const server = await serve({
      turns: [
        { toolCalls: [{ name: 'deploy', arguments: { n: 1 } }] },
        { content: 'one' },
        { toolCalls: [{ name: 'deploy', arguments: { n: 2 } }] },
        { content: 'two' },
      ],
    });
    const store = new MemorySessionStore();
    const first = agentAt(server, {
      store,
      session: 'always-1',
      tools: [countingTool('deploy', runs, { needsApproval: true })],
    });
    first.on('approval_requested', (e) => first.approve(e.pending[0]!.toolCallId, { always: true }));
    await first.send('deploy 1');
    await first.flush();
    first.stop();
    const second = agentAt(server, {
      store,
      session: 'always-1',
      tools: [countingTool('deploy', runs, { needsApproval: true })],
    });
    let asked = false;
    second.on('approval_requested', () => {
      asked = true;
    });
    const result = await second.send('deploy 2');
    expect(result.response).toBe('two');
    expect(asked).toBe(false);
    expect(runs.get('deploy')).toBe(2);
  });

  it('refuses a corrupt session with an error naming the file, and leaves the others alone', async () => {
    const server = await serve({ turns: [{ content: 'ok' }, { content: 'ok again' }] });
    const store = new FileSessionStore({ dir });
    const good = agentAt(server, { store, session: 'good-1' });
    await good.send('x');
    await good.flush();
    // A save torn by hand: what a disk error or an editor could leave.
    await mkdir(path.join(dir, 'bad-1'));
    await writeFile(path.join(dir, 'bad-1', 'snapshot.json'), '{"formatVersion":1,');
    const errors: string[] = [];
    const bad = agentAt(server, { store, session: 'bad-1' });
    bad.on('error', (e) => errors.push(e.message));
    await expect(bad.ready()).rejects.toBeInstanceOf(SessionStoreError);
    await expect(bad.send('y')).rejects.toThrow(/bad-1.*snapshot\.json/);
    expect(errors[0]).toMatch(/loading session "bad-1" failed: .*snapshot\.json/);
    good.stop();
    const again = agentAt(server, { store, session: 'good-1' });
    expect((await again.send('y')).response).toBe('ok again');
    const list = await store.list();
    expect(list.map((r) => [r.id, r.error === undefined])).toEqual(
      expect.arrayContaining([
        ['good-1', true],
        ['bad-1', false],
      ]),
    );
  });
});
