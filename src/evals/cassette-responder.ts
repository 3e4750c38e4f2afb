import type { AssistantMessage, ReasoningItem } from '../llm/message.js';
import { requestHash } from '../llm/request-hash.js';
import { isSummaryRequest } from '../prompt/compaction.js';
import type { ScriptedFinishReason, ScriptedTurn, ScriptedTurnFn } from '../testing/scenario.js';
import type { Cassette, RecordedCall } from './cassette.js';
import { requestDifference, shownValue } from './recorded-request.js';
import type { ReplayDivergence, ReplayLiveStart, ReplayMatch } from './replay-options.js';

/** What the responder reports while it answers. */
export interface ResponderLog {
  /** The first divergence (strict: the replay stops there). */
  divergence: ReplayDivergence | undefined;
  warnings: string[];
  /** Model calls answered from the recording. */
  answered: number;
  /** Where the replay went on live (`afterRecording`): from then on, tools run as they are. */
  liveFrom?: ReplayLiveStart;
  /** Compactions of the recording passed: their summary calls answered, or missed and warned of. */
  compacted?: number;
}

const FINISH_REASONS: ReadonlySet<string> = new Set(['stop', 'tool_calls', 'length', 'content_filter']);

/**
 * The scripted server's turn function for a replay: the k-th recorded reply answers the k-th model
 * call. Strict: a request whose hash differs from the recorded one gets a 400 (the agent does not
 * retry it) and the divergence is logged; sequential: it is answered anyway and a warning says where
 * it differed. A recorded call answered at attempt n gets n-1 retryable errors first, so the agent
 * retries as it did live. A summary call (compaction) is answered with the summary of the recording's
 * compaction at that point; one the recording does not have there, or a compaction the replay skips,
 * is a divergence (strict) or a warning (sequential); an unrecorded summary call gets a 400, so that
 * compaction fails and the agent goes on without it.
 */
export function cassetteResponder(cassette: Cassette, match: ReplayMatch, log: ResponderLog): ScriptedTurnFn {
  let failuresServed = 0;
  const refuse = (message: string): ScriptedTurn => ({
    error: { status: 400, type: 'invalid_request_error', code: 'replay_divergence', message },
  });
  /** Logs a compaction that differs at model call `step`: the divergence (strict) or a warning. */
  const differs = (step: number, what: string): string => {
    const record = cassette.calls[step - 1]?.record;
    const at = record ? { turn: record.turn, iteration: record.iteration } : {};
    const where = record ? ` (turn ${record.turn}, iteration ${record.iteration})` : '';
    const message = `model call ${step}${where}: ${what}`;
    if (match === 'strict') log.divergence ??= { kind: 'request', step, ...at, message };
    else log.warnings.push(message);
    return message;
  };
  return (request, _index, info) => {
    const step = log.answered + 1;
    if (log.divergence && match === 'strict') return refuse('the replay stopped at an earlier divergence');
    const compaction = cassette.compactions[log.compacted ?? 0];
    const due = compaction !== undefined && compaction.afterCalls <= log.answered;
    if (isSummaryRequest(request.messages)) {
      if (!due) {
        const message = differs(
          step,
          'the agent compacted the conversation (a summary call) where the recording did not',
        );
        return refuse(`agentloop replay: ${message}`);
      }
      log.compacted = (log.compacted ?? 0) + 1;
      return { content: compaction.summary };
    }
    if (due) {
      const message = differs(
        step,
        `the recording compacted the conversation before this call (compaction entry seq ${compaction.seq}), the replay did not`,
      );
      if (match === 'strict') return refuse(`agentloop replay: ${message}`);
      while ((cassette.compactions[log.compacted ?? 0]?.afterCalls ?? Infinity) <= log.answered) {
        log.compacted = (log.compacted ?? 0) + 1;
      }
    }
    const call = cassette.calls[log.answered];
    if (!call) {
      const message = `model call ${step}: the recording has ${cassette.calls.length} model call${cassette.calls.length === 1 ? '' : 's'}, the agent made more`;
      log.divergence ??= { kind: 'request', step, message };
      return refuse(`agentloop replay: ${message}`);
    }
    const attempt = call.record?.attempt ?? 1;
    if (failuresServed < attempt - 1) {
      failuresServed++;
      return {
        error: {
          status: 503,
          message: `replayed failure of attempt ${failuresServed}`,
          headers: { 'retry-after-ms': '1' },
        },
      };
    }
    const body = withoutTransport(info.body);
    if (call.record && requestHash(body) !== call.record.requestHash) {
      const divergence = requestDivergence(cassette, call, step, body);
      if (match === 'strict') {
        log.divergence ??= divergence;
        return refuse(`agentloop replay: ${divergence.message}`);
      }
      log.warnings.push(divergence.message);
    } else if (!call.record && match === 'strict') {
      log.warnings.push(`model call ${step}: no recorded request hash; answered by position`);
    }
    failuresServed = 0;
    log.answered++;
    return turnOf(call);
  };
}

/** The body without `stream` / `stream_options` (the hash leaves them out; so does the diff). */
function withoutTransport(body: unknown): Record<string, unknown> {
  const { stream: _stream, stream_options: _options, ...rest } = (body ?? {}) as Record<string, unknown>;
  return rest;
}

function requestDivergence(
  cassette: Cassette,
  call: RecordedCall,
  step: number,
  body: Record<string, unknown>,
): Extract<ReplayDivergence, { kind: 'request' }> {
  const { difference, approximate } = requestDifference(call, conversationBefore(cassette, call.seq), body);
  const where = call.record ? ` (turn ${call.record.turn}, iteration ${call.record.iteration})` : '';
  const base = {
    kind: 'request' as const,
    step,
    ...(call.record ? { turn: call.record.turn, iteration: call.record.iteration } : {}),
  };
  if (!difference) {
    return {
      ...base,
      approximate,
      message: `model call ${step}${where}: the request differs from the recorded one (the recording does not hold enough to name where)`,
    };
  }
  const message =
    `model call ${step}${where}: the request differs at ${difference.path || '(the whole body)'}` +
    `: recorded ${shownValue(difference.recorded)}, now ${shownValue(difference.actual)}` +
    (approximate ? ' (recorded request rebuilt from the transcript)' : '');
  return {
    ...base,
    path: difference.path,
    recorded: difference.recorded,
    actual: difference.actual,
    approximate,
    message,
  };
}

/** The messages of the transcript before the entry `seq` (the conversation as of that call). */
function conversationBefore(cassette: Cassette, seq: number): unknown[] {
  const messages: unknown[] = [];
  for (const entry of cassette.entries) {
    if (entry.seq >= seq) break;
    if (entry.kind === 'message') messages.push(entry.message);
  }
  return messages;
}

/** A recorded reply as the scripted server sends it: the text, the calls with their recorded ids, usage. */
function turnOf(call: RecordedCall): ScriptedTurn {
  const reply: AssistantMessage = call.reply;
  const turn: ScriptedTurn = {};
  const content = textOf(reply.content);
  if (content) turn.content = content;
  const calls = Array.isArray(reply.tool_calls) ? reply.tool_calls : [];
  const toolCalls = calls.flatMap((c) =>
    c?.type === 'function' && typeof c.function?.name === 'string'
      ? [
          {
            id: typeof c.id === 'string' ? c.id : null,
            name: c.function.name,
            arguments: String(c.function.arguments ?? ''),
          },
        ]
      : [],
  );
  if (toolCalls.length > 0) turn.toolCalls = toolCalls;
  // Responses API: the recorded reasoning items go back as they were (the next request holds them).
  const items = Array.isArray(reply.reasoning_items) ? reply.reasoning_items.filter(isReasoningItem) : [];
  if (items.length > 0) turn.reasoningItems = items;
  const finish = call.record?.finishReason;
  if (finish && FINISH_REASONS.has(finish)) turn.finishReason = finish as ScriptedFinishReason;
  // The record comes from a file: counts that are not counts are left to the server's estimate.
  const usage = call.record?.usage;
  if (usage && typeof usage === 'object') {
    turn.usage = {};
    if (isCount(usage.promptTokens)) turn.usage.prompt_tokens = usage.promptTokens;
    if (isCount(usage.completionTokens)) turn.usage.completion_tokens = usage.completionTokens;
    if (isCount(usage.cachedPromptTokens)) turn.usage.cached_tokens = usage.cachedPromptTokens;
  }
  return turn;
}

function isReasoningItem(item: unknown): item is ReasoningItem {
  const value = item as Partial<ReasoningItem> | null;
  return (
    value?.type === 'reasoning' &&
    typeof value.id === 'string' &&
    Array.isArray(value.summary) &&
    value.summary.every((part) => part?.type === 'summary_text' && typeof part.text === 'string') &&
    (value.encrypted_content == null || typeof value.encrypted_content === 'string')
  );
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function textOf(content: AssistantMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part && 'text' in part && typeof part.text === 'string' ? part.text : ''))
    .join('');
}
