/**
 * Reading the fields of a model server's reply. Servers differ (content as a string or as typed parts,
 * reasoning in `reasoning_content` or `reasoning`, refusals, tool calls with or without `type` and
 * `index`) and some send fields of a type nobody expects: every field is used when it can be, and a
 * field that cannot be ends the call with a `ReplyShapeError` that says what the server sent. Nothing
 * is turned into text with `String(obj)`, and nothing is dropped without a word.
 */

import { copyWith } from '../object-copy.js';

/** Reports a part of a reply that was left out (an unknown content part type), for the debug log. */
export type ReplyNotice = (message: string) => void;

/** A reply field of a type the wire cannot use: the call ends with this error (not retried). */
export class ReplyShapeError extends Error {
  override readonly name = 'ReplyShapeError';
  constructor(where: string, value: unknown, expected: string) {
    super(`the model server sent \`${where}\` as ${describeValue(value)}; expected ${expected}`);
  }
}

/** A short, safe description of a value: its kind and a JSON preview. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  const kind = Array.isArray(value)
    ? 'an array'
    : typeof value === 'object'
      ? 'an object'
      : `a ${typeof value}`;
  return `${kind} (${preview(value)})`;
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? typeof value;
  } catch {
    text = typeof value;
  }
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** Whether a value is a plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field that must be text when present: a string, or '' for null/absent. */
export function textField(value: unknown, where: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  throw new ReplyShapeError(where, value, 'a string');
}

/** Text and reasoning read from a `content` field. */
export interface ContentText {
  text: string;
  reasoning: string;
}

const TEXT_PARTS = new Set(['text', 'output_text']);
const REASONING_PARTS = new Set(['thinking', 'reasoning', 'reasoning_text']);

/**
 * A message's (or a delta's) `content`: a string; or an array of typed parts, whose text parts
 * (`text`, `output_text`) are joined into the answer and whose reasoning parts (`thinking` with text or
 * a list of text parts, `reasoning`) become reasoning. Other part types stay out of the text and are
 * told to `notice`. A part of a known type with text of the wrong type, or content of any other type,
 * is a `ReplyShapeError`.
 */
export function readContent(value: unknown, where: string, notice?: ReplyNotice): ContentText {
  if (value === undefined || value === null) return { text: '', reasoning: '' };
  if (typeof value === 'string') return { text: value, reasoning: '' };
  if (!Array.isArray(value)) throw new ReplyShapeError(where, value, 'a string or an array of parts');
  let text = '';
  let reasoning = '';
  value.forEach((part: unknown, i) => {
    const at = `${where}[${i}]`;
    if (typeof part === 'string') {
      text += part;
      return;
    }
    if (!isRecord(part) || typeof part.type !== 'string') {
      throw new ReplyShapeError(at, part, 'a part with a string `type`');
    }
    if (TEXT_PARTS.has(part.type)) text += textField(part.text, `${at}.text`);
    else if (REASONING_PARTS.has(part.type)) reasoning += reasoningOfPart(part, at);
    else notice?.(`${where}: a part of type "${part.type}" was left out of the answer`);
  });
  return { text, reasoning };
}

/** A reasoning part's text: `thinking` (a string or text parts), else `text`, else `summary` parts. */
function reasoningOfPart(part: Record<string, unknown>, where: string): string {
  const body = part.thinking ?? part.text ?? part.summary ?? part.content;
  if (Array.isArray(body)) return readContent(body, `${where}.${fieldName(part)}`).text;
  return textField(body, `${where}.${fieldName(part)}`);
}

function fieldName(part: Record<string, unknown>): string {
  for (const key of ['thinking', 'text', 'summary', 'content']) if (part[key] !== undefined) return key;
  return 'thinking';
}

/**
 * The reasoning a message or delta carries beside its text: `reasoning_content` (DeepSeek, older vLLM)
 * or `reasoning` (vLLM, Ollama, Groq, OpenRouter), each a string.
 */
export function reasoningField(holder: Record<string, unknown>, where: string): string {
  const a = textField(holder.reasoning_content, `${where}.reasoning_content`);
  const b = textField(holder.reasoning, `${where}.reasoning`);
  return a && b && a === b ? a : a + b;
}

/** A `finish_reason`: a string, or `null` while a stream goes on. */
export function finishReasonField(value: unknown, where: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  throw new ReplyShapeError(where, value, 'a string');
}

/** A call's arguments: a string as sent, an object (some servers send one) as its JSON, '' for none. */
export function argumentsField(value: unknown, where: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (isRecord(value)) return JSON.stringify(value);
  throw new ReplyShapeError(where, value, 'a JSON string');
}

/** Token counts as the Chat Completions API reports them. */
export interface UsageCounts {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** The part of `prompt_tokens` served from the prompt cache, when the server said. */
  cached_tokens?: number;
  /** The part of `completion_tokens` spent reasoning, when the server said (telemetry reports it). */
  reasoning_tokens?: number;
}

/** A `usage` object: its counts (a missing total is the sum), `null` when absent. */
export function usageField(value: unknown, where: string): UsageCounts | null {
  return usageCounts(value, where, CHAT_USAGE_KEYS);
}

/** Where a Chat Completions usage keeps its counts (one object: `usageField` reads every chunk's usage). */
const CHAT_USAGE_KEYS: UsageKeys = {
  input: 'prompt_tokens',
  output: 'completion_tokens',
  details: 'prompt_tokens_details',
  outputDetails: 'completion_tokens_details',
};

/** Where a wire's usage object keeps its input and output counts and the input's details. */
export interface UsageKeys {
  input: string;
  output: string;
  details: string;
  /** Where the output's details (`reasoning_tokens`) are. */
  outputDetails: string;
}

/** A wire's usage object in Chat Completions' terms: absent counts are 0, a missing total the sum. */
export function usageCounts(value: unknown, where: string, keys: UsageKeys): UsageCounts | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw new ReplyShapeError(where, value, 'an object');
  const count = (key: string): number => {
    const n = value[key];
    if (n === undefined || n === null) return 0;
    if (typeof n === 'number' && Number.isFinite(n)) return n;
    throw new ReplyShapeError(`${where}.${key}`, n, 'a number');
  };
  const input = count(keys.input);
  const output = count(keys.output);
  const total = value.total_tokens === undefined ? input + output : count('total_tokens');
  const counts = withCachedTokens(
    { prompt_tokens: input, completion_tokens: output, total_tokens: total },
    value[keys.details],
  );
  const outputDetails = value[keys.outputDetails];
  const reasoning = isRecord(outputDetails) ? outputDetails.reasoning_tokens : undefined;
  if (typeof reasoning === 'number' && Number.isInteger(reasoning) && reasoning > 0)
    counts.reasoning_tokens = Math.min(reasoning, output);
  return counts;
}

/**
 * The counts with `cached_tokens` from a usage's details (`prompt_tokens_details` on Chat Completions,
 * `input_tokens_details` on the Responses API) when it is a count no larger than the prompt. Anything
 * else is left out rather than refused: the cached part only lowers a cost, so without it the input is
 * billed at the full price, the safe side.
 */
function withCachedTokens(counts: UsageCounts, details: unknown): UsageCounts {
  const cached = isRecord(details) ? details.cached_tokens : undefined;
  if (typeof cached !== 'number' || !Number.isInteger(cached) || cached <= 0) return counts;
  return copyWith(counts, { cached_tokens: Math.min(cached, counts.prompt_tokens) });
}

/** The name a call without a usable function name is recorded under (the API refuses an empty one). */
export const UNNAMED_CALL = 'unnamed_call';

/** A call that cannot be run, recorded under `UNNAMED_CALL` with why (`what` names what was sent). */
export function unusableCall(what: string): { name: string; argsText: string; problem: string } {
  return {
    name: UNNAMED_CALL,
    argsText: '{}',
    problem: `the model server sent a tool call without a function name, which cannot be run: ${what}`,
  };
}
