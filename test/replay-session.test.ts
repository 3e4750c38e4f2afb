/**
 * `replaySession`: a session recorded through the real SDK against the scripted server into a file
 * store, run again against a server answering from the recording. Strict and sequential matching, the
 * divergence's JSON path, recorded and live tools, approvals, and a transcript older than model_call.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Cassette, replaySession } from '../src/evals/index.js';
import { type AgentOptions, defineTool, FileSessionStore, type Tool } from '../src/index.js';
import { agentAt, serve, testDir } from './support/harness.js';

/** Counts its runs; answers with the text and the run count, so a live run differs only when asked to. */
function echoTool(prefix = 'echo') {
  const runs = { count: 0 };
  const tool = defineTool({
    name: 'echo',
    description: 'echoes a text',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      runs.count++;
      return `${prefix}: ${text}`;
    },
  });
  return { tool, runs };
}

const lookup = defineTool({
  name: 'lookup',
  description: 'looks a key up',
  parameters: z.object({ key: z.string() }),
  needsApproval: true,
  execute: ({ key }) => `value of ${key}`,
});

const INSTRUCTIONS = 'You echo things.';

/** The agent as recorded (the replays change one thing of it). */
function agentOptions(
  tools: Tool[],
  change: Partial<AgentOptions> = {},
): Omit<AgentOptions, 'baseURL' | 'apiKey'> {
  return {
    instructions: INSTRUCTIONS,
    tools,
    model: 'rec-model',
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    ...change,
  };
}

/**
 * Records session `rec`: turn 1 calls echo (the first attempt fails once with a 503), then answers;
 * turn 2 calls lookup (approved) and answers.
 */
async function record(): Promise<{ file: string; store: FileSessionStore; dir: string }> {
  const server = await serve({
    turns: [
      { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }], error: { status: 503 }, times: 1 },
      { content: 'echoed a' },
      { toolCalls: [{ id: 'call_lookup', name: 'lookup', arguments: { key: 'k' } }] },
      { content: 'k is known' },
    ],
  });
  const dir = await testDir('replay-');
  const store = new FileSessionStore({ dir });
  const { tool } = echoTool();
  const agent = agentAt(server, { ...agentOptions([tool, lookup]), store, session: 'rec' });
  agent.on('approval_requested', ({ pending }) => {
    for (const call of pending) queueMicrotask(() => agent.approve(call.toolCallId));
  });
  await agent.send('echo a');
  await agent.send('look k up');
  await agent.flush();
  agent.stop();
  return { file: store.files('rec').transcript, store, dir };
}

/** A transcript entry as a test edits it. */
interface LooseEntry {
  event?: string;
  data?: Record<string, unknown>;
  message?: { role?: string; content?: unknown; tool_calls?: unknown };
}

/**
 * A copy of the recording at `file` beside it, named `name`, with each entry passed through `edit`
 * (an entry it returns undefined for is left out); the copy's path.
 */
async function editedCopy(
  file: string,
  name: string,
  edit: (entry: LooseEntry) => LooseEntry | undefined,
): Promise<string> {
  const entries = (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const copy = path.join(path.dirname(file), name);
  await writeFile(
    copy,
    entries
      .flatMap((e) => {
        const kept = edit(e);
        return kept ? [JSON.stringify(kept)] : [];
      })
      .join('\n'),
  );
  return copy;
}

describe('replaySession', () => {
  it('replays a recorded session with ok: true, nothing run, the recorded ids kept', async () => {
    const { file } = await record();
    const cassette = await Cassette.fromFile(file);
    const { tool, runs } = echoTool();
    const replay = await replaySession(cassette, { agent: agentOptions([tool, lookup]) });
    expect(replay.divergence).toBeUndefined();
    expect(replay.warnings).toEqual([]);
    expect(replay.ok).toBe(true);
    expect(runs.count).toBe(0);
    expect(replay.turns.map((t) => [t.input, t.result.response])).toEqual([
      ['echo a', 'echoed a'],
      ['look k up', 'k is known'],
    ]);
    expect(replay.trajectory).toEqual([
      { name: 'echo', args: { text: 'a' }, id: expect.any(String) },
      { name: 'lookup', args: { key: 'k' }, id: 'call_lookup' },
    ]);
    expect(replay.result?.response).toBe('k is known');
    expect(replay.modelCalls).toBe(4);
  });

  it('strict: a changed system prompt diverges at the first model call, naming messages[0].content', async () => {
    const cassette = await Cassette.fromFile((await record()).file);
    const { tool } = echoTool();
    const replay = await replaySession(cassette, {
      agent: agentOptions([tool, lookup], { instructions: 'You echo things loudly.' }),
    });
    expect(replay.ok).toBe(false);
    expect(replay.divergence).toMatchObject({
      kind: 'request',
      step: 1,
      turn: 1,
      iteration: 1,
      path: 'messages[0].content',
      recorded: INSTRUCTIONS,
      actual: 'You echo things loudly.',
      approximate: false,
    });
    expect(replay.divergence?.message).toContain('messages[0].content');
    // The miss is answered with an error the agent does not retry, and the replay stops there.
    expect(replay.turns).toHaveLength(1);
    expect(replay.result?.success).toBe(false);
  });

  it('strict: a changed tool schema diverges at the first model call, naming the changed property', async () => {
    const cassette = await Cassette.fromFile((await record()).file);
    const changed = defineTool({
      name: 'echo',
      description: 'echoes a text',
      parameters: z.object({ path: z.string() }),
      execute: ({ path: p }) => p,
    });
    const replay = await replaySession(cassette, { agent: agentOptions([changed, lookup]) });
    expect(replay.divergence).toMatchObject({ kind: 'request', step: 1, approximate: false });
    const divergence = replay.divergence as { path: string };
    expect(divergence.path).toMatch(/^tools\[0\]\.function\.parameters\.properties\.(path|text)$/);
    expect(replay.divergence?.message).toContain(divergence.path);
  });

  it('sequential: the same changes go through, each differing call a warning', async () => {
    const cassette = await Cassette.fromFile((await record()).file);
    const { tool, runs } = echoTool();
    const replay = await replaySession(cassette, {
      agent: agentOptions([tool, lookup], { instructions: 'You echo things loudly.' }),
      match: 'sequential',
    });
    expect(replay.ok).toBe(true);
    expect(replay.warnings).toHaveLength(4);
    expect(replay.warnings[0]).toMatch(
      /^model call 1 \(turn 1, iteration 1\): the request differs at messages\[0\]\.content/,
    );
    expect(replay.turns.map((t) => t.result.response)).toEqual(['echoed a', 'k is known']);
    expect(runs.count).toBe(0);
  });

  it('tools live: the tools run; a result that differs from the recording is the divergence', async () => {
    const cassette = await Cassette.fromFile((await record()).file);
    const same = echoTool();
    const live = await replaySession(cassette, { agent: agentOptions([same.tool, lookup]), tools: 'live' });
    expect(live.divergence).toBeUndefined();
    expect(same.runs.count).toBe(1);

    const other = echoTool('ECHO');
    const changed = await replaySession(cassette, {
      agent: agentOptions([other.tool, lookup]),
      tools: 'live',
    });
    expect(other.runs.count).toBe(1);
    expect(changed.ok).toBe(false);
    expect(changed.divergence).toMatchObject({
      kind: 'tool_result',
      step: 1,
      name: 'echo',
      recorded: 'echo: a',
      actual: 'ECHO: a',
    });
  });

  it('approvals: answered as recorded, or by a function (a rejection reaches the model and diverges)', async () => {
    const cassette = await Cassette.fromFile((await record()).file);
    const asked: string[] = [];
    const { tool } = echoTool();
    const approved = await replaySession(cassette, {
      agent: agentOptions([tool, lookup]),
      approve: (call) => {
        asked.push(`${call.name} ${JSON.stringify(call.args)}`);
        return true;
      },
    });
    expect(asked).toEqual(['lookup {"key":"k"}']);
    expect(approved.ok).toBe(true);

    const rejected = await replaySession(cassette, {
      agent: agentOptions([tool, lookup]),
      approve: () => ({ approved: false, reason: 'not today' }),
    });
    expect(rejected.ok).toBe(false);
    expect(rejected.divergence).toMatchObject({
      kind: 'request',
      step: 4,
      path: expect.stringMatching(/^messages\[\d+\]\.content$/),
    });
    expect(JSON.stringify((rejected.divergence as { actual: unknown }).actual)).toContain('not today');
  });

  it('replays a transcript written before model_call entries by position', async () => {
    const { file } = await record();
    const old = await editedCopy(file, 'old.jsonl', (e) =>
      e.event === 'model_call' || e.event === 'request_settings' ? undefined : e,
    );
    const cassette = await Cassette.fromFile(old);
    const { tool } = echoTool();
    const replay = await replaySession(cassette, {
      agent: agentOptions([tool, lookup], { instructions: 'Changed, unnoticed without hashes.' }),
      match: 'strict',
    });
    expect(replay.ok).toBe(true);
    expect(replay.warnings).toEqual([
      `${old}: no model_call entries (an older transcript); matched by position`,
    ]);
    expect(replay.turns.map((t) => t.result.response)).toEqual(['echoed a', 'k is known']);
  });

  it('reports a run that makes fewer model calls than the recording', async () => {
    const { file } = await record();
    // Without the second user message, the replay has one turn to send: two calls of four.
    const cut = await editedCopy(file, 'cut.jsonl', (e) =>
      e.message?.content === 'look k up' ? undefined : e,
    );
    const { tool } = echoTool();
    const replay = await replaySession(await Cassette.fromFile(cut), { agent: agentOptions([tool, lookup]) });
    expect(replay.ok).toBe(false);
    expect(replay.divergence).toEqual({
      kind: 'calls',
      step: 3,
      recordedCalls: 4,
      actualCalls: 2,
      message: 'the recording has 4 model calls, the replay made 2',
    });
  });

  it('replays a retried call as live: the recorded failed attempt is served again', async () => {
    const cassette = await Cassette.fromFile((await record()).file);
    expect(cassette.calls[0]!.record?.attempt).toBe(2);
    const { tool } = echoTool();
    const once = await replaySession(cassette, {
      agent: agentOptions([tool, lookup], { retry: { maxAttempts: 1 } }),
    });
    expect(once.ok).toBe(false);
    expect(once.turns).toHaveLength(1);
    expect(once.divergence).toMatchObject({
      kind: 'error',
      step: 1,
      turn: 1,
      error: expect.stringMatching(/503/),
    });
    expect(once.divergence?.message).toMatch(/^turn 1 ended in an error the recording did not have: .*503/);
  });

  it('a saved session writes the request settings when they first appear and when they change, not per call', async () => {
    const { file } = await record();
    const entries = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const settings = entries.filter((e) => e.event === 'request_settings');
    expect(settings).toHaveLength(1);
    expect(settings[0].data.settings).toMatchObject({ model: 'rec-model', tool_choice: 'auto' });
    expect(
      settings[0].data.settings.tools.map((t: { function: { name: string } }) => t.function.name),
    ).toContain('echo');
    expect(entries.filter((e) => e.event === 'model_call').every((e) => e.data.settings === undefined)).toBe(
      true,
    );

    // The last call of a turn at its iteration limit goes without tools (tool_choice "none"): a change.
    const server = await serve({
      turns: [
        { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] },
        { content: 'stopped' },
        { content: 'again' },
      ],
    });
    const store = new FileSessionStore({ dir: await testDir('replay-settings-') });
    const agent = agentAt(server, {
      ...agentOptions([echoTool().tool]),
      store,
      session: 'lim',
      limits: { maxIterations: 1 },
    });
    const heard: unknown[] = [];
    agent.on('model_call', (event) => heard.push(event.settings));
    await agent.send('go');
    await agent.send('more');
    // Listeners (and audit logs) get the call's record without the schemas.
    expect(heard).toEqual([undefined, undefined, undefined]);
    await agent.flush();
    agent.stop();
    const written = (await store.readTranscript('lim')).entries.flatMap((e) =>
      e.kind === 'event' && (e.event === 'request_settings' || e.event === 'model_call')
        ? [
            e.event === 'model_call'
              ? 'call'
              : (e.data as { settings: { tool_choice: string } }).settings.tool_choice,
          ]
        : [],
    );
    expect(written).toEqual(['auto', 'call', 'none', 'call', 'auto', 'call']);
    // Replayed, the same session matches, and names the settings of each call.
    const cassette = await Cassette.fromSession(store, 'lim');
    expect(cassette.calls.map((c) => c.settings?.settings.tool_choice)).toEqual(['auto', 'none', 'auto']);
    const replay = await replaySession(cassette, {
      agent: { ...agentOptions([echoTool().tool]), limits: { maxIterations: 1 } },
    });
    expect(replay.divergence).toBeUndefined();
  });

  it('a hostile recording (usage that is no count, tool_calls that is no list) replays without throwing', async () => {
    const { file } = await record();
    const hostile = await editedCopy(file, 'hostile.jsonl', (e) => {
      if (e.event === 'model_call' && e.data) e.data.usage = { promptTokens: 'many', completionTokens: -1 };
      if (e.message?.role === 'assistant' && e.message.content === 'echoed a') e.message.tool_calls = 'x';
      return e;
    });
    const replay = await replaySession(await Cassette.fromFile(hostile), {
      agent: agentOptions([echoTool().tool, lookup]),
    });
    expect(replay.turns.map((t) => t.result.response)).toEqual(['echoed a', 'k is known']);
    expect(replay.ok).toBe(true);
  });

  it('replays a session recorded over the Responses API (reasoning items included)', async () => {
    const server = await serve({
      turns: [
        { reasoning: 'echo first', toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] },
        { reasoning: 'then answer', content: 'echoed a' },
      ],
    });
    const store = new FileSessionStore({ dir: await testDir('replay-responses-') });
    const agent = agentAt(server, {
      ...agentOptions([echoTool().tool]),
      api: 'responses',
      store,
      session: 'resp',
    });
    await agent.send('echo a');
    await agent.flush();
    agent.stop();
    const cassette = await Cassette.fromSession(store, 'resp');
    const same = await replaySession(cassette, { agent: agentOptions([echoTool().tool]) });
    expect(same.warnings).toEqual([]);
    expect(same.divergence).toBeUndefined();
    const changed = await replaySession(cassette, {
      agent: agentOptions([echoTool().tool], { instructions: 'Something else.' }),
    });
    expect(changed.divergence).toMatchObject({
      kind: 'request',
      step: 1,
      path: 'input[0].content',
      recorded: INSTRUCTIONS,
      actual: 'Something else.',
      approximate: false,
    });
  });

  it('approvals as recorded: a recorded rejection is given again, and the replay matches', async () => {
    const server = await serve({
      turns: [
        { toolCalls: [{ id: 'call_no', name: 'lookup', arguments: { key: 'k' } }] },
        { content: 'declined' },
      ],
    });
    const store = new FileSessionStore({ dir: await testDir('replay-reject-') });
    const agent = agentAt(server, { ...agentOptions([lookup]), store, session: 'no' });
    agent.on('approval_requested', ({ pending }) => {
      for (const call of pending) queueMicrotask(() => agent.reject(call.toolCallId, 'not now'));
    });
    await agent.send('look k up');
    await agent.flush();
    agent.stop();
    const cassette = await Cassette.fromSession(store, 'no');
    const replay = await replaySession(cassette, { agent: agentOptions([lookup]) });
    expect(replay.warnings).toEqual([]);
    expect(replay.ok).toBe(true);
    expect(replay.turns[0]!.result.messages.find((m) => m.role === 'tool')?.content).toContain('not now');
    // Approving instead changes what the model is told: the next request differs.
    const approved = await replaySession(cassette, { agent: agentOptions([lookup]), approve: () => true });
    expect(approved.divergence).toMatchObject({ kind: 'request', step: 2 });
  });
});
