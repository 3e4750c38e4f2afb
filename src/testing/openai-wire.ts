import type { ReasoningItem } from '../llm/message.js';
import type { ScriptedFinishReason, ScriptedRequest, ScriptedTurn } from './scenario.js';
import { splitText } from './split-text.js';

/** An error answer in OpenAI's shape: `{ error: { message, type, param, code } }` with an HTTP status. */
export interface WireProblem {
  status: number;
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** The outcome of checking a request: its assistant-message count, or why OpenAI would refuse it. */
export type RequestCheck = { ok: true; assistantCount: number } | { ok: false; problem: WireProblem };

/** A tool call ready to send: id assigned, arguments serialised. */
export interface WireToolCall {
  /** `null`: the call is sent without an `id` field. */
  id: string | null;
  name: string;
  arguments: string;
}

/** Token counts as OpenAI reports them. */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/** Everything one answer needs, shared by the JSON and SSE encoders. */
export interface WireReply {
  id: string;
  created: number;
  model: string;
  content: string | null;
  /** Reasoning sent beside the answer ('' for none): `reasoning_content` here, a reasoning item on the Responses wire. */
  reasoning: string;
  /** Responses API: reasoning items sent as they are instead of the one made from `reasoning`. */
  reasoningItems?: ReasoningItem[];
  toolCalls: WireToolCall[];
  finishReason: ScriptedFinishReason;
  usage: WireUsage;
}

/** SSE events of one streamed answer, with where the `cut-*` faults break the stream. */
export interface StreamPlan {
  /** Complete `data: ...\n\n` events, `data: [DONE]` last. */
  events: string[];
  /** How many events to send before destroying the socket for `cut-mid-text`. */
  cutMidText: number;
  /** How many events to send before destroying the socket for `cut-mid-tool-call`. */
  cutMidToolCall: number;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
/** Sent when a turn scripts tool calls but the request offers no tools (or `tool_choice: 'none'`). */
export const TOOLS_WITHHELD_TEXT = 'I cannot call tools for this request, so here is a direct answer.';

/** Builds a problem with OpenAI's defaults (`invalid_request_error`, HTTP 400). */
export function problem(
  message: string,
  param: string | null = null,
  code: string | null = null,
  status = 400,
  type = 'invalid_request_error',
): WireProblem {
  return { status, message, type, param, code };
}

/** Serialises a problem as OpenAI's error JSON. */
export function errorJson(p: Omit<WireProblem, 'status'>): string {
  return JSON.stringify({ error: { message: p.message, type: p.type, param: p.param, code: p.code } });
}

/** OpenAI's default `error.type` / `error.code` for an HTTP status. */
export function defaultErrorKind(status: number): { type: string; code: string | null } {
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status >= 500) return { type: 'server_error', code: null };
  return { type: 'invalid_request_error', code: null };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a parsed body the way OpenAI does (model, messages, roles, non-empty call ids, every tool call answered by a
 * `tool` message before the next other message, no stray tool messages) and counts the assistant
 * messages, in one pass.
 */
export function checkChatRequest(body: unknown): RequestCheck {
  const fail = (p: WireProblem): RequestCheck => ({ ok: false, problem: p });
  if (!isObject(body)) return fail(problem('Invalid request body: expected a JSON object.'));
  if (typeof body.model !== 'string' || body.model === '') {
    return fail(problem('you must provide a model parameter'));
  }
  const messages = body.messages;
  if (messages === undefined) {
    return fail(problem("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter'));
  }
  if (!Array.isArray(messages)) {
    return fail(
      problem("Invalid type for 'messages': expected an array of objects.", 'messages', 'invalid_type'),
    );
  }
  if (messages.length === 0) {
    return fail(
      problem(
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        'messages',
        'empty_array',
      ),
    );
  }
  if (body.stream_options != null && body.stream !== true) {
    return fail(
      problem("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options'),
    );
  }

  let assistantCount = 0;
  // Tool-call ids of the last assistant message still waiting for their `tool` message.
  let pending: Set<string> | null = null;
  let pendingAt = -1;
  const unanswered = () =>
    problem(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
        `'tool_call_id'. The following tool_call_ids did not have response messages: ${[...(pending ?? [])].join(', ')}`,
      `messages.[${pendingAt}].role`,
    );

  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (!isObject(message)) {
      return fail(
        problem(`Invalid type for 'messages[${i}]': expected an object.`, `messages[${i}]`, 'invalid_type'),
      );
    }
    const role = message.role;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      return fail(
        role === undefined
          ? problem(
              `Missing required parameter: 'messages[${i}].role'.`,
              `messages[${i}].role`,
              'missing_required_parameter',
            )
          : problem(
              `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
              `messages[${i}].role`,
              'invalid_value',
            ),
      );
    }
    if (role === 'tool') {
      const id = message.tool_call_id;
      if (typeof id !== 'string') {
        return fail(
          problem(
            `Missing required parameter: 'messages[${i}].tool_call_id'.`,
            `messages[${i}].tool_call_id`,
            'missing_required_parameter',
          ),
        );
      }
      if (pending === null) {
        return fail(
          problem(
            `Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id '${id}').`,
            `messages.[${i}].role`,
          ),
        );
      }
      if (!pending.delete(id)) {
        return fail(
          problem(
            `Invalid parameter: tool_call_id '${id}' of messages[${i}] answers no unanswered call in 'tool_calls' of messages[${pendingAt}].`,
            `messages.[${i}].tool_call_id`,
          ),
        );
      }
      continue;
    }
    if (pending !== null && pending.size > 0) return fail(unanswered());
    pending = null;
    if (role !== 'assistant') continue;
    assistantCount++;
    const calls = message.tool_calls;
    if (Array.isArray(calls) && calls.length > 0) {
      pending = new Set();
      pendingAt = i;
      for (let j = 0; j < calls.length; j++) {
        const call: unknown = calls[j];
        const id = isObject(call) ? call.id : undefined;
        if (typeof id !== 'string') {
          return fail(
            problem(
              `Missing required parameter: 'messages[${i}].tool_calls[${j}].id'.`,
              `messages[${i}].tool_calls[${j}].id`,
              'missing_required_parameter',
            ),
          );
        }
        if (id === '') {
          return fail(
            problem(
              `Invalid 'messages[${i}].tool_calls[${j}].id': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
              `messages[${i}].tool_calls[${j}].id`,
              'empty_string',
            ),
          );
        }
        pending.add(id);
      }
    }
  }
  if (pending !== null && pending.size > 0) return fail(unanswered());
  return { ok: true, assistantCount };
}

/** Where a reply comes from: the request it answers and the server's naming. */
export interface ReplyContext {
  request: ScriptedRequest;
  /** Turn index (assistant-message count). */
  index: number;
  /** Size of the raw request body, for the usage estimate. */
  requestBytes: number;
  /** Model to report. */
  model: string;
  /** Server-wide request sequence number, for unique completion ids. */
  seq: number;
}

/** True when a real model could call tools for this request. */
export function toolsAllowed(request: ScriptedRequest): boolean {
  return request.tool_choice !== 'none' && Array.isArray(request.tools) && request.tools.length > 0;
}

/** Resolves a scripted turn into what is sent: ids, serialised arguments, finish reason, usage. */
export function buildReply(turn: ScriptedTurn, ctx: ReplyContext): WireReply {
  const scripted = turn.toolCalls ?? [];
  const allowed = scripted.length > 0 && toolsAllowed(ctx.request);
  const toolCalls: WireToolCall[] = allowed
    ? scripted.map((call, i) => ({
        id: call.id === undefined ? `call_${ctx.index}_${i}` : call.id,
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      }))
    : [];
  const withheld = scripted.length > 0 && !allowed;
  let content = turn.content ?? null;
  if (content === null && toolCalls.length === 0) content = withheld ? TOOLS_WITHHELD_TEXT : '';
  let finishReason = turn.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
  if (withheld && finishReason === 'tool_calls') finishReason = 'stop';

  let replyChars = content?.length ?? 0;
  for (const call of toolCalls) replyChars += call.name.length + call.arguments.length;
  const prompt = turn.usage?.prompt_tokens ?? Math.ceil(ctx.requestBytes / 4);
  const completion = turn.usage?.completion_tokens ?? Math.max(1, Math.ceil(replyChars / 4));
  return {
    id: `chatcmpl-scripted-${ctx.seq}`,
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    content,
    reasoning: turn.reasoning ?? '',
    ...(turn.reasoningItems?.length ? { reasoningItems: turn.reasoningItems } : {}),
    toolCalls,
    finishReason,
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: Math.min(turn.usage?.cached_tokens ?? 0, prompt) },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  };
}

/** The non-streaming `chat.completion` JSON body. */
export function completionJson(reply: WireReply): string {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: reply.content,
    refusal: null,
    annotations: [],
  };
  if (reply.reasoning) message.reasoning_content = reply.reasoning;
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((call) => ({
      ...(call.id === null ? {} : { id: call.id }),
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return JSON.stringify({
    id: reply.id,
    object: 'chat.completion',
    created: reply.created,
    model: reply.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason }],
    usage: reply.usage,
    system_fingerprint: null,
  });
}

/**
 * Where to break a non-streaming body for a `cut-*` fault: one character into the content or into
 * the first tool call's arguments (half the body when there is none).
 */
export function completionCutPoint(body: string, fault: 'cut-mid-text' | 'cut-mid-tool-call'): number {
  // Chat Completions text is `"content":"`; the Responses API's is an output_text part's `"text":"`.
  const markers = fault === 'cut-mid-text' ? ['"content":"', '"output_text","text":"'] : ['"arguments":"'];
  for (const marker of markers) {
    const at = body.indexOf(marker);
    if (at >= 0) return at + marker.length + 1;
  }
  return Math.floor(body.length / 2);
}

/**
 * Encodes a reply as OpenAI's SSE stream: a first chunk with `delta.role`, content deltas, tool-call
 * deltas (per call: a chunk with index, id, type, name and empty arguments, then chunks with index
 * and an arguments fragment), a chunk with `finish_reason`, a usage chunk with empty `choices` when
 * `includeUsage`, then `data: [DONE]`.
 */
export function streamEvents(
  reply: WireReply,
  options: { includeUsage: boolean; chunkSize: number | undefined },
): StreamPlan {
  const head = `data: {"id":${JSON.stringify(reply.id)},"object":"chat.completion.chunk","created":${reply.created},"model":${JSON.stringify(reply.model)},"system_fingerprint":null,"choices":[{"index":0,"delta":`;
  const tail = options.includeUsage
    ? ',"logprobs":null,"finish_reason":null}],"usage":null}\n\n'
    : ',"logprobs":null,"finish_reason":null}]}\n\n';
  const event = (delta: unknown) => head + JSON.stringify(delta) + tail;

  const events: string[] = [
    event(
      reply.content === null
        ? { role: 'assistant', content: null, refusal: null }
        : { role: 'assistant', content: '', refusal: null },
    ),
  ];
  for (const piece of splitText(reply.reasoning, options.chunkSize))
    events.push(event({ reasoning_content: piece }));
  const textStart = events.length;
  const textPieces = reply.content === null ? [] : splitText(reply.content, options.chunkSize);
  for (const piece of textPieces) events.push(event({ content: piece }));
  let cutMidToolCall = events.length;
  reply.toolCalls.forEach((call, index) => {
    events.push(
      event({
        tool_calls: [
          {
            index,
            ...(call.id === null ? {} : { id: call.id }),
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    const fragments = splitText(call.arguments, options.chunkSize);
    if (index === 0) cutMidToolCall = events.length + Math.floor(fragments.length / 2);
    for (const fragment of fragments)
      events.push(event({ tool_calls: [{ index, function: { arguments: fragment } }] }));
  });
  events.push(
    `${head}{},"logprobs":null,"finish_reason":${JSON.stringify(reply.finishReason)}}]${options.includeUsage ? ',"usage":null' : ''}}\n\n`,
  );
  if (options.includeUsage) {
    events.push(
      `data: {"id":${JSON.stringify(reply.id)},"object":"chat.completion.chunk","created":${reply.created},"model":${JSON.stringify(reply.model)},"system_fingerprint":null,"choices":[],"usage":${JSON.stringify(reply.usage)}}\n\n`,
    );
  }
  events.push('data: [DONE]\n\n');
  return { events, cutMidText: textStart + Math.floor(textPieces.length / 2), cutMidToolCall };
}
