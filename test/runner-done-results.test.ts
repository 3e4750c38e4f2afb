import { describe, expect, it } from 'vitest';
import { createActor, type InspectionEvent, waitFor } from 'xstate';
import { z } from 'zod';
import {
  type AgentEffects,
  agentMachine,
  bindAgentEffects,
  defineTool,
  runToolsEffect,
  ToolRegistry,
} from '../src/index.js';
import type { ToolCallRequest } from '../src/tools/tool-call.js';
import { answerOutput, callsOutput } from './support/llm-outputs.js';

// A runner's done event records the result of the call that finished last (no TOOL.FINISHED for it),
// and a runner that rejects still gives its calls their one result each.

const call = (id: string, n: number): ToolCallRequest => ({
  id,
  name: 'echo',
  argsText: JSON.stringify({ n }),
  args: { n },
  needsApproval: false,
});

/** A model that asks for `calls` once, then answers. */
function scriptedLlm(calls: ToolCallRequest[]): AgentEffects['callLlm'] {
  let n = 0;
  return async () => (n++ > 0 ? answerOutput('ok') : callsOutput(calls));
}

const registry = new ToolRegistry([
  defineTool({
    name: 'echo',
    description: 'echoes n',
    parameters: z.object({ n: z.number() }),
    execute: ({ n }) => `n=${n}`,
  }),
]);

async function runTurn(calls: ToolCallRequest[], runTools: AgentEffects['runTools']) {
  const received: string[] = [];
  const emitted: { type: string; toolCallId?: string; error?: string; result?: string }[] = [];
  const actor = createActor(agentMachine, {
    input: { sessionId: 's', messages: [{ role: 'system', content: 'Test.' }] },
    inspect: (e: InspectionEvent) => {
      if (e.type === '@xstate.event' && e.actorRef === actor) received.push(e.event.type);
    },
  });
  actor.on('*', (e) => emitted.push(e as never));
  bindAgentEffects(actor, { callLlm: scriptedLlm(calls), runTools });
  actor.start();
  await waitFor(actor, (s) => s.matches('AwaitingInput'));
  actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
  const done = await waitFor(actor, (s) => s.matches('Completed'), { timeout: 5_000 });
  // A finished runner leaves the children: saved snapshots do not carry every runner of the session.
  expect(Object.keys(actor.getSnapshot().children)).toEqual([]);
  const persisted = actor.getPersistedSnapshot() as { children?: Record<string, unknown> };
  expect(Object.keys(persisted.children ?? {})).toEqual([]);
  actor.stop();
  const tools = done.context.messages.filter((m) => m.role === 'tool');
  return { received, emitted, tools };
}

describe('tool runner results', () => {
  it('a one-call batch is recorded by the done event alone, after its tool_call_start', async () => {
    const { received, emitted, tools } = await runTurn([call('a', 1)], runToolsEffect({ registry }));
    // The runner sends the machine nothing: the start is announced as it is spawned, the result comes
    // with its done event. (INITIALIZE: the start-up the machine asks itself for.)
    expect(received.filter((t) => !t.startsWith('xstate.'))).toEqual(['INITIALIZE', 'USER_MESSAGE']);
    expect(tools).toEqual([{ role: 'tool', tool_call_id: 'a', content: 'n=1' }]);
    const toolEvents = emitted.filter((e) => e.type.startsWith('tool_call_')).map((e) => e.type);
    expect(toolEvents).toEqual(['tool_call_start', 'tool_call_end']);
  });

  it('a two-call batch reports the first call to finish with TOOL.FINISHED, the last with the done event', async () => {
    const { received, emitted, tools } = await runTurn(
      [call('a', 1), call('b', 2)],
      runToolsEffect({ registry }),
    );
    expect(received.filter((t) => t === 'TOOL.FINISHED')).toHaveLength(1);
    expect(tools.map((m) => m.role === 'tool' && m.tool_call_id)).toEqual(['a', 'b']);
    expect(
      emitted
        .filter((e) => e.type === 'tool_call_end')
        .map((e) => e.toolCallId)
        .sort(),
    ).toEqual(['a', 'b']);
  });

  it('a runner that rejects gives each of its calls an error result', async () => {
    const failing: AgentEffects['runTools'] = async () => {
      throw new Error('runner crashed');
    };
    const { emitted, tools } = await runTurn([call('a', 1), call('b', 2)], failing);
    expect(tools.map((m) => m.role === 'tool' && m.tool_call_id)).toEqual(['a', 'b']);
    expect(tools.every((m) => String(m.content).includes('runner crashed'))).toBe(true);
    const ends = emitted.filter((e) => e.type === 'tool_call_end');
    expect(ends.map((e) => e.error)).toEqual([
      'Error: the tool runner failed: runner crashed',
      'Error: the tool runner failed: runner crashed',
    ]);
  });
});
