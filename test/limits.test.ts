import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import type { ScriptedRequest, ScriptedTurn } from '../src/testing/index.js';
import { agentOn, deferred, eachWire } from './support/harness.js';

let counter = 0;
const step = defineTool({
  name: 'step',
  description: 'one step',
  parameters: z.object({ n: z.number() }),
  execute: ({ n }) => `step ${n} done`,
});

/** A model that always wants another step, until tools are disabled; then it answers. */
function endlessModel(request: ScriptedRequest, index: number): ScriptedTurn {
  if (request.tool_choice === 'none') return { content: `final answer after ${index} calls` };
  counter++;
  return { toolCalls: [{ name: 'step', arguments: { n: index } }] };
}

eachWire(() => {
  describe('iteration limit', () => {
    it('warns at 80%, then makes one last call without tools and says why the turn ended', async () => {
      counter = 0;
      const result = await agentOnRespond(5);
      expect(counter).toBe(5);
      expect(result.terminateReason).toBe('max_iterations');
      expect(result.success).toBe(false);
      expect(result.iterations).toBe(6);
      expect(result.response).toBe('final answer after 5 calls');
    });
  });

  async function agentOnRespond(maxIterations: number) {
    const { agent, server, events } = await agentOn(
      { turns: Array.from({ length: 20 }, () => endlessModel) },
      { tools: [step], limits: { maxIterations } },
    );
    const result = await agent.send('work forever');
    const warnings = events.filter((e) => e.type === 'limit_warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ limit: 'max_iterations', used: 4, max: 5 });
    // The warning went to the model as a system note before call 5.
    const fifth = server.requests[4]!;
    expect(String(fifth.messages.at(-1)!.content)).toMatch(/4 of 5 model calls.*1 remain/);
    // The last request had tools disabled.
    expect(server.requests.at(-1)!.tool_choice).toBe('none');
    expect(server.requests.slice(0, 5).every((r) => r.tool_choice === 'auto')).toBe(true);
    return result;
  }

  describe('extend limit', () => {
    it('continues a turn that ended at the limit', async () => {
      const { agent, server } = await agentOn(
        {
          turns: [
            { toolCalls: [{ name: 'step', arguments: { n: 1 } }] },
            { toolCalls: [{ name: 'step', arguments: { n: 2 } }] },
            { content: 'stopped at the limit' },
            { toolCalls: [{ name: 'step', arguments: { n: 3 } }] },
            { content: 'really done' },
          ],
        },
        { tools: [step], limits: { maxIterations: 2 } },
      );
      const first = await agent.send('go');
      expect(first.terminateReason).toBe('max_iterations');
      const continued = await agent.extendLimit(5);
      expect(continued?.terminateReason).toBe('completed');
      expect(continued?.response).toBe('really done');
      expect(server.requests).toHaveLength(5);
    });

    it('raises the limit of a running turn', async () => {
      const started = deferred();
      const gate = deferred<string>();
      const slow = defineTool({
        name: 'slow',
        description: 'waits for the test',
        parameters: z.object({}),
        execute: () => {
          started.resolve();
          return gate.promise;
        },
      });
      const { agent } = await agentOn(
        {
          turns: [
            { toolCalls: [{ name: 'slow', arguments: {} }] },
            { toolCalls: [{ name: 'step', arguments: { n: 1 } }] },
            { content: 'done within the extended limit' },
          ],
        },
        { tools: [slow, step], limits: { maxIterations: 1 } },
      );
      const turn = agent.send('go');
      await started.promise;
      expect(await agent.extendLimit(2)).toBeNull();
      gate.resolve('ok');
      const result = await turn;
      expect(result.terminateReason).toBe('completed');
      expect(result.iterations).toBe(3);
    });
  });

  describe('timeout', () => {
    it('ends a turn at its deadline with a final no-tools call', async () => {
      const sleepy = defineTool({
        name: 'sleepy',
        description: 'takes long',
        parameters: z.object({}),
        execute: (_a, { signal }) =>
          new Promise((resolve, reject) => {
            const t = setTimeout(() => resolve('late'), 5_000);
            signal.addEventListener('abort', () => {
              clearTimeout(t);
              reject(signal.reason);
            });
          }),
      });
      const { agent, server } = await agentOn(
        {
          turns: [
            { toolCalls: [{ name: 'sleepy', arguments: {} }] },
            { content: 'out of time, here is what I have' },
          ],
        },
        { tools: [sleepy], limits: { timeoutMs: 150 } },
      );
      const t0 = performance.now();
      const result = await agent.send('go');
      expect(performance.now() - t0).toBeLessThan(2_000);
      expect(result.terminateReason).toBe('timeout');
      expect(result.response).toBe('out of time, here is what I have');
      expect(String(result.messages.find((m) => m.role === 'tool')!.content)).toMatch(/deadline/);
      expect(server.requests[1]!.tool_choice).toBe('none');
    });

    it('aborts a slow model call at the deadline and still answers', async () => {
      const { agent, server } = await agentOn(
        {
          turns: [
            (request) =>
              request.tool_choice === 'none'
                ? { content: 'quick final answer' }
                : { content: 'too slow', delayMs: 2_000 },
          ],
        },
        { limits: { timeoutMs: 150 } },
      );
      const t0 = performance.now();
      const result = await agent.send('go');
      expect(performance.now() - t0).toBeLessThan(1_500);
      expect(result.terminateReason).toBe('timeout');
      expect(result.response).toBe('quick final answer');
      expect(server.requests.at(-1)!.tool_choice).toBe('none');
    });
  });

  describe('token budget', () => {
    it('ends the turn when the reported usage passes the budget', async () => {
      const { agent } = await agentOn(
        {
          turns: [
            {
              toolCalls: [{ name: 'step', arguments: { n: 1 } }],
              usage: { prompt_tokens: 900, completion_tokens: 200 },
            },
            { content: 'budget spent', usage: { prompt_tokens: 10, completion_tokens: 5 } },
          ],
        },
        { tools: [step], limits: { tokenBudget: 1000 } },
      );
      const result = await agent.send('go');
      expect(result.terminateReason).toBe('token_budget');
      expect(result.usage.totalTokens).toBe(1115);
    });
  });
});
