import { DEFAULTS } from '../defaults.js';
import type { Message } from '../llm/message.js';
import type { Plan, PlanStepStatus } from '../tools/update-plan-tool.js';
import { workCounts } from '../work-counters.js';

/** A titled block of text shown to the model before each call, after the system prompt. */
export interface ContextBlock {
  title: string;
  text: string;
}

/** What a context provider is told about the model call it provides for. */
export interface ContextTurn {
  sessionId: string;
  /** The user turn, counted from 1. */
  turn: number;
  /** The model call about to be made within the turn, counted from 1. */
  iteration: number;
  /** The conversation so far (read-only). */
  messages: readonly Message[];
  /** Aborted when the model call is abandoned (an interrupt, the agent stopping). */
  signal: AbortSignal;
}

/**
 * Supplies context for each model call (retrieved documents, the state of the world): evaluated
 * before every call, shown like the plan, counted in the context window's budget. Return nothing to
 * add no block this time; a throw (or rejection) is reported as an `error` event and the call goes on
 * without the block.
 */
export type ContextProvider = (
  turn: ContextTurn,
) => ContextBlock | null | undefined | Promise<ContextBlock | null | undefined>;

const MARKS: Record<PlanStepStatus, string> = { completed: '[x]', in_progress: '[>]', pending: '[ ]' };

/** The plan as the model reads it: one line per step with a checkbox. */
export function planBlock(plan: Plan): ContextBlock {
  const lines = plan.steps.map((s) => `${MARKS[s.status]} ${s.step}`);
  if (plan.explanation) lines.unshift(plan.explanation, '');
  lines.push('', 'Keep it current with update_plan: [x] completed, [>] in progress, [ ] pending.');
  return { title: 'Current plan', text: lines.join('\n') };
}

/** A block's text cut to `DEFAULTS.contextBlockMaxChars`, saying how much was cut. */
function bounded(text: string): string {
  const max = DEFAULTS.contextBlockMaxChars;
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[truncated: ${text.length - max} of ${text.length} characters cut]`;
}

/** One system message per block, titled. */
export function blockMessage(block: ContextBlock): Message {
  return { role: 'system', content: `## ${block.title}\n\n${bounded(block.text)}` };
}

/**
 * The request's messages with the blocks after the leading system messages (the system prompt and
 * critical-action context), where the context window never prunes: the blocks survive pruning and
 * count against its budget. The conversation itself is not changed (messages are append-only).
 */
export function withContextBlocks(messages: Message[], blocks: readonly ContextBlock[]): Message[] {
  if (blocks.length === 0) return messages;
  workCounts.messageCopies++;
  let lead = 0;
  while (
    lead < messages.length &&
    (messages[lead]!.role === 'system' || messages[lead]!.role === 'developer')
  )
    lead++;
  return [...messages.slice(0, lead), ...blocks.map(blockMessage), ...messages.slice(lead)];
}

/** A provider that failed (or returned something that is not a block), for the `error` event. */
export interface ContextProviderFailure {
  index: number;
  message: string;
}

/**
 * Runs every provider for one model call, in parallel. Blocks come back in provider order; a provider
 * that throws, rejects, returns a malformed block or does not answer within `timeoutMs` is left out
 * and reported through `onFailure` (a late one's signal is aborted, so it can stop its work).
 */
export async function evaluateContextProviders(
  providers: readonly ContextProvider[],
  turn: ContextTurn,
  onFailure: (failure: ContextProviderFailure) => void,
  timeoutMs: number = DEFAULTS.contextProviderTimeoutMs,
): Promise<ContextBlock[]> {
  const settled = await Promise.allSettled(providers.map((provide) => withinTime(provide, turn, timeoutMs)));
  const blocks: ContextBlock[] = [];
  settled.forEach((outcome, index) => {
    if (outcome.status === 'rejected') {
      const reason = outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
      onFailure({ index, message: `context provider ${index} failed: ${reason}` });
      return;
    }
    const value = outcome.value;
    if (value === null || value === undefined) return;
    if (typeof value !== 'object' || typeof value.title !== 'string' || typeof value.text !== 'string') {
      onFailure({
        index,
        message: `context provider ${index} returned ${JSON.stringify(value)?.slice(0, 80)}; expected { title, text } strings or nothing`,
      });
      return;
    }
    if (value.text.trim() !== '') blocks.push({ title: value.title, text: value.text });
  });
  return blocks;
}

class ProviderTimeout extends Error {}

/** One provider's answer, or a rejection once `timeoutMs` passed (its own signal then aborts). */
async function withinTime(provide: ContextProvider, turn: ContextTurn, timeoutMs: number) {
  const late = new AbortController();
  const signal = AbortSignal.any([turn.signal, late.signal]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ProviderTimeout(
        `it did not answer within ${timeoutMs} ms; the call went on without it`,
      );
      late.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => provide({ ...turn, signal })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
