/**
 * Content as the GenAI conventions record it (`gen_ai.input.messages`, `gen_ai.output.messages`,
 * `gen_ai.system_instructions`, `gen_ai.tool.call.arguments` / `.result`): JSON of messages with
 * typed parts. Everything goes through the agent's redaction first and is cut to a size with its
 * structure kept: long strings are shortened, never the JSON itself.
 */

/** One part of a message in the conventions' shape. */
type Part =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: unknown };

interface ConventionMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

/** Whether content is recorded: the option, else `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`. */
export function captureFromEnv(option: boolean | undefined, env = process.env): boolean {
  if (option !== undefined) return option;
  return env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true';
}

/** The system messages as `gen_ai.system_instructions` parts, the others as `gen_ai.input.messages`. */
export function inputMessages(messages: readonly unknown[]): { system: Part[]; input: ConventionMessage[] } {
  const system: Part[] = [];
  const input: ConventionMessage[] = [];
  for (const raw of messages) {
    if (typeof raw !== 'object' || raw === null) continue;
    const m = raw as { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown };
    const role = typeof m.role === 'string' ? m.role : 'user';
    const text = textOf(m.content);
    if (role === 'system' || role === 'developer') {
      if (text) system.push({ type: 'text', content: text });
      continue;
    }
    if (role === 'tool') {
      input.push({
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: String(m.tool_call_id ?? ''), response: text }],
      });
      continue;
    }
    const parts: Part[] = text ? [{ type: 'text', content: text }] : [];
    for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
      const fn = (call as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) ?? {};
      parts.push({
        type: 'tool_call',
        id: String(fn.id ?? ''),
        name: String(fn.function?.name ?? ''),
        arguments: parsedArguments(fn.function?.arguments),
      });
    }
    input.push({ role, parts });
  }
  return { system, input };
}

/** The assistant's answer as `gen_ai.output.messages`. */
export function outputMessages(
  output: { content: string; toolCalls: readonly { id: string; name: string; arguments: string }[] },
  finishReason: string | undefined,
): ConventionMessage[] {
  const parts: Part[] = output.content ? [{ type: 'text', content: output.content }] : [];
  for (const call of output.toolCalls)
    parts.push({
      type: 'tool_call',
      id: call.id,
      name: call.name,
      arguments: parsedArguments(call.arguments),
    });
  return [{ role: 'assistant', parts, finish_reason: modelFinishReason(finishReason) }];
}

/** A user's text as `gen_ai.input.messages`. */
export function userMessage(text: string): ConventionMessage[] {
  return [{ role: 'user', parts: [{ type: 'text', content: text }] }];
}

/**
 * A turn's answer as `gen_ai.output.messages`, its `finish_reason` the conventions' value for the
 * turn's terminate reason ({@link turnFinishReason}).
 */
export function answerMessage(text: string, terminateReason: string): ConventionMessage[] {
  return [
    {
      role: 'assistant',
      parts: [{ type: 'text', content: text }],
      finish_reason: turnFinishReason(terminateReason),
    },
  ];
}

/** The finish reasons the GenAI conventions name for an output message. */
export type GenAiFinishReason = 'stop' | 'length' | 'content_filter' | 'tool_call' | 'error';

/**
 * A model reply's finish reason in the conventions' terms: Chat Completions' `tool_calls` (and the
 * older `function_call`) is `tool_call`; `stop`, `length` and `content_filter` are the same; anything
 * else (a provider's own value) is `stop`, and none (a reply cut short) is `error`.
 */
export function modelFinishReason(reason: string | undefined): GenAiFinishReason {
  if (reason === undefined || reason === '') return 'error';
  if (reason === 'tool_calls' || reason === 'function_call' || reason === 'tool_call') return 'tool_call';
  if (reason === 'length' || reason === 'content_filter') return reason;
  return 'stop';
}

/**
 * A turn's terminate reason in the conventions' terms (the reason itself stays in
 * `agentloop.terminate_reason`): an answer or a question is `stop`; the model's token limit and the
 * turn's own limits on iterations, tokens and cost are `length`; a filtered reply is `content_filter`;
 * an error, a timeout, an interrupt, repeated calls and a failing streak are `error`.
 */
export function turnFinishReason(terminateReason: string): GenAiFinishReason {
  switch (terminateReason) {
    case 'completed':
    case 'question':
      return 'stop';
    case 'length':
    case 'max_iterations':
    case 'token_budget':
    case 'cost_budget':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'error';
  }
}

/**
 * A span's status message: `text` redacted and, when longer than `max`, cut with a note of how much
 * was, as captured content's strings are.
 */
export function statusMessage(text: string, redact: <T>(v: T) => T, max: number): string {
  return cutString(redact(text), Math.max(MIN_KEPT, max));
}

/** Arguments as JSON when they parse (the conventions record an object), else the text as sent. */
export function parsedArguments(text: unknown): unknown {
  if (typeof text !== 'string') return text ?? {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * `value` redacted and serialized as JSON of at most `max` characters: when it is longer, every string
 * in it is cut to the same length (the longest first: short fields stay whole), with a note of how
 * much was cut, until it fits; objects, arrays and keys are kept.
 */
export function capturedJson(value: unknown, redact: <T>(v: T) => T, max: number): string {
  const redacted = redact(value);
  const full = JSON.stringify(redacted) ?? 'null';
  if (full.length <= max) return full;
  const lengths: number[] = [];
  collectLengths(redacted, lengths);
  lengths.sort((a, b) => b - a);
  // The largest string length that fits, found by halving the range; never below MIN_KEPT, so that
  // the short values that give the structure its meaning (roles, part types, ids) stay whole.
  let low = MIN_KEPT;
  let high = lengths[0] ?? 0;
  let best = JSON.stringify(cutStrings(redacted, MIN_KEPT));
  while (low <= high) {
    const mid = Math.floor((low + high) / 2);
    const text = JSON.stringify(cutStrings(redacted, mid));
    if (text.length <= max) {
      best = text;
      low = mid + 1;
    } else high = mid - 1;
  }
  return best;
}

/** Strings this short are never cut. */
const MIN_KEPT = 64;

function collectLengths(value: unknown, into: number[]): void {
  if (typeof value === 'string') into.push(value.length);
  else if (Array.isArray(value)) for (const v of value) collectLengths(v, into);
  else if (typeof value === 'object' && value !== null)
    for (const v of Object.values(value)) collectLengths(v, into);
}

function cutString(value: string, limit: number): string {
  if (value.length <= limit) return value;
  return `${value.slice(0, limit)}…[${value.length - limit} chars cut]`;
}

function cutStrings(value: unknown, limit: number): unknown {
  if (typeof value === 'string') return cutString(value, limit);
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, limit));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = cutStrings(v, limit);
    return out;
  }
  return value;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (typeof p === 'object' && p !== null && typeof p.text === 'string' ? p.text : ''))
    .join('');
}
