/**
 * The `compact` effect on its own (no machine): the summary call over the real SDK to the scripted
 * server, what it asks for, the record it resolves with, each way it fails (a `CompactionFailedError`
 * with its reason, what the call used and the request's size), and how it stops.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../src/llm/message.js';
import {
  type CompactInput,
  CompactionFailedError,
  type CompactOptions,
  type ConversationMeasure,
  compactEffect,
} from '../src/machines/actors/compact-conversation.js';
import {
  type CompactionRecord,
  compactedRequest,
  SUMMARY_INSTRUCTIONS,
  summaryRequest,
} from '../src/prompt/compaction.js';
import { type ScriptedServer, type ScriptedTurn, startScriptedServer } from '../src/testing/index.js';
import { effectRun, stopDuringRequest } from './support/effect-io.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A measure in characters: each message's role and text, plus 4. */
const chars = (budget: number): ConversationMeasure => ({
  count: (messages) =>
    messages.reduce(
      (n, m) => n + 4 + m.role.length + (typeof m.content === 'string' ? m.content.length : 0),
      0,
    ),
  budget,
});

const messages: Message[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: `first question ${'q'.repeat(400)}` },
  { role: 'assistant', content: `first answer ${'a'.repeat(400)}` },
  { role: 'user', content: 'second question' },
];

function input(over: Partial<CompactInput> = {}): CompactInput {
  return { sessionId: 's', turn: 2, iteration: 1, messages, compaction: null, instructions: null, ...over };
}

async function setup(turn: ScriptedTurn, options: Partial<CompactOptions> = {}) {
  server = await startScriptedServer({ scenario: { turns: [turn] } });
  const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
  const effect = compactEffect({
    client,
    model: 'summarizer',
    retry: { maxAttempts: 1 },
    measure: chars(10_000),
    summaryMeasure: chars(10_000),
    ...options,
  });
  return { server, effect };
}

/** The `CompactionFailedError` `promise` rejects with. */
async function failure(promise: Promise<unknown>, how?: string): Promise<CompactionFailedError> {
  const error = await promise.then(
    (value) => value,
    (e: unknown) => e,
  );
  expect(error, how).toBeInstanceOf(CompactionFailedError);
  return error as CompactionFailedError;
}

const before = chars(10_000).count(messages);

// A mutant that stalls a call fails here in 5 s, before the mutation run's own time-out.
describe('the compact effect', { timeout: 5_000 }, () => {
  it('summarizes up to the last user message and resolves with the record and the priced usage', async () => {
    const { effect, server } = await setup(
      {
        content: '  They asked a first question.  ',
        usage: { prompt_tokens: 1_000_000, completion_tokens: 0 },
      },
      { price: { inputPerMTok: 3, outputPerMTok: 9 } },
    );
    const out = await effect(input(), effectRun().io);
    const draft: CompactionRecord = {
      summary: 'They asked a first question.',
      from: 1,
      through: 3,
      tokensBefore: before,
      tokensAfter: 0,
      model: 'summarizer',
    };
    const after = chars(10_000).count(compactedRequest(messages, draft, []));
    expect(out.record).toEqual({ ...draft, tokensAfter: after });
    expect(after).toBeLessThan(before);
    expect(out.usage).toMatchObject({ promptTokens: 1_000_000, costUsd: 3 });
    // The summary call: its own instructions, the covered messages in one user message, no tools.
    const sent = server.requests[0]!;
    expect(sent.model).toBe('summarizer');
    expect(sent.tools).toBeUndefined();
    expect(sent.messages[0]).toEqual({ role: 'system', content: SUMMARY_INSTRUCTIONS });
    expect(sent.messages[1]!.content).toContain('first answer');
    expect(sent.messages[1]!.content).not.toContain('second question');
  });

  it('hands the user’s instructions to the summary call', async () => {
    const { effect, server } = await setup({ content: 'Short.' });
    await effect(input({ instructions: 'keep the numbers' }), effectRun().io);
    expect(server.requests[0]!.messages[0]!.content).toBe(
      `${SUMMARY_INSTRUCTIONS}\n\nThe user asks: keep the numbers`,
    );
  });

  it('folds the summary in effect in, measuring the request as it stands with it', async () => {
    const longer: Message[] = [
      ...messages,
      { role: 'assistant', content: `second answer ${'b'.repeat(400)}` },
      { role: 'user', content: 'third question' },
    ];
    const current: CompactionRecord = {
      summary: 'Earlier: a first question.',
      from: 1,
      through: 3,
      tokensBefore: 900,
      tokensAfter: 100,
      model: 'summarizer',
    };
    const { effect, server } = await setup({ content: 'Two questions so far.' });
    const out = await effect(input({ messages: longer, compaction: current }), effectRun().io);
    expect(out.record).toMatchObject({
      from: 1,
      through: 5,
      tokensBefore: chars(10_000).count(compactedRequest(longer, current, [])),
    });
    const asked = String(server.requests[0]!.messages[1]!.content);
    expect(asked).toContain('Earlier: a first question.');
    expect(asked).toContain('second answer');
    expect(asked).not.toContain('first answer');
  });

  it("a request exactly at the summary model's window is sent", async () => {
    const whole = summaryRequest(messages, null, 3, undefined, () => true);
    const { effect, server } = await setup(
      { content: 'Short.' },
      { summaryMeasure: chars(chars(0).count(whole!.messages)) },
    );
    await effect(input(), effectRun().io);
    expect(server.requests[0]!.messages).toEqual(whole!.messages);
  });

  describe('fails with a CompactionFailedError naming why', () => {
    it('when nothing before the last user message is left, without a call', async () => {
      const { effect, server } = await setup({ content: 'x' });
      const error = await failure(effect(input({ messages: messages.slice(0, 2) }), effectRun().io));
      expect(error.reason).toMatch(/nothing .* to summarize/);
      expect(error.message).toBe(error.reason);
      expect(error.name).toBe('CompactionFailedError');
      expect([error.usage, error.tokens, error.max]).toEqual([
        null,
        chars(10_000).count(messages.slice(0, 2)),
        10_000,
      ]);
      expect(server.requestCount).toBe(0);
    });

    it("when the conversation does not fit the summary model's window, without a call", async () => {
      const { effect, server } = await setup({ content: 'x' }, { summaryMeasure: chars(50) });
      const error = await failure(effect(input(), effectRun().io));
      expect(error.reason).toMatch(/does not fit the summary model's window/);
      expect(server.requestCount).toBe(0);
    });

    it('when the call fails, with the error', async () => {
      const { effect } = await setup({ error: { status: 400, message: 'bad summary request' } });
      const error = await failure(effect(input(), effectRun().io));
      expect(error.reason).toMatch(/^the summary call failed: .*bad summary request/);
      expect([error.usage, error.tokens, error.max]).toEqual([null, before, 10_000]);
    });

    it('when the call times out, with its time', async () => {
      const { effect } = await setup({ fault: 'hang' }, { timeoutMs: 80 });
      const error = await failure(effect(input(), effectRun().io));
      expect(error.reason).toBe('the summary call timed out after 80 ms');
    });

    it('when the summary is cut off, empty, too long or saves nothing, with what the call used', async () => {
      const usage = { prompt_tokens: 7, completion_tokens: 3 };
      const cases: [string, ScriptedTurn, Partial<CompactOptions>, RegExp][] = [
        [
          'cut',
          { content: 'Half a summ', finishReason: 'length', usage },
          {},
          /cut off \(finish_reason: length\)/,
        ],
        ['empty', { content: '  \n ', usage }, {}, /the summary is empty/],
        ['no text', { usage }, {}, /the summary is empty/],
        // A budget of 200 allows 50 tokens of summary by default; this one has 10 + 60.
        [
          'too long (default)',
          { content: 's'.repeat(60), usage },
          { measure: chars(200) },
          /too long \(70 tokens, at most 50\)/,
        ],
        [
          'too long (set)',
          { content: 's'.repeat(60), usage },
          { maxSummaryTokens: 69 },
          /too long \(70 tokens, at most 69\)/,
        ],
        [
          'saves nothing',
          { content: 's'.repeat(900), usage },
          {},
          /saves nothing \(\d+ tokens before, \d+ after\)/,
        ],
      ];
      for (const [how, turn, options, reason] of cases) {
        const { effect } = await setup(turn, options);
        const error = await failure(effect(input(), effectRun().io), how);
        expect(error.reason, how).toMatch(reason);
        expect(error.usage, how).toEqual({ promptTokens: 7, completionTokens: 3, totalTokens: 10 });
        await server!.close();
      }
    });

    it('a summary exactly at the limit passes; one that saves exactly nothing does not', async () => {
      const atLimit = await setup({ content: 's'.repeat(59) }, { maxSummaryTokens: 69 });
      expect((await atLimit.effect(input(), effectRun().io)).record.summary).toHaveLength(59);
      await server!.close();
      // The summary message replaces two messages: its heading and text against their 830 characters.
      const draft = {
        summary: '',
        from: 1,
        through: 3,
        tokensBefore: 0,
        tokensAfter: 0,
        model: 'summarizer',
      };
      const overhead = chars(10_000).count(compactedRequest(messages, draft, []));
      const same = await setup({ content: 's'.repeat(before - overhead) });
      const error = await failure(same.effect(input(), effectRun().io));
      expect(error.reason).toBe(`the summary saves nothing (${before} tokens before, ${before} after)`);
    });
  });

  describe('how it stops', () => {
    it('rejects with the stop reason, not a CompactionFailedError, when stopped during the call', async () => {
      const { effect, server } = await setup({ fault: 'hang' });
      const { error, reason } = await stopDuringRequest(server, (io) => effect(input(), io));
      expect(error).toBe(reason);
    });
  });
});
