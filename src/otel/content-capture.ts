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
  return [{ role: 'assistant', parts, finish_reason: finishReason ?? 'stop' }];
}

/** A user's text as `gen_ai.input.messages`. */
export function userMessage(text: string): ConventionMessage[] {
  return [{ role: 'user', parts: [{ type: 'text', content: text }] }];
}

/** A turn's answer as `gen_ai.output.messages`. */
export function answerMessage(text: string, finishReason: string): ConventionMessage[] {
  return [{ role: 'assistant', parts: [{ type: 'text', content: text }], finish_reason: finishReason }];
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

function cutStrings(value: unknown, limit: number): unknown {
  if (typeof value === 'string') {
    if (value.length <= limit) return value;
    return `${value.slice(0, limit)}…[${value.length - limit} chars cut]`;
  }
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
