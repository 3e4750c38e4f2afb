import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, type InspectionEvent, waitFor } from 'xstate';
import { z } from 'zod';
import { type AgentEffects, agentMachine, bindAgentEffects, createAgent, defineTool } from '../src/index.js';
import type { PersistedAgentSnapshot } from '../src/machines/agent-snapshot.js';
import { type ScriptedServer, type ScriptedTurn, startScriptedServer } from '../src/testing/index.js';

// A runner's done event is typed by the runner's id, and XState keeps a memo entry for every event
// type it sees on the machine every agent shares: runner ids must come from a small set, whatever
// call ids the model sends (real servers make up a new one for every call).

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up',
  parameters: z.object({ key: z.string() }),
  execute: async ({ key }) => {
    await new Promise((r) => setTimeout(r, key.endsWith('slow') ? 3 : 0));
    return `value of ${key}`;
  },
});

const BATCHES = 40;

/** `BATCHES` replies of two calls each, every call with an id of its own (as real servers make them), then an answer. */
function uniqueIdTurns(): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 0; i < BATCHES; i++) {
    turns.push({
      toolCalls: [
        { id: `call_${randomUUID()}`, name: 'lookup', arguments: { key: `k${i}-slow` } },
        { id: `call_${randomUUID()}`, name: 'lookup', arguments: { key: `k${i}` } },
      ],
    });
  }
  turns.push({ content: 'done' });
  return turns;
}

describe('tool runner ids', () => {
  it.each([true, false])(
    'come from a small set however many call ids the model makes up (stream=%s)',
    async (stream) => {
      server = await startScriptedServer({ scenario: { turns: uniqueIdTurns() } });
      const spawned = new Set<string>();
      const doneTypes = new Set<string>();
      const agent = createAgent({
        baseURL: server.url,
        apiKey: 'test',
        tools: [lookup],
        stream,
        limits: { maxIterations: BATCHES + 5 },
        instructions: 'Look things up.',
        inspect: (e: InspectionEvent) => {
          // Every actor made in the agent's system, by its id (the type names only what all refs have).
          const id = e.type === '@xstate.actor' ? (e.actorRef as unknown as { id: string }).id : '';
          if (id.startsWith('tools:')) spawned.add(id);
          if (e.type === '@xstate.event' && e.event.type.startsWith('xstate.done.actor.tools:'))
            doneTypes.add(e.event.type);
        },
      });
      const result = await agent.send('Look up every key.');
      agent.stop();
      expect(result.terminateReason).toBe('completed');
      // Every call ran and was answered.
      const answered = result.messages.filter((m) => m.role === 'tool');
      expect(answered).toHaveLength(2 * BATCHES);
      expect(answered.every((m) => String(m.content).startsWith('value of k'))).toBe(true);
      // 80 calls in 40 or more runners (one a call for calls started early from the stream), never
      // more than two at a time: at most two ids, and as few done-event types.
      expect(spawned.size).toBeGreaterThan(0);
      expect([...spawned].every((id) => id === 'tools:0' || id === 'tools:1')).toBe(true);
      expect(doneTypes.size).toBeGreaterThan(0);
      expect(doneTypes.size).toBeLessThanOrEqual(2);
    },
  );
});

describe('a snapshot saved with runners named after their first call (earlier versions)', () => {
  it('restores, runs the saved runner again, names a new runner tools:0 and finishes the batch', async () => {
    const call = (id: string, needsApproval: boolean) => ({
      id,
      name: 'lookup',
      argsText: '{}',
      args: {},
      needsApproval,
    });
    const calls = [call('call_legacy', false), call('call_p', true)];
    const effects = (runTools: AgentEffects['runTools']): AgentEffects => ({
      callLlm: async (input) => {
        const first = !input.messages.some((m) => m.role === 'assistant');
        const tool_calls = calls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: '{}' },
        }));
        return first
          ? {
              message: { role: 'assistant', content: null, tool_calls },
              calls,
              finishReason: 'tool_calls',
              usage: null,
              at: 1,
            }
          : {
              message: { role: 'assistant', content: 'done' },
              calls: [],
              finishReason: 'stop',
              usage: null,
              at: 2,
            };
      },
      runTools,
    });
    const answer = (ids: readonly { id: string; name: string }[]) =>
      ids.map((c) => ({
        toolCallId: c.id,
        name: c.name,
        content: `ran ${c.id}`,
        isError: false,
        durationMs: 0,
      }));

    // Saved while the runner of call_legacy runs and call_p waits for approval.
    const first = createActor(agentMachine, { input: { messages: [{ role: 'system', content: 's' }] } });
    bindAgentEffects(
      first,
      effects(() => new Promise(() => {})),
    );
    first.start();
    await waitFor(first, (s) => s.matches('AwaitingInput'));
    first.send({ type: 'USER_MESSAGE', text: 'go', at: 0 });
    await waitFor(first, (s) => s.matches('WaitingApproval'));
    const current = first.getPersistedSnapshot() as unknown as PersistedAgentSnapshot;
    first.stop();
    expect(Object.keys(current.context.batch.runners)).toEqual(['tools:0']);
    // As an earlier version saved it: the runner named after its first call.
    const { 'tools:0': child, ...otherChildren } = current.children as Record<string, unknown>;
    const saved = {
      ...current,
      context: {
        ...current.context,
        batch: { ...current.context.batch, runners: { 'tools:call_legacy': ['call_legacy'] } },
      },
      children: { ...otherChildren, 'tools:call_legacy': child },
    } as PersistedAgentSnapshot;

    const restored = createActor(agentMachine, { snapshot: saved as never, input: {} });
    const ran: string[] = [];
    bindAgentEffects(
      restored,
      effects(async (input) => {
        ran.push(...input.calls.map((c) => c.id));
        return answer(input.calls);
      }),
    );
    restored.start();
    restored.send({ type: 'APPROVE', toolCallId: 'call_p', at: 3 });
    const runnersAfterApproval = Object.keys(restored.getSnapshot().context.batch.runners).sort();
    await waitFor(restored, (s) => s.matches('Completed'));
    restored.stop();
    expect(runnersAfterApproval.filter((id) => id !== 'tools:call_legacy')).toEqual(['tools:0']);
    expect(ran.sort()).toEqual(['call_legacy', 'call_p']);
    const tools = restored.getSnapshot().context.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual(['ran call_legacy', 'ran call_p']);
  });
});
