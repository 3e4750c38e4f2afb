import type { Message } from '../llm/message.js';
import { workCounts } from '../work-counters.js';
import { type ContextBlock, withContextBlocks } from './context-blocks.js';

// Compaction by summary: which part of the conversation a summary covers, the request view that sends
// the summary in its place, and what the summary call is asked. Pure: the call itself is in
// machines/actors/compact-conversation.ts. See docs/context-window.md.

/** A summary in effect: it stands for `messages[from, through)` of the conversation in every request. */
export interface CompactionRecord {
  /** The summary the model wrote (the earlier summary, if any, folded in). */
  summary: string;
  /** The first message covered: the one after the leading system messages. */
  from: number;
  /** The first message kept verbatim (exclusive end of the covered range): always a user message. */
  through: number;
  /** Estimated prompt tokens of the request before and after compacting. */
  tokensBefore: number;
  tokensAfter: number;
  /** The model that wrote the summary. */
  model: string;
}

/** The heading of the message that carries the summary in a request. */
export const SUMMARY_HEADING = '## Summary of the earlier conversation';

/** The leading system/developer messages (the system prompt, critical-action context). */
export function leadingSystemCount(messages: readonly Message[]): number {
  let i = 0;
  while (i < messages.length && (messages[i]!.role === 'system' || messages[i]!.role === 'developer')) i++;
  return i;
}

/**
 * Where a new summary would end: the last user message (it and everything after it stay verbatim, and
 * a user message never splits a tool call from its result). `undefined` when it would cover nothing
 * that the summary in effect does not already cover.
 */
export function compactionCut(
  messages: readonly Message[],
  current: CompactionRecord | null,
): number | undefined {
  const start = current?.through ?? leadingSystemCount(messages);
  for (let i = messages.length - 1; i > start; i--) if (messages[i]!.role === 'user') return i;
  return undefined;
}

const summaryMessages = new WeakMap<CompactionRecord, Message>();

/** The message that carries a summary in requests (one object per record, so its token count is cached). */
export function summaryMessage(record: CompactionRecord): Message {
  let message = summaryMessages.get(record);
  if (!message) {
    const covered = record.through - record.from;
    message = {
      role: 'system',
      content: `${SUMMARY_HEADING} (${covered} message${covered === 1 ? '' : 's'} before this point)\n\n${record.summary}`,
    };
    summaryMessages.set(record, message);
  }
  return message;
}

/**
 * The request's messages: the system prompt, the blocks (the plan, context providers'), the summary,
 * then the conversation from `through` on, verbatim. Without a record, the conversation with its blocks.
 * The summary sits among the leading system messages, where pruning never reaches it.
 */
export function compactedRequest(
  messages: Message[],
  record: CompactionRecord | null,
  blocks: readonly ContextBlock[],
): Message[] {
  if (!record) return withContextBlocks(messages, blocks);
  workCounts.messageCopies++;
  const lead = messages.slice(0, record.from);
  const withBlocks = withContextBlocks(lead, blocks);
  return [...withBlocks, summaryMessage(record), ...messages.slice(record.through)];
}

/**
 * The reason a value is not a usable compaction of `messages` (a saved or transcribed one is hostile
 * input), or undefined when it is one: a non-empty summary, a range that starts after the leading
 * system messages and ends at a user message of this conversation, counts that are counts.
 */
export function compactionProblem(value: unknown, messages: readonly Message[]): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const record = value as Record<string, unknown>;
  if (typeof record.summary !== 'string' || record.summary.trim() === '') return 'no summary';
  for (const key of ['from', 'through', 'tokensBefore', 'tokensAfter'] as const) {
    if (!Number.isSafeInteger(record[key]) || (record[key] as number) < 0) return `"${key}" is not a count`;
  }
  if (typeof record.model !== 'string') return '"model" is not a string';
  const from = record.from as number;
  const through = record.through as number;
  if (from !== leadingSystemCount(messages))
    return `"from" (${from}) is not the first message after the system prompt`;
  if (through <= from || through >= messages.length)
    return `"through" (${through}) is outside the conversation`;
  if (messages[through]!.role !== 'user') return `"through" (${through}) is not a user message`;
  return undefined;
}

/** What the summary call is told to do. */
export const SUMMARY_INSTRUCTIONS = [
  'You compact the conversation of an agent that continues working after this.',
  'Write a summary that replaces the conversation below in its context. It must keep everything the',
  'agent needs to go on: the goals, the decisions made and why, the facts learned (names, numbers,',
  'paths, values, exactly as written), the files and artifacts read or written, the open questions,',
  'and the current plan. Fold an earlier summary in. Be complete on facts, brief on everything else.',
  'Answer with the summary only.',
].join('\n');

/**
 * Whether `messages` are a summary call's (their system prompt starts with the summary instructions):
 * how a replay tells the summary call from the agent's own, which the transcript records no
 * `model_call` for (the `compaction` entry holds its reply).
 */
export function isSummaryRequest(messages: readonly unknown[]): boolean {
  const first = messages[0] as { role?: unknown; content?: unknown } | undefined;
  return (
    first?.role === 'system' &&
    typeof first.content === 'string' &&
    first.content.startsWith(SUMMARY_INSTRUCTIONS)
  );
}

/** Characters of one message kept in the text the summary call reads, before it is shortened. */
const MESSAGE_CHARS = 8_000;
/** The fewest characters a message is shortened to; below it, the oldest messages are left out. */
const MIN_MESSAGE_CHARS = 400;

/** The summary call's request: instructions, then the covered conversation as text. */
export interface SummaryRequest {
  messages: Message[];
  /** Messages of the covered range left out because the text did not fit (oldest first). */
  leftOut: number;
}

/**
 * The summary call's messages for covering `messages[from, cut)` (with the summary in effect folded
 * in), shortened until `fits` says they fit: each message's text is cut to fewer characters, then
 * the oldest messages are left out. `undefined` when even the newest message alone does not fit.
 */
export function summaryRequest(
  messages: readonly Message[],
  current: CompactionRecord | null,
  cut: number,
  instructions: string | undefined,
  fits: (request: Message[]) => boolean,
): SummaryRequest | undefined {
  const from = current?.through ?? leadingSystemCount(messages);
  const covered = messages.slice(from, cut);
  const system = instructions?.trim()
    ? `${SUMMARY_INSTRUCTIONS}\n\nThe user asks: ${instructions.trim()}`
    : SUMMARY_INSTRUCTIONS;
  const build = (skip: number, chars: number): Message[] => {
    const parts: string[] = [];
    if (current) parts.push(`[earlier summary]\n${current.summary}`);
    if (skip > 0)
      parts.push(`[${skip} older message${skip === 1 ? '' : 's'} left out: too long to summarize]`);
    for (const message of covered.slice(skip)) parts.push(messageText(message, chars));
    return [
      { role: 'system', content: system },
      { role: 'user', content: `The conversation to summarize:\n\n${parts.join('\n\n')}` },
    ];
  };
  for (let chars = MESSAGE_CHARS; chars >= MIN_MESSAGE_CHARS; chars = Math.floor(chars / 2)) {
    const request = build(0, chars);
    if (fits(request)) return { messages: request, leftOut: 0 };
  }
  for (let skip = 1; skip < covered.length; skip++) {
    const request = build(skip, MIN_MESSAGE_CHARS);
    if (fits(request)) return { messages: request, leftOut: skip };
  }
  return undefined;
}

/** One message as a line of the text the summary call reads. */
function messageText(message: Message, chars: number): string {
  const cap = (text: string) =>
    text.length > chars ? `${text.slice(0, chars)}… [${text.length - chars} more characters]` : text;
  const content = contentText(message.content);
  if (message.role === 'assistant') {
    const calls = (message.tool_calls ?? []).map((call) =>
      call.type === 'function'
        ? `${call.function.name}(${call.function.arguments})`
        : `${call.custom.name}(${call.custom.input})`,
    );
    const said = content ? cap(content) : '';
    return `assistant: ${said}${calls.length > 0 ? `${said ? '\n' : ''}calls ${cap(calls.join(', '))}` : ''}`;
  }
  if (message.role === 'tool') return `tool result (${message.tool_call_id}): ${cap(content)}`;
  return `${message.role}: ${cap(content)}`;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : '[non-text part]',
    )
    .join('');
}
