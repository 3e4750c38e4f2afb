import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { restateAgent, restateClient } from '../src/engines/restate/index.js';
import { forkSession } from '../src/evals/fork-session.js';
import { Cassette, replaySession } from '../src/evals/index.js';
import { defineTool, FileSessionStore } from '../src/index.js';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { engineTestTools, eventually } from './support/engine-tests.js';
import { deferred } from './support/harness.js';
import {
  type RestateServer,
  registeredEndpoint,
  restateBinaryFor,
  startRestateServer,
} from './support/restate-server.js';

// The agent served by a real restate-server (from the npm package) on loopback ports, the model by the
// scripted server through the real SDK. Each test uses its own session ids.

// The tests want the SDK's warnings only.
const binary = restateBinaryFor('WARN');

const runs: string[] = [];
let gate = deferred();
const { lookup, refund } = engineTestTools(runs);
const slow = defineTool({
  name: 'slow',
  description: 'waits for the test',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    runs.push('slow');
    await Promise.race([gate.promise, new Promise((r) => ctx.signal.addEventListener('abort', r))]);
    return 'slow done';
  },
});

/** One scripted server per session: the scenario each session's agent talks to. */
const scenarios = new Map<string, ScriptedServer>();

describe.skipIf('missing' in binary)('agentloop/restate on a real restate-server', () => {
  let server: RestateServer;
  let endpoint: { url: string; close(): Promise<void> };
  let client: ReturnType<typeof restateClient>;
  let kept: FileSessionStore;

  beforeAll(async () => {
    server = await startRestateServer();
    const agent = restateAgent('support', (sessionId) => {
      const model = scenarios.get(sessionId);
      if (!model) throw new Error(`no scenario for ${sessionId}`);
      return {
        baseURL: model.url,
        apiKey: 'test-key',
        tools: [lookup, refund, slow],
        limits: { maxIterations: sessionId.startsWith('limit') ? 2 : 50 },
      };
    });
    // The same agent with its sessions kept in a file store as well (real files in a temp folder).
    kept = new FileSessionStore({ dir: await mkdtemp(path.join(tmpdir(), 'restate-kept-')) });
    const keeping = restateAgent(
      'kept',
      (sessionId) => ({
        name: 'kept',
        baseURL: scenarios.get(sessionId)!.url,
        apiKey: 'test-key',
        tools: [lookup, refund],
      }),
      { store: kept },
    );
    // Another agent on the same store: the sessions of "kept" are not its own.
    const other = restateAgent(
      'other',
      (sessionId) => ({ name: 'other', baseURL: scenarios.get(sessionId)!.url, apiKey: 'test-key' }),
      { store: kept },
    );
    endpoint = await registeredEndpoint(server, agent, keeping, other);
    client = restateClient({ url: server.ingress, agent: 'support' });
  }, 60_000);

  afterAll(async () => {
    await endpoint?.close();
    await server?.stop();
    await Promise.all([...scenarios.values()].map((s) => s.close()));
  });

  const session = async (id: string, scenario: Scenario) => {
    scenarios.set(id, await startScriptedServer({ scenario }));
    return scenarios.get(id)!;
  };

  it('runs a text turn and keeps the conversation for the next one', async () => {
    const model = await session('text-1', { turns: [{ content: 'hello there' }, { content: 'again' }] });
    const first = await client.send('text-1', 'hi');
    expect(first).toMatchObject({ success: true, response: 'hello there', state: 'Completed' });
    const second = await client.send('text-1', 'once more');
    expect(second.response).toBe('again');
    // The second request carries the first turn: the snapshot was kept in Restate's state.
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(await client.result('text-1')).toMatchObject({ response: 'again' });
    expect(await client.state('text-1')).toMatchObject({ state: 'Completed', turn: 2, pendingApprovals: [] });
  });

  it('runs parallel tool calls as steps, each once', async () => {
    runs.length = 0;
    await session('tools-1', {
      turns: [
        {
          toolCalls: [
            { name: 'lookup', arguments: { key: 'a' } },
            { name: 'lookup', arguments: { key: 'b' } },
          ],
        },
        { content: 'both found' },
      ],
    });
    const result = await client.send('tools-1', 'look both up');
    expect(result.response).toBe('both found');
    expect(runs.sort()).toEqual(['lookup a', 'lookup b']);
  });

  it('waits for an approval answered later through the ingress, then runs the call once', async () => {
    runs.length = 0;
    await session('approve-1', {
      turns: [{ toolCalls: [{ name: 'refund', arguments: { order: 'o-7' } }] }, { content: 'refunded' }],
    });
    await client.post('approve-1', 'refund o-7');
    const waiting = await eventually(async () => {
      const view = await client.state('approve-1');
      return view.state === 'WaitingApproval' ? view : undefined;
    });
    expect(waiting.pendingApprovals.map((p) => p.name)).toEqual(['refund']);
    expect(runs).toEqual([]);
    await expect(client.approve('approve-1', 'no-such-call')).rejects.toThrow(
      /no call "no-such-call" waits for approval in session "approve-1" of agent "support"/,
    );
    expect(await client.approve('approve-1', waiting.pendingApprovals[0]!.toolCallId)).toBe(true);
    const result = await eventually(() => client.result('approve-1').then((r) => r ?? undefined));
    expect(result.response).toBe('refunded');
    expect(runs).toEqual(['refund o-7']);
  });

  it('interrupts a turn waiting for approval: the lone awakeable is cancelled, the call never runs', async () => {
    runs.length = 0;
    await session('interrupt-approval', {
      turns: [{ toolCalls: [{ name: 'refund', arguments: { order: 'o-9' } }] }, { content: 'went on' }],
    });
    await client.post('interrupt-approval', 'refund o-9');
    await eventually(async () => {
      const view = await client.state('interrupt-approval');
      return view.state === 'WaitingApproval' ? view : undefined;
    });
    expect(await client.interrupt('interrupt-approval')).toBe(true);
    const result = await eventually(() => client.result('interrupt-approval').then((r) => r ?? undefined));
    expect(result).toMatchObject({ state: 'Interrupted', terminateReason: 'interrupted' });
    expect(runs).toEqual([]);
    expect((await client.send('interrupt-approval', 'go on')).response).toBe('went on');
  });

  it('interrupts a running turn: it ends Interrupted and the next message goes on', async () => {
    runs.length = 0;
    gate = deferred();
    await session('interrupt-1', {
      turns: [{ toolCalls: [{ name: 'slow', arguments: {} }] }, { content: 'after the interrupt' }],
    });
    await client.post('interrupt-1', 'go slow');
    await eventually(async () => (runs.includes('slow') ? true : undefined));
    expect(await client.interrupt('interrupt-1')).toBe(true);
    const result = await eventually(() => client.result('interrupt-1').then((r) => r ?? undefined));
    expect(result).toMatchObject({ state: 'Interrupted', terminateReason: 'interrupted' });
    gate.resolve();
    expect(await client.interrupt('interrupt-1')).toBe(false);
    expect((await client.send('interrupt-1', 'go on')).response).toBe('after the interrupt');
  });

  it('interrupts a running tool batch (its calls awaited together): it ends Interrupted and goes on', async () => {
    runs.length = 0;
    gate = deferred();
    await session('interrupt-batch', {
      turns: [
        {
          toolCalls: [
            { name: 'slow', arguments: {} },
            { name: 'slow', arguments: {} },
          ],
        },
        { content: 'after the batch' },
      ],
    });
    await client.post('interrupt-batch', 'go slow twice');
    await eventually(async () => (runs.filter((r) => r === 'slow').length === 2 ? true : undefined));
    expect(await client.interrupt('interrupt-batch')).toBe(true);
    const result = await eventually(() => client.result('interrupt-batch').then((r) => r ?? undefined));
    expect(result).toMatchObject({ state: 'Interrupted', terminateReason: 'interrupted' });
    gate.resolve();
    expect((await client.send('interrupt-batch', 'go on')).response).toBe('after the batch');
    // Each call ran once: the interrupt did not run the batch again.
    expect(runs.filter((r) => r === 'slow')).toHaveLength(2);
  });

  it('ends a turn at the iteration limit with a final answer', async () => {
    await session('limit-1', {
      turns: [
        { toolCalls: [{ name: 'lookup', arguments: { key: 'x' } }] },
        { toolCalls: [{ name: 'lookup', arguments: { key: 'y' } }] },
        { content: 'stopped at the limit' },
      ],
    });
    const result = await client.send('limit-1', 'keep looking');
    expect(result.terminateReason).toBe('max_iterations');
  });

  it('keeps the sessions in the store it was given: listed, replayed and forked like any other', async () => {
    runs.length = 0;
    await session('kept-1', {
      turns: [
        { toolCalls: [{ name: 'lookup', arguments: { key: 'k' } }] },
        { toolCalls: [{ name: 'refund', arguments: { order: 'o-9' } }] },
        { content: 'refunded o-9' },
        { content: 'second turn' },
      ],
    });
    const keptClient = restateClient({ url: server.ingress, agent: 'kept' });
    await keptClient.post('kept-1', 'refund o-9');
    const waiting = await eventually(async () => {
      const view = await keptClient.state('kept-1');
      return view.state === 'WaitingApproval' ? view : undefined;
    });
    // Copied at the approval wait: the store shows where the session stands.
    const atWait = await eventually(async () => {
      const record = await kept.load('kept-1');
      return record?.state === 'WaitingApproval' ? record : undefined;
    });
    expect(atWait.agentName).toBe('kept');
    await keptClient.approve('kept-1', waiting.pendingApprovals[0]!.toolCallId);
    await eventually(() => keptClient.result('kept-1').then((r) => r ?? undefined));
    expect((await keptClient.send('kept-1', 'and now?')).response).toBe('second turn');
    expect(runs).toEqual(['lookup k', 'refund o-9']);

    const listed = await kept.list();
    expect(listed).toMatchObject([{ id: 'kept-1', state: 'Completed', turns: 2, agentName: 'kept' }]);
    const { entries } = await kept.readTranscript('kept-1');
    // Each entry once: consecutive seqs, each message once, no restore noise from the turns' starts.
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    const messages = entries.flatMap((e) => (e.kind === 'message' ? [e.message.role] : []));
    expect(messages).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(entries.filter((e) => e.kind === 'event' && e.event === 'session_restored')).toEqual([]);
    expect(entries.filter((e) => e.kind === 'tool_call_finished').map((e) => e.name)).toEqual([
      'lookup',
      'refund',
    ]);

    // Replayed against its recording: the same answers, no tool run.
    const replay = await replaySession(await Cassette.fromSession(kept, 'kept-1'), {
      agent: { tools: [lookup, refund] },
    });
    expect(replay.divergence).toBeUndefined();
    expect(replay.turns.map((t) => t.result.response)).toEqual(['refunded o-9', 'second turn']);
    expect(runs).toEqual(['lookup k', 'refund o-9']);

    // Forked after the first turn's answer.
    const cut = entries.find(
      (e) => e.kind === 'message' && e.message.role === 'assistant' && e.message.content === 'refunded o-9',
    )!;
    const fork = await forkSession(kept, 'kept-1', { at: cut.seq, id: 'kept-1-fork' });
    expect(fork.record).toMatchObject({ state: 'Completed', turns: 1 });

    // A message to this session through another agent on the same store is refused, naming both.
    const otherClient = restateClient({ url: server.ingress, agent: 'other' });
    await expect(otherClient.send('kept-1', 'hello')).rejects.toThrow(
      /session "kept-1" in the store belongs to agent "kept", not "other"/,
    );
    expect((await kept.readTranscript('kept-1')).entries).toHaveLength(entries.length);
  });

  it('refuses an answer for a session that never ran, naming the call, session and agent', async () => {
    await expect(client.approve('never-1', 'call_0_0')).rejects.toThrow(
      /no call "call_0_0" waits for approval in session "never-1" of agent "support"/,
    );
    await expect(client.reject('never-1', 'call_0_0')).rejects.toThrow(/HTTP 404/);
  });

  it('refuses a message without text, naming the session and agent', async () => {
    await expect(client.send('bad-1', '')).rejects.toThrow(
      /send to session "bad-1" of agent "support" needs a message/,
    );
  });
});

describe('restateClient without a server', () => {
  it('names the engine and the address it could not reach', async () => {
    const client = restateClient({ url: 'http://127.0.0.1:9', agent: 'support' });
    await expect(client.send('s', 'hi')).rejects.toThrow(
      /cannot reach Restate at http:\/\/127\.0\.0\.1:9 \(send on session "s"\)/,
    );
  });
});
