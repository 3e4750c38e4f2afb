/**
 * The `callLlm` effect on its own (no machine): the real SDK over HTTP to the scripted server, an
 * `EffectIO` that records what the effect tells the machine. What it sends (text, early calls,
 * retries, what the context window noticed, a compaction), what the request holds (plan and context
 * blocks, the summary in effect, tools, call ids), what it resolves with, and how it stops.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolRegistry } from '../src/index.js';
import { DeadlineExceededError } from '../src/llm/call-abort.js';
import type { Message } from '../src/llm/message.js';
import {
  callLlmEffect,
  type LlmActorOptions,
  type LlmCallInput,
  type PreparedMessages,
  priced,
} from '../src/machines/actors/call-llm.js';
import type { TelemetryScope } from '../src/telemetry/telemetry-scope.js';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { effectRun, stopDuringRequest } from './support/effect-io.js';

const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
const guarded = defineTool({
  name: 'guarded',
  description: 'asks first for some sessions',
  parameters: z.object({}),
  needsApproval: (_args, { sessionId }) => sessionId === 'careful',
  execute: () => 'done',
});
const finish = defineTool({
  name: 'finish',
  description: 'ends the turn',
  parameters: z.object({}),
  loopBreaking: 'completed',
  execute: () => 'finished',
});
const registry = new ToolRegistry([echo, guarded, finish]);

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const system: Message = { role: 'system', content: 'Be brief.' };
const user: Message = { role: 'user', content: 'go' };

function input(over: Partial<LlmCallInput> = {}): LlmCallInput {
  return {
    sessionId: 's',
    turn: 1,
    iteration: 1,
    messages: [system, user],
    toolsEnabled: true,
    deadline: null,
    ...over,
  };
}

/** The effect made with `options` over a scripted server answering `scenario`. */
async function setup(scenario: Scenario, options: Partial<LlmActorOptions> = {}) {
  server = await startScriptedServer({ scenario });
  const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
  const effect = callLlmEffect({
    client,
    model: 'm',
    registry,
    retry: { baseDelayMs: 1, jitter: 'none' },
    ...options,
  });
  return { server, effect };
}

/** The text of each message the server received in request `i`. */
const sentText = (s: ScriptedServer, i = 0) =>
  s.requests[i]!.messages.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : ''}`);

// A mutant that stalls a call fails here in 5 s, before the mutation run's own time-out.
describe('the callLlm effect', { timeout: 5_000 }, () => {
  it('streams the text as LLM.DELTA and resolves with the message, the planned calls and when it ended', async () => {
    const { effect, server } = await setup({
      turns: [
        {
          content: 'On it.',
          toolCalls: [
            { id: 'c1', name: 'echo', arguments: { text: 'a' } },
            { id: 'c2', name: 'finish', arguments: {} },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        },
      ],
    });
    const run = effectRun();
    const before = Date.now();
    const out = await effect(input(), run.io);
    const deltas = run.sent.flatMap((e) => (e.type === 'LLM.DELTA' ? [e.delta] : []));
    expect(deltas.join('')).toBe('On it.');
    expect(out.message).toMatchObject({ role: 'assistant', content: 'On it.' });
    expect(out.calls).toEqual([
      { id: 'c1', name: 'echo', argsText: '{"text":"a"}', args: { text: 'a' }, needsApproval: false },
      { id: 'c2', name: 'finish', argsText: '{}', args: {}, needsApproval: false, loopBreaking: 'completed' },
    ]);
    expect(out.finishReason).toBe('tool_calls');
    expect(out.usage).toEqual({ promptTokens: 10, completionTokens: 5, totalTokens: 15 });
    expect(out.at).toBeGreaterThanOrEqual(before);
    expect(out.at).toBeLessThanOrEqual(Date.now());
    // The request: the conversation as given, the registry's tools, tool_choice auto.
    expect(sentText(server)).toEqual(['system: Be brief.', 'user: go']);
    expect(server.requests[0]!.tools?.map((t) => (t.type === 'function' ? t.function.name : ''))).toEqual([
      'echo',
      'guarded',
      'finish',
    ]);
    expect(server.requests[0]!.tool_choice).toBe('auto');
  });

  it('sends the text that came with the stream end only when someone reads content_chunk', async () => {
    // The whole answer and the end come in one write: the reply carries the text; a machine step for
    // it is made only for `content_chunk` listeners (text read before the end is always sent).
    const { effect } = await setup({ turns: [{ content: 'All in one read.' }] });
    const quiet = effectRun();
    quiet.io.hears = (type) => type !== 'content_chunk';
    const out = await effect(input(), quiet.io);
    expect(out.message).toMatchObject({ role: 'assistant', content: 'All in one read.' });
    expect(quiet.sent.filter((e) => e.type === 'LLM.DELTA')).toEqual([]);
    const heard = effectRun();
    heard.io.hears = (type) => type === 'content_chunk';
    await effect(input(), heard.io);
    const deltas = heard.sent.flatMap((e) => (e.type === 'LLM.DELTA' ? [e.delta] : []));
    expect(deltas.join('')).toBe('All in one read.');
  });

  it('asks for no tools when they are off (the final answer at a limit), and ignores calls made anyway', async () => {
    const { effect, server } = await setup({
      turns: [{ content: 'Done.', toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }],
    });
    const out = await effect(input({ toolsEnabled: false }), effectRun().io);
    expect(server.requests[0]!.tool_choice).toBe('none');
    expect(out.calls).toEqual([]);
  });

  it('plans each call with the approval policy and the session id', async () => {
    const turns = [
      { toolCalls: [{ id: 'c1', name: 'guarded', arguments: {} }] },
      { toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] },
    ];
    const { effect } = await setup({ turns: [turns[0]!] });
    // The tool asks for approval in session "careful" only: the actor hands the session id on.
    expect((await effect(input({ sessionId: 'careful' }), effectRun().io)).calls[0]!.needsApproval).toBe(
      true,
    );
    expect((await effect(input({ sessionId: 'relaxed' }), effectRun().io)).calls[0]!.needsApproval).toBe(
      false,
    );
    await server!.close();
    const always = await setup({ turns: [turns[1]!] }, { approval: 'always' });
    expect((await always.effect(input(), effectRun().io)).calls[0]!.needsApproval).toBe(true);
  });

  describe('calls ready before the stream ends', () => {
    const scenario: Scenario = {
      turns: [
        {
          toolCalls: [
            { id: 'c1', name: 'echo', arguments: { text: 'a' } },
            { id: 'c2', name: 'nope', arguments: {} },
            { id: 'c3', name: 'echo', arguments: '{"text": ' },
            { id: 'c4', name: 'guarded', arguments: {} },
          ],
          chunkDelayMs: 5,
        },
      ],
    };

    it('are sent as LLM.TOOL_CALL_READY, planned, when their tool is known and their arguments parse', async () => {
      const { effect } = await setup(scenario);
      const run = effectRun();
      const out = await effect(input({ sessionId: 'careful' }), run.io);
      const ready = run.sent.flatMap((e) => (e.type === 'LLM.TOOL_CALL_READY' ? [e.call] : []));
      // c2 names no tool, c3's arguments are broken: they wait for the end (and fail there).
      expect(ready.map((c) => c.id)).toEqual(['c1', 'c4']);
      expect(ready).toEqual([out.calls[0], out.calls[3]]);
      expect(ready[1]!.needsApproval).toBe(true);
      expect(out.calls.map((c) => c.id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    });

    it('are not sent with eagerToolStart: false', async () => {
      const { effect } = await setup(scenario, { eagerToolStart: false });
      const run = effectRun();
      const out = await effect(input(), run.io);
      expect(run.sent.filter((e) => e.type === 'LLM.TOOL_CALL_READY')).toEqual([]);
      expect(out.calls).toHaveLength(4);
    });
  });

  describe('the request', () => {
    it('shows the plan after the system prompt, then the context blocks, which hear the input and the signal', async () => {
      let heard: { input: LlmCallInput; signal: AbortSignal } | undefined;
      const { effect, server } = await setup(
        { turns: [{ content: 'ok' }] },
        {
          contextBlocks: (i, signal) => {
            heard = { input: i, signal };
            return [{ title: 'Weather', text: 'Sunny.' }];
          },
        },
      );
      const run = effectRun();
      const given = input({ plan: { steps: [{ step: 'look', status: 'in_progress' }] } });
      await effect(given, run.io);
      expect(heard!.input).toBe(given);
      expect(heard!.signal).toBe(run.io.signal);
      const sent = sentText(server);
      expect(sent[0]).toBe('system: Be brief.');
      expect(sent[1]).toMatch(/^system: ## Current plan\n\n\[>\] look\n/);
      expect(sent[2]).toBe('system: ## Weather\n\nSunny.');
      expect(sent[3]).toBe('user: go');
    });

    it('shows no plan block for a plan without steps', async () => {
      const { effect, server } = await setup({ turns: [{ content: 'ok' }] });
      await effect(input({ plan: { steps: [] } }), effectRun().io);
      expect(sentText(server)).toEqual(['system: Be brief.', 'user: go']);
    });

    it('sends the summary in effect in place of the older conversation', async () => {
      const messages: Message[] = [
        system,
        { role: 'user', content: 'old question' },
        { role: 'assistant', content: 'old answer' },
        { role: 'user', content: 'new question' },
      ];
      const { effect, server } = await setup({ turns: [{}, { content: 'ok' }] });
      const compaction = {
        summary: 'They talked.',
        from: 1,
        through: 3,
        tokensBefore: 9,
        tokensAfter: 3,
        model: 'm',
      };
      await effect(input({ messages, compaction }), effectRun().io);
      const sent = sentText(server);
      expect(sent).toHaveLength(3);
      expect(sent[0]).toBe('system: Be brief.');
      expect(sent[1]).toContain('They talked.');
      expect(sent[2]).toBe('user: new question');
    });

    it('names calls without an id by their place in the conversation, and renames ids it already holds', async () => {
      const messages: Message[] = [
        system,
        user,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"text":"x"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
      ];
      const { effect } = await setup({
        turns: [
          {},
          {
            toolCalls: [
              { id: 'c1', name: 'echo', arguments: { text: 'a' } },
              { id: null, name: 'echo', arguments: { text: 'b' } },
            ],
          },
        ],
      });
      const out = await effect(input({ messages }), effectRun().io);
      expect(out.calls.map((c) => c.id)).toEqual(['call_m4_0', 'call_m4_1']);
    });

    it('names XML calls by turn and iteration', async () => {
      const content = '<tool>{"tool_name":"echo","arguments":{"text":"a"}}</tool>';
      const { effect } = await setup({ turns: [{ content }] }, { toolFormat: 'xml' });
      const out = await effect(input({ turn: 3, iteration: 2 }), effectRun().io);
      expect(out.calls).toEqual([
        {
          id: 'xml_3_2_0',
          name: 'echo',
          argsText: '{"text":"a"}',
          args: { text: 'a' },
          needsApproval: false,
        },
      ]);
    });
  });

  describe('prepareMessages (the context window)', () => {
    it('gets the request with its blocks and the input, and what it returns is sent', async () => {
      let seen: { messages: Message[]; input: LlmCallInput } | undefined;
      const { effect, server } = await setup(
        { turns: [{ content: 'ok' }] },
        {
          contextBlocks: () => [{ title: 'Note', text: 'n' }],
          prepareMessages: (messages, i) => {
            seen = { messages, input: i };
            return { messages: [messages[0]!, { role: 'user', content: 'pruned' }] };
          },
        },
      );
      const run = effectRun();
      const given = input();
      await effect(given, run.io);
      expect(seen!.input).toBe(given);
      expect(seen!.messages.map((m) => m.content)).toEqual(['Be brief.', '## Note\n\nn', 'go']);
      expect(sentText(server)).toEqual(['system: Be brief.', 'user: pruned']);
      // Nothing noticed: no LLM.CONTEXT.
      expect(run.sent.filter((e) => e.type === 'LLM.CONTEXT')).toEqual([]);
    });

    it('tells the machine its warning and its prune report in one LLM.CONTEXT, each only when there is one', async () => {
      const warning = { used: 90, max: 100 };
      const pruned = { removedTokens: 30, prunedMessages: 2, tokensBefore: 120, tokensAfter: 90 };
      const cases: [PreparedMessages, object][] = [
        [
          { messages: [system, user], warning },
          { type: 'LLM.CONTEXT', warning },
        ],
        [
          { messages: [system, user], pruned },
          { type: 'LLM.CONTEXT', pruned },
        ],
        [
          { messages: [system, user], warning, pruned },
          { type: 'LLM.CONTEXT', warning, pruned },
        ],
      ];
      server = await startScriptedServer({ scenario: { turns: [{ content: 'ok' }] } });
      const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
      for (const [prepared, event] of cases) {
        const effect = callLlmEffect({ client, model: 'm', registry, prepareMessages: () => prepared });
        const run = effectRun();
        await effect(input(), run.io);
        expect(run.sent.filter((e) => e.type === 'LLM.CONTEXT')).toEqual([event]);
      }
    });
  });

  describe('past the compaction threshold', () => {
    const messages: Message[] = [
      system,
      { role: 'user', content: 'old question' },
      { role: 'assistant', content: 'old answer' },
      { role: 'user', content: 'new question' },
    ];
    const over = (warning?: { used: number; max: number }) => (): PreparedMessages => ({
      messages,
      overCompactAt: { tokens: 95, max: 100 },
      ...(warning ? { warning } : {}),
    });

    it('asks for a compaction (its warning first), makes no request, and waits to be stopped', async () => {
      const warning = { used: 95, max: 100 };
      const { effect, server } = await setup(
        { turns: [{}, { content: 'ok' }] },
        { compacts: true, prepareMessages: over(warning) },
      );
      const run = effectRun();
      const pending = effect(input({ messages, mayCompact: true }), run.io);
      const settled = pending.then(
        () => 'resolved',
        (e) => e,
      );
      await new Promise((r) => setTimeout(r, 50));
      expect(run.sent).toEqual([{ type: 'LLM.CONTEXT', warning }, { type: 'LLM.COMPACT' }]);
      const reason = new Error('now compacting');
      run.stop(reason);
      expect(await settled).toBe(reason);
      expect(server.requestCount).toBe(0);
    });

    it('rejects at once when the run was already stopped, and sends no warning when there is none', async () => {
      const { effect } = await setup(
        { turns: [{}, { content: 'ok' }] },
        { compacts: true, prepareMessages: over() },
      );
      const run = effectRun();
      const reason = new Error('stopped before');
      // Stopped while the context blocks were made.
      const stopping = callLlmEffect({
        client: new OpenAI({ baseURL: server!.url, apiKey: 'test', maxRetries: 0 }),
        model: 'm',
        registry,
        compacts: true,
        prepareMessages: over(),
        contextBlocks: () => {
          run.stop(reason);
          return [];
        },
      });
      await expect(stopping(input({ messages, mayCompact: true }), run.io)).rejects.toBe(reason);
      expect(run.sent).toEqual([]);
      const second = effectRun();
      const pending = effect(input({ messages, mayCompact: true }), second.io);
      await new Promise((r) => setTimeout(r, 20));
      expect(second.sent).toEqual([{ type: 'LLM.COMPACT' }]);
      second.stop(reason);
      await expect(pending).rejects.toBe(reason);
    });

    it('calls the model as usual when the agent prunes, the turn compacted already, or nothing is left to summarize', async () => {
      const cases: [string, Partial<LlmActorOptions>, Partial<LlmCallInput>][] = [
        ['pruning', { compacts: false }, { messages, mayCompact: true }],
        ['compacted this turn', { compacts: true }, { messages, mayCompact: false }],
        ['nothing to summarize', { compacts: true }, { messages: [system, user], mayCompact: true }],
      ];
      for (const [how, options, given] of cases) {
        const { effect, server } = await setup(
          { turns: [{ content: 'ok' }, { content: 'ok' }] },
          {
            ...options,
            prepareMessages: over(),
          },
        );
        const run = effectRun();
        const out = await effect(input(given), run.io);
        expect(out.message.content, how).toBe('ok');
        expect(
          run.sent.map((e) => e.type),
          how,
        ).not.toContain('LLM.COMPACT');
        await server.close();
      }
    });
  });

  describe('retries', () => {
    it('tells the machine each retry (with the status) and the new attempt', async () => {
      const { effect } = await setup({
        turns: [{ content: 'ok', error: { status: 503, message: 'busy' }, times: 1 }],
      });
      const run = effectRun();
      const out = await effect(input(), run.io);
      expect(out.message.content).toBe('ok');
      const told = run.sent.filter((e) => e.type !== 'LLM.DELTA');
      expect(told).toEqual([
        {
          type: 'LLM.RETRY',
          attempt: 1,
          maxAttempts: 4,
          delayMs: 1,
          kind: 'server',
          status: 503,
          message: '503 busy',
        },
        { type: 'LLM.RESET', reason: 'retry', attempt: 2 },
      ]);
    });

    it('a failure without a status (a reset connection) is told without one', async () => {
      const { effect } = await setup({ turns: [{ content: 'ok', fault: 'reset', times: 1 }] });
      const run = effectRun();
      await effect(input(), run.io);
      const retry = run.sent.find((e) => e.type === 'LLM.RETRY');
      expect(retry).toMatchObject({ type: 'LLM.RETRY', attempt: 1, kind: 'connection' });
      expect(retry).not.toHaveProperty('status');
    });
  });

  describe('how it stops', () => {
    it('aborts the request when the run is stopped, rejecting with the reason', async () => {
      const { effect, server } = await setup({ turns: [{ fault: 'hang' }] });
      const { error, reason } = await stopDuringRequest(server, (io) => effect(input(), io));
      expect(error).toBe(reason);
    });

    it('rejects with DeadlineExceededError at the deadline', async () => {
      const { effect } = await setup({ turns: [{ fault: 'hang' }] });
      await expect(effect(input({ deadline: Date.now() + 100 }), effectRun().io)).rejects.toBeInstanceOf(
        DeadlineExceededError,
      );
    });
  });

  it('reports each HTTP attempt to the telemetry', async () => {
    const calls: string[] = [];
    const telemetry: TelemetryScope = {
      modelCallStart: (info) => {
        calls.push(`start ${info.attempt}`);
        return info.attempt;
      },
      modelCallEnd: (handle, info) =>
        calls.push(`end ${String(handle)} ${info.errorType ?? info.finishReason}`),
      toolStart: () => undefined,
      toolRun: (_, execute) => execute(),
      toolEnd: () => {},
    };
    const { effect } = await setup(
      { turns: [{ content: 'ok', error: { status: 500 }, times: 1 }] },
      { telemetry },
    );
    await effect(input(), effectRun().io);
    expect(calls).toEqual(['start 1', expect.stringMatching(/^end 1 /), 'start 2', 'end 2 stop']);
  });

  it('prices the usage with the model price', async () => {
    const { effect } = await setup(
      { turns: [{ content: 'ok', usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } }] },
      { price: { inputPerMTok: 2, outputPerMTok: 8 } },
    );
    const out = await effect(input(), effectRun().io);
    expect(out.usage?.costUsd).toBeCloseTo(10);
  });
});

describe('priced', () => {
  const usage = { promptTokens: 1_000_000, completionTokens: 500_000, totalTokens: 1_500_000 };
  const price = { inputPerMTok: 2, cachedInputPerMTok: 1, outputPerMTok: 8 };

  it('adds what the tokens cost, counting cached prompt tokens at their rate (none when not said)', () => {
    expect(priced(usage, price)).toEqual({ ...usage, costUsd: 6 });
    expect(priced({ ...usage, cachedPromptTokens: 400_000 }, price)?.costUsd).toBeCloseTo(5.6);
  });

  it('leaves the usage as it was when the price is unknown, and no usage as none', () => {
    expect(priced(usage, undefined)).toBe(usage);
    expect(priced(null, price)).toBeNull();
  });
});
