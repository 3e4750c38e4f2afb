import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runSessionsCommand } from '../src/cli/commands/sessions/sessions-command.js';
import { createAgent, defineTool, FileSessionStore } from '../src/index.js';
import type { ScriptedTurn } from '../src/testing/index.js';
import { agentAt, agentOn, serve, testDir } from './support/harness.js';

// Cost per call, per turn and per session over the real SDK against the scripted server, which
// reports the usage each turn scripts.

const runs: number[] = [];
const step = defineTool({
  name: 'step',
  description: 'one step',
  parameters: z.object({ n: z.number() }),
  execute: ({ n }) => {
    runs.push(n);
    return `step ${n} done`;
  },
});

/** $10 per million input tokens, $100 per million output: 1,000 input plus 100 output tokens cost $0.02. */
const pricing = { 'priced-model': { inputPerMTok: 10, cachedInputPerMTok: 1, outputPerMTok: 100 } };

/** A step call billed $0.02. */
function stepTurn(n: number): ScriptedTurn {
  return {
    toolCalls: [{ name: 'step', arguments: { n } }],
    usage: { prompt_tokens: 1_000, completion_tokens: 100 },
  };
}

describe('cost budget of a turn', () => {
  it('ends with cost_budget after the call that reached it, the cost in the result, warned at 80%', async () => {
    runs.length = 0;
    const { agent, server, events } = await agentOn(
      { turns: [stepTurn(1), stepTurn(2), stepTurn(3), stepTurn(4), stepTurn(5), stepTurn(6)] },
      { model: 'priced-model', pricing, tools: [step], limits: { maxCostUsd: 0.1 } },
    );
    const result = await agent.send('go');
    expect(result.terminateReason).toBe('cost_budget');
    expect(result.success).toBe(false);
    // Five calls of $0.02 reach $0.10: no sixth call, and the fifth call's step is answered, not run.
    expect(server.requests).toHaveLength(5);
    expect(runs).toEqual([1, 2, 3, 4]);
    expect(result.usage.costUsd).toBeCloseTo(0.1, 10);
    expect(result.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringMatching(/cost budget/),
    });
    const warnings = events.filter((e) => e.type === 'limit_warning' && e.limit === 'cost_budget');
    // The fourth call takes the turn to $0.08, 80% of the budget: one warning.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ iteration: 4, max: 0.1 });
    expect((warnings[0] as { used: number }).used).toBeCloseTo(0.08, 10);
    const usages = events.filter((e) => e.type === 'usage');
    expect(usages).toHaveLength(5);
    expect(usages[0]!.usage.costUsd).toBeCloseTo(0.02, 10);
    expect(usages[4]!.turnUsage.costUsd).toBeCloseTo(0.1, 10);
    const ends = events.filter((e) => e.type === 'turn_end');
    expect(ends.at(-1)).toMatchObject({ terminateReason: 'cost_budget' });
  });

  it('a reply that answers ends the turn as completed, even past the budget', async () => {
    const { agent } = await agentOn(
      { turns: [{ content: 'done', usage: { prompt_tokens: 1_000, completion_tokens: 100 } }] },
      { model: 'priced-model', pricing, limits: { maxCostUsd: 0.01 } },
    );
    const result = await agent.send('go');
    expect(result.terminateReason).toBe('completed');
    expect(result.usage.costUsd).toBeCloseTo(0.02, 10);
  });
});

describe('prices', () => {
  it('a model without a price has an unknown cost, never 0', async () => {
    const { agent, events } = await agentOn(
      { turns: [{ content: 'hi', usage: { prompt_tokens: 1_000, completion_tokens: 100 } }] },
      { model: 'my-local-model' },
    );
    const result = await agent.send('go');
    expect(result.usage.totalTokens).toBe(1_100);
    expect(result.usage.costUsd).toBeUndefined();
    const usage = events.find((e) => e.type === 'usage');
    expect(usage?.usage.costUsd).toBeUndefined();
    expect(usage?.totalUsage.costUsd).toBeUndefined();
  });

  it('the built-in table prices a known model and its dated snapshots; pricing overrides it', async () => {
    const turn = { content: 'hi', usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } };
    const builtIn = await agentOn({ turns: [turn] }, { model: 'gpt-4o-2024-08-06' });
    // gpt-4o: $2.50 per million input, $10 per million output.
    expect((await builtIn.agent.send('go')).usage.costUsd).toBeCloseTo(12.5, 10);
    const overridden = await agentOn(
      { turns: [turn] },
      { model: 'gpt-4o', pricing: { 'gpt-4o': { inputPerMTok: 1, outputPerMTok: 2 } } },
    );
    expect((await overridden.agent.send('go')).usage.costUsd).toBeCloseTo(3, 10);
  });

  it.each(['chat-completions', 'responses'] as const)(
    'bills the cached part of the prompt, as the %s wire reports it, at the cached price',
    async (api) => {
      const { agent } = await agentOn(
        {
          turns: [
            {
              content: 'hi',
              usage: { prompt_tokens: 1_000_000, cached_tokens: 400_000, completion_tokens: 0 },
            },
          ],
        },
        { model: 'priced-model', pricing, api },
      );
      const { usage } = await agent.send('go');
      expect(usage.cachedPromptTokens).toBe(400_000);
      // 600,000 uncached tokens at $10 per million, 400,000 cached at $1.
      expect(usage.costUsd).toBeCloseTo(6.4, 10);
    },
  );

  it('refuses a cost budget for a model without a price at createAgent, naming the model and the option', () => {
    expect(() =>
      createAgent({
        baseURL: 'http://127.0.0.1:9',
        apiKey: 'k',
        model: 'my-local-model',
        limits: { maxCostUsd: 1 },
      }),
    ).toThrow(/limits\.maxCostUsd.*"my-local-model".*pricing/);
    expect(() =>
      createAgent({
        baseURL: 'http://127.0.0.1:9',
        apiKey: 'k',
        model: 'my-local-model',
        limits: { maxSessionCostUsd: 1 },
      }),
    ).toThrow(/limits\.maxSessionCostUsd.*"my-local-model"/);
  });

  it('refuses a pricing entry that is not a price, naming the model and the field', () => {
    expect(() =>
      createAgent({
        baseURL: 'http://127.0.0.1:9',
        apiKey: 'k',
        pricing: { 'm-1': { inputPerMTok: 1, outputPerMtok: 2 } as never },
      }),
    ).toThrow(/pricing\["m-1"\]\.outputPerMTok/);
  });
});

describe('cost budget of a session', () => {
  it('counts every turn, survives a restore, and ends the turn whose call reaches it', async () => {
    runs.length = 0;
    const dir = await testDir('agentloop-cost-');
    const store = new FileSessionStore({ dir });
    const answer = (text: string): ScriptedTurn => ({
      content: text,
      usage: { prompt_tokens: 1_000, completion_tokens: 100 },
    });
    const options = {
      model: 'priced-model',
      pricing,
      tools: [step],
      store,
      session: 'budgeted',
      limits: { maxSessionCostUsd: 0.1 },
    };
    // First process: two turns of $0.04 each.
    const firstTurns = [stepTurn(1), answer('one'), stepTurn(2), answer('two')];
    const first = agentAt(await serve({ turns: firstTurns }), options);
    expect((await first.send('one')).usage.costUsd).toBeCloseTo(0.04, 10);
    const second = await first.send('two');
    expect(second.terminateReason).toBe('completed');
    first.stop();
    // Second process: the session has cost $0.08; its next step call takes it to $0.10. (The scripted
    // server picks a turn by the assistant messages a request holds: the first four are the past.)
    const server = await serve({ turns: [...firstTurns, stepTurn(3), answer('never asked')] });
    const restored = agentAt(server, options);
    const warnings: unknown[] = [];
    restored.on('limit_warning', (e) => warnings.push(e));
    await restored.ready();
    const third = await restored.send('three');
    expect(third.error).toBeUndefined();
    expect(third.terminateReason).toBe('cost_budget');
    expect(third.usage.costUsd).toBeCloseTo(0.02, 10);
    expect(server.requests).toHaveLength(1);
    expect(runs).toEqual([1, 2]);
    // A session that has spent its budget makes no further call: send() says so, naming the limit.
    await expect(restored.send('four')).rejects.toThrow(
      /\$0\.1000 of its \$0\.1 budget \(limits\.maxSessionCostUsd/,
    );
    expect(server.requests).toHaveLength(1);
    // The crossing went past 80% of the session's budget straight to 100%: no warning was due.
    expect(warnings).toEqual([]);
    restored.stop();
    // `agentloop sessions` lists the session's tokens and cost: five calls of 1,100 tokens, $0.10.
    const written: string[] = [];
    const io = { stdout: (text: string) => written.push(text), stderr: () => {} };
    expect(await runSessionsCommand(['--sessions-dir', dir], io)).toBe(0);
    const out = written.join('');
    expect(out).toMatch(/TURNS\s+TOKENS\s+COST/);
    expect(out).toMatch(/budgeted\s.*\s3\s+5500\s+\$0\.1000\s/);
  });
});
