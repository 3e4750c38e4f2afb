import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, type InspectionEvent, waitFor } from 'xstate';
import { z } from 'zod';
import {
  agentMachine,
  bindAgentEffects,
  callLlmEffect,
  defineTool,
  runToolsEffect,
  ToolRegistry,
} from '../src/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';

let server: ScriptedServer | undefined;
afterEach(async () => server?.close());

describe('embedding the machine', () => {
  it('runs with effects bound through bindAgentEffects() and reports to an inspect observer', async () => {
    server = await startScriptedServer({
      scenario: { turns: [{ toolCalls: [{ name: 'shout', arguments: { text: 'hi' } }] }, { content: 'HI' }] },
    });
    const registry = new ToolRegistry([
      defineTool({
        name: 'shout',
        description: 'upper-cases text',
        parameters: z.object({ text: z.string() }),
        execute: ({ text }) => text.toUpperCase(),
      }),
    ]);
    const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
    const inspected: InspectionEvent[] = [];
    const actor = createActor(agentMachine, {
      input: {
        sessionId: 'embedded',
        messages: [{ role: 'system', content: 'Shout.' }],
        limits: { maxIterations: 5 },
      },
      inspect: (e) => inspected.push(e),
    });
    const emitted: string[] = [];
    actor.on('*', (e) => emitted.push(e.type));
    bindAgentEffects(actor, {
      callLlm: callLlmEffect({ client, model: 'scripted', registry }),
      runTools: runToolsEffect({ registry }),
    });
    actor.start();
    await waitFor(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'say hi', at: Date.now() });
    const done = await waitFor(actor, (s) => s.matches('Completed'), { timeout: 5_000 });
    expect(done.context.response).toBe('HI');
    expect(done.context.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(emitted).toContain('turn_end');
    expect(inspected.some((e) => e.type === '@xstate.snapshot')).toBe(true);
    // The persisted snapshot is plain JSON.
    expect(() => JSON.stringify(actor.getPersistedSnapshot())).not.toThrow();
    actor.stop();
  });

  it('says what is missing when no effects are bound', async () => {
    const actor = createActor(agentMachine, { input: {} });
    actor.start();
    await waitFor(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'hi', at: Date.now() });
    const failed = await waitFor(actor, (s) => s.matches('Error'));
    expect(failed.context.error?.message).toMatch(/no effects bound for "callLlm".*bindAgentEffects/);
    actor.stop();
  });
});
