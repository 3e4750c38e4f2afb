import { DEFAULTS } from '../../defaults.js';
import { DeadlineExceededError } from '../../llm/call-abort.js';
import type { Message, Usage } from '../../llm/message.js';
import { callModel } from '../../llm/model-call.js';
import type { ModelOptions } from '../../llm/model-request.js';
import { callIdsIn } from '../../llm/tool-call-ids.js';
import {
  type CompactionRecord,
  compactedRequest,
  compactionCut,
  leadingSystemCount,
  summaryRequest,
} from '../../prompt/compaction.js';
import type { ModelPrice } from '../../prompt/model-prices.js';
import type { EffectIO } from '../effect-io.js';
import { priced } from './call-llm.js';
/** Input of the `compact` actor: the conversation and the summary in effect. */
export interface CompactInput {
  sessionId: string;
  turn: number;
  iteration: number;
  messages: Message[];
  compaction: CompactionRecord | null;
  /** What the user asked the summary to focus on (`agent.compact(instructions)`, `/compact ...`). */
  instructions: string | null;
}

/** What the `compact` actor resolves with: the new summary, and what its call used. */
export interface CompactOutput {
  record: CompactionRecord;
  usage: Usage | null;
}

/**
 * Why a compaction gave no summary (the `compact` actor rejects with it): the machine goes on without
 * one, the context window prunes, and a `limit_warning` says why. Never ends a turn.
 */
export class CompactionFailedError extends Error {
  override readonly name = 'CompactionFailedError';
  constructor(
    /** What went wrong, e.g. `the summary call timed out after 120000 ms`. */
    readonly reason: string,
    /** What a summary call that did answer used (it is paid for), else null. */
    readonly usage: Usage | null,
    /** Estimated tokens of the request, and the most it may take. */
    readonly tokens: number,
    readonly max: number,
  ) {
    super(reason);
  }
}

/** How the conversation is measured against the window of the model the agent calls. */
export interface ConversationMeasure {
  /** Estimated prompt tokens of a request with these messages (and the agent's tools). */
  count(messages: Message[]): number;
  /** The most a prompt may take: the window less the completion's reserve. */
  budget: number;
}

/** Options of the compaction effect. */
export interface CompactOptions extends ModelOptions {
  /** The agent's requests: what the summary must bring under `budget`. */
  measure: ConversationMeasure;
  /** The summary call's own request (its model's window, no tools). */
  summaryMeasure: ConversationMeasure;
  /** Time the summary call has, in ms (default `DEFAULTS.compactionTimeoutMs`). */
  timeoutMs?: number;
  /** The most tokens a summary may take (default: a quarter of the agent's budget). */
  maxSummaryTokens?: number;
  price?: ModelPrice | undefined;
}

/**
 * The `compact` effect: one model call (`callModel`, same client and wire as the agent's, tools off)
 * that summarizes the conversation up to its last user message, folding in the summary in effect.
 * Every way it can fail (the call fails or times out, the reply is cut by `length`, empty, or too long,
 * or it saves nothing) rejects with a {@link CompactionFailedError}; an abort (interrupt) with the
 * signal's reason, as every effect.
 */
export function compactEffect(
  options: CompactOptions,
): (input: CompactInput, io: EffectIO) => Promise<CompactOutput> {
  const { measure, summaryMeasure } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULTS.compactionTimeoutMs;
  const maxSummaryTokens = options.maxSummaryTokens ?? Math.floor(measure.budget / 4);
  return async (input, io) => {
    const { messages, compaction: current } = input;
    const tokensBefore = measure.count(compactedRequest(messages, current, []));
    const failed = (reason: string, usage: Usage | null = null): never => {
      throw new CompactionFailedError(reason, usage, tokensBefore, measure.budget);
    };
    const cut = compactionCut(messages, current);
    if (cut === undefined) return failed('nothing before the last user message is left to summarize');
    const request = summaryRequest(
      messages,
      current,
      cut,
      input.instructions ?? undefined,
      (m) => summaryMeasure.count(m) <= summaryMeasure.budget,
    );
    if (!request) return failed("the conversation to summarize does not fit the summary model's window");
    let reply: Awaited<ReturnType<typeof callModel>>;
    try {
      reply = await callModel(
        options,
        {
          messages: request.messages,
          tools: [],
          toolsEnabled: false,
          deadline: Date.now() + timeoutMs,
          usedCallIds: callIdsIn([]),
          callIdStem: `compact_${input.turn}_${input.iteration}`,
        },
        { stop: io },
      );
    } catch (error) {
      if (io.aborted) throw error;
      if (error instanceof DeadlineExceededError)
        return failed(`the summary call timed out after ${timeoutMs} ms`);
      return failed(`the summary call failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    const usage = priced(reply.usage, options.price);
    const summary = typeof reply.message.content === 'string' ? reply.message.content.trim() : '';
    if (reply.finishReason === 'length')
      return failed('the summary was cut off (finish_reason: length)', usage);
    if (summary === '') return failed('the summary is empty', usage);
    const draft: CompactionRecord = {
      summary,
      from: leadingSystemCount(messages),
      through: cut,
      tokensBefore,
      tokensAfter: 0,
      model: options.model,
    };
    const summaryTokens = summaryMeasure.count([{ role: 'system', content: summary }]);
    if (summaryTokens > maxSummaryTokens)
      return failed(`the summary is too long (${summaryTokens} tokens, at most ${maxSummaryTokens})`, usage);
    const tokensAfter = measure.count(compactedRequest(messages, draft, []));
    if (tokensAfter >= tokensBefore)
      return failed(`the summary saves nothing (${tokensBefore} tokens before, ${tokensAfter} after)`, usage);
    return { record: { ...draft, tokensAfter }, usage };
  };
}
