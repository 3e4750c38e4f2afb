import { problem, type WireProblem } from './openai-wire.js';
import type { ScriptedRequest } from './scenario.js';

/**
 * A Responses API request (`POST /v1/responses`) as the scripted server sees it: turned into the
 * Chat Completions shape the scenarios, `respond` functions and `server.requests` already know, so one
 * scenario answers both wires. An assistant turn (its reasoning items, its text, its function calls)
 * becomes one assistant message (a new one begins at reasoning or text after text or calls, and after an
 * untyped assistant message item: agentloop sends an answer without calls so), which keeps the reasoning items as `reasoning_items`; a
 * `function_call_output` becomes a `tool` message; `instructions` a first system message.
 */
export type ResponsesView = { ok: true; request: ScriptedRequest } | { ok: false; problem: WireProblem };

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks what OpenAI checks of a Responses body and returns its Chat Completions view. */
export function viewResponsesRequest(body: unknown): ResponsesView {
  const fail = (message: string, param: string | null = null): ResponsesView => ({
    ok: false,
    problem: problem(message, param),
  });
  if (!isObject(body)) return fail('Invalid request body: expected a JSON object.');
  if (typeof body.model !== 'string' || body.model === '') return fail('you must provide a model parameter');
  const input = body.input;
  if (input === undefined) return fail("Missing required parameter: 'input'.", 'input');
  const messages: Json[] = [];
  if (typeof body.instructions === 'string') messages.push({ role: 'system', content: body.instructions });
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (!Array.isArray(input))
    return fail("Invalid type for 'input': expected a string or an array.", 'input');
  else {
    const stateless = body.store === false;
    let assistant: Json | undefined;
    for (let i = 0; i < input.length; i++) {
      const item: unknown = input[i];
      if (!isObject(item)) return fail(`Invalid type for 'input[${i}]': expected an object.`, `input[${i}]`);
      const type = item.type ?? 'message';
      if (type === 'reasoning') {
        if (assistant?.tool_calls || assistant?.content != null) assistant = undefined;
        // With store: false nothing is kept server-side: a reasoning item must bring its content.
        if (stateless && typeof item.encrypted_content !== 'string') {
          return fail(
            `Item with id ${JSON.stringify(item.id)} not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or send the item's \`encrypted_content\`.`,
            `input[${i}]`,
          );
        }
        assistant ??= pushAssistant(messages);
        listOf(assistant, 'reasoning_items').push(item);
        continue;
      }
      if (type === 'function_call') {
        if (typeof item.call_id !== 'string' || item.call_id === '') {
          return fail(`Missing required parameter: 'input[${i}].call_id'.`, `input[${i}].call_id`);
        }
        assistant ??= pushAssistant(messages);
        listOf(assistant, 'tool_calls').push({
          id: item.call_id,
          type: 'function',
          function: { name: item.name, arguments: item.arguments },
        });
        continue;
      }
      if (type === 'message' && item.role === 'assistant') {
        if (assistant?.tool_calls || assistant?.content != null) assistant = undefined;
        assistant ??= pushAssistant(messages);
        assistant.content = textOf(item.content);
        // An answer without calls (an untyped item, as agentloop sends it) ends its message.
        if (item.type === undefined) assistant = undefined;
        continue;
      }
      assistant = undefined;
      if (type === 'function_call_output') {
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: textOf(item.output) });
      } else if (type === 'message') {
        messages.push({ role: item.role, content: textOf(item.content) });
      } else {
        return fail(`Invalid value: ${JSON.stringify(type)} for 'input[${i}].type'.`, `input[${i}].type`);
      }
    }
  }
  return { ok: true, request: chatView(body, messages) };
}

/** The array at `key` of a message being built, made when missing. */
function listOf(message: Json, key: string): unknown[] {
  if (!Array.isArray(message[key])) message[key] = [];
  return message[key] as unknown[];
}

function pushAssistant(messages: Json[]): Json {
  const message: Json = { role: 'assistant', content: null };
  messages.push(message);
  return message;
}

/** The text of string-or-parts content (`input_text`, `output_text`, ... parts joined). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

/** The Chat Completions fields of a Responses body (tools as functions, max tokens renamed). */
function chatView(body: Json, messages: Json[]): ScriptedRequest {
  const view: Json = { model: body.model, messages, stream: body.stream === true };
  if (Array.isArray(body.tools)) {
    view.tools = body.tools.map((tool: Json) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (body.tool_choice !== undefined) view.tool_choice = body.tool_choice;
  if (body.max_output_tokens !== undefined) view.max_completion_tokens = body.max_output_tokens;
  for (const key of ['temperature', 'top_p', 'store', 'include', 'reasoning', 'parallel_tool_calls']) {
    if (body[key] !== undefined) view[key] = body[key];
  }
  return view as unknown as ScriptedRequest;
}
