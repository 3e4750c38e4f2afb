/**
 * `replaySession`: a session recorded through the real SDK against the scripted server into a file
 * store, run again against a server answering from the recording. Strict and sequential matching, the
 * divergence's JSON path, recorded and live tools, approvals, and a transcript older than model_call.
 */
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
  });
});
