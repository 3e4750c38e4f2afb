import { describe, expect, it } from 'vitest';
import type { DurableSteps } from '../src/machines/durable-effects.js';
import { workCounts, workSnapshot } from '../src/work-counters.js';
import { agentAt, serve } from './support/harness.js';

// A model call run as a durable step (the seam of agentloop/restate and agentloop/dbos): what its
// record holds when the engine serializes it, and the request hash that costs. Isolated: it reads the
// process-wide work counters (vitest.config.ts).

describe("a model call's record in its step", () => {
  /** Steps recorded as the engines record them: serialized, the value read back from the text. */
  const serializing = (recorded: Map<string, string>): DurableSteps => ({
    step: async <T>(key: string, run: () => Promise<T>): Promise<T> => {
      const text = JSON.stringify(await run());
      recorded.set(key, text);
      return JSON.parse(text) as T;
    },
  });
  const recordOf = (recorded: Map<string, string>, key: string) =>
    (JSON.parse(recorded.get(key) ?? 'null') as { ok: { record: Record<string, unknown> } }).ok.record;

  it('leaves the request hash and settings out (not worked out) when no model_call event is built', async () => {
    const server = await serve({ turns: [{ content: 'one' }] });
    const recorded = new Map<string, string>();
    const before = workSnapshot();
    const agent = agentAt(server, { sessionId: 'h1', durableSteps: serializing(recorded) });
    expect((await agent.send('hi')).response).toBe('one');
    expect(workCounts.hashes - before.hashes).toBe(0);
    const record = recordOf(recorded, 'h1/1/1/model');
    expect(record).toMatchObject({ wire: 'chat-completions', attempt: 1 });
    expect(record).not.toHaveProperty('requestHash');
    expect(record).not.toHaveProperty('settings');
  });

  it('records them when a listener hears model_call, and the event carries the recorded hash', async () => {
    const server = await serve({ turns: [{ content: 'two' }] });
    const recorded = new Map<string, string>();
    const agent = agentAt(server, { sessionId: 'h2', durableSteps: serializing(recorded) });
    const heard: string[] = [];
    agent.on('model_call', (event) => heard.push(event.requestHash));
    expect((await agent.send('hi')).response).toBe('two');
    const record = recordOf(recorded, 'h2/1/1/model');
    expect(record.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(record.settings).toMatchObject({ model: expect.any(String) });
    expect(heard).toEqual([record.requestHash]);
  });
});
