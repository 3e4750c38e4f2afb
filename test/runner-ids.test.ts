import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { z } from 'zod';
import { createAgent, defineTool } from '../src/index.js';
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
