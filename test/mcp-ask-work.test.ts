/**
 * The work an `ask_<agent>` call does beyond the turn, counted (not timed; issue 35's figures are in
 * bench/README.md): the MCP SDK's own client over its in-memory transport calls the tool, the turn goes
 * through the real `openai` SDK to the scripted server. A call without a progressToken has the machine
 * build no event that only progress reads.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, MemorySessionStore } from '../src/index.js';
import { createMcpServer } from '../src/server/mcp/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { workSnapshot } from '../src/work-counters.js';
import { connectInMemory } from './support/mcp-agent-server.js';
import { echoTwiceScenario, progressEcho } from './support/progress-echo.js';

const open: { models: ScriptedServer[]; clients: Client[] } = { models: [], clients: [] };
afterEach(async () => {
  await Promise.all(open.clients.splice(0).map((c) => c.close().catch(() => {})));
  await Promise.all(open.models.splice(0).map((m) => m.close()));
});

/** One `ask_echoer` call on a new session; the events built while it ran, and what progress it got. */
async function askWork(withProgress: boolean): Promise<{ events: number; progress: string[] }> {
  const model = await startScriptedServer({ scenario: echoTwiceScenario });
  open.models.push(model);
  const server = createMcpServer({
    name: 'echoer',
    agent: () => ({
      instructions: 'You echo.',
      tools: [progressEcho],
      baseURL: model.url,
      apiKey: 'test-key',
    }),
    store: new MemorySessionStore(),
  });
  const client = await connectInMemory(server, 'work');
  open.clients.push(client);
  const progress: string[] = [];
  const before = workSnapshot().events;
  const result = (await client.callTool(
    { name: 'ask_echoer', arguments: { message: 'go' } },
    undefined,
    withProgress ? { onprogress: (p) => progress.push(p.message ?? '') } : {},
  )) as CallToolResult;
  const events = workSnapshot().events - before;
  expect(result.isError).toBeUndefined();
  expect(result.structuredContent).toMatchObject({ response: 'done', iterations: 3 });
  return { events, progress };
}

/** The same turn through `agent.send()` on a new agent and session of a store: the events built. */
async function directWork(): Promise<number> {
  const model = await startScriptedServer({ scenario: echoTwiceScenario });
  open.models.push(model);
  const before = workSnapshot().events;
  const agent = createAgent({
    instructions: 'You echo.',
    tools: [progressEcho],
    baseURL: model.url,
    apiKey: 'test-key',
    store: new MemorySessionStore(),
    session: 'direct',
  });
  const result = await agent.send('go');
  await agent.close();
  expect(result.response).toBe('done');
  return workSnapshot().events - before;
}

describe('the work of an ask_<agent> call, counted', () => {
  it('without a progressToken: what agent.send() on a saved session builds, and the calls’ ends', async () => {
    const direct = await directWork();
    // 3 `model_call` (the transcript records them), `turn_end` (the agent settles send() on it). Before
    // init36 one more: entering Initializing's `state_change`, built before the effects were bound (the
    // machine's context now starts in Initializing: entering it emits nothing).
    expect(direct).toBe(3 + 1);
    const { events, progress } = await askWork(false);
    expect(progress).toEqual([]);
    // And a `tool_call_end` per call (the structured content's status of each call). No `iteration`,
    // `tool_call_start` or `tool_progress`: only progress notifications read them.
    expect(events).toBe(direct + 2);
  });

  it('with a progressToken: the events progress reads are built too', async () => {
    const { events, progress } = await askWork(true);
    expect(progress).toEqual([
      'thinking (model call 1)',
      'running echo',
      'echo: echoing a (1/1)',
      'echo done',
      'thinking (model call 2)',
      'running echo',
      'echo: echoing b (1/1)',
      'echo done',
      'thinking (model call 3)',
    ]);
    // On top of the above: 3 `iteration`, 2 `tool_call_start`, 2 `tool_progress`.
    expect(events).toBe(3 + 1 + 2 + 3 + 2 + 2);
  });
});
