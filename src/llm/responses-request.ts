import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsBase,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type {
  FunctionTool,
  ResponseCreateParamsBase,
  ResponseInputContent,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { copyWith } from '../object-copy.js';
import type { Message } from './message.js';
import type { ChatRequestOptions, ModelRequest } from './model-request.js';
import { toXmlRequestMessages, xmlToolInstructions } from './xml-tool-calls.js';

/**
 * The Responses API request of one model call (`client.responses.create`), from the same conversation
 * the Chat Completions wire sends. Stateless: `store: false`, and reasoning comes back encrypted
 * (`include: ['reasoning.encrypted_content']`) to be sent back with the assistant message it came
 * with, so nothing depends on the server remembering a `previous_response_id`.
 */

/** Chat Completions request fields the Responses API takes under another name or shape. */
const RENAMED: Record<string, (value: unknown, body: ResponseCreateParamsBase) => void> = {
  max_completion_tokens: (v, body) => {
    body.max_output_tokens = v as number;
  },
  max_tokens: (v, body) => {
    body.max_output_tokens ??= v as number;
  },
  // A reasoning effort says the model reasons: ask for its summary too (the `thinking` event).
  reasoning_effort: (v, body) => {
    body.reasoning = { effort: v as 'low', summary: 'auto' };
  },
  verbosity: (v, body) => {
    body.text = copyWith(body.text, { verbosity: v as 'low' });
  },
  response_format: (v, body) => {
    const format = v as ChatCompletionCreateParamsBase['response_format'];
    if (!format || format.type === 'text') return;
    body.text = copyWith(body.text, {
      format:
        format.type === 'json_object'
          ? { type: 'json_object' as const }
          : {
              type: 'json_schema' as const,
              name: format.json_schema.name,
              schema: format.json_schema.schema ?? {},
              strict: format.json_schema.strict ?? null,
              ...(format.json_schema.description ? { description: format.json_schema.description } : {}),
            },
    });
  },
};

/** Chat Completions request fields that mean the same in the Responses API. */
const SAME = new Set([
  'temperature',
  'top_p',
  'user',
  'metadata',
  'parallel_tool_calls',
  'service_tier',
  'store',
  'prompt_cache_key',
  'safety_identifier',
  'top_logprobs',
]);

/**
 * The first `request` field the Responses API has no equivalent for (`seed`, `stop`, `n`,
 * `logit_bias`, ...), or `undefined`: the agent refuses it when it is created, naming the field.
 */
export function unsupportedResponsesField(
  request: Readonly<Record<string, unknown>> | undefined,
): string | undefined {
  return Object.entries(request ?? {}).find(
    ([key, value]) => value !== undefined && !RENAMED[key] && !SAME.has(key),
  )?.[0];
}

/**
 * The Responses body (without `stream`): the model, the conversation as input items, function tools
 * with `tool_choice` (`auto`, or `none` when tools are disabled), `store: false` and the encrypted
 * reasoning included. `options.request` fields are mapped (`max_completion_tokens` ->
 * `max_output_tokens`, `reasoning_effort` -> `reasoning`, ...); one without an equivalent throws an
 * error naming it.
 */
export function buildResponsesBody(
  options: ChatRequestOptions,
  request: ModelRequest,
  includeReasoning = true,
): ResponseCreateParamsBase {
  const body: ResponseCreateParamsBase = { model: options.model, store: false };
  if (includeReasoning) body.include = ['reasoning.encrypted_content'];
  for (const [key, value] of Object.entries(options.request ?? {})) {
    if (value === undefined) continue;
    const rename = RENAMED[key];
    if (rename) rename(value, body);
    else if (SAME.has(key)) (body as Record<string, unknown>)[key] = value;
    else {
      throw new Error(
        `request.${key} has no equivalent in the Responses API: leave it out, or use api: 'chat-completions'`,
      );
    }
  }
  if (!includeReasoning) delete body.reasoning;
  const tools = request.tools;
  const native = options.toolFormat !== 'xml';
  let messages = request.messages;
  if (!native && tools.length > 0) {
    const functions = tools.filter((t) => t.type === 'function');
    messages = toXmlRequestMessages(messages, xmlToolInstructions(functions));
  }
  body.input = toInputItems(messages);
  if (native && tools.length > 0) {
    body.tools = tools.map(toFunctionTool);
    body.tool_choice = request.toolsEnabled ? 'auto' : 'none';
  }
  return body;
}

/** A Chat Completions tool as a Responses function tool (`strict` only when the tool asks for it). */
function toFunctionTool(tool: ChatCompletionTool): FunctionTool {
  if (tool.type !== 'function') {
    throw new Error(`tool "${tool.custom.name}": custom tools are not supported on the Responses wire`);
  }
  const fn = tool.function;
  return {
    type: 'function',
    name: fn.name,
    parameters: (fn.parameters as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
    strict: fn.strict ?? false,
    ...(fn.description ? { description: fn.description } : {}),
  };
}

/**
 * The conversation as Responses input items: system, developer and user messages as messages; an
 * assistant message as its reasoning items, its text, then one `function_call` per call; a tool
 * message as the `function_call_output` of its call.
 */
export function toInputItems(messages: readonly Message[]): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        items.push({ role: message.role, content: textOf(message.content) });
        return;
      case 'user':
        items.push({
          role: 'user',
          content:
            typeof message.content === 'string'
              ? message.content
              : message.content.map((p) => inputPart(p, i)),
        });
        return;
      case 'assistant': {
        for (const item of message.reasoning_items ?? []) items.push(item);
        const text = textOf(message.content ?? '') || (message.refusal ?? '');
        // Text beside calls is a typed message item, an answer alone an untyped one: the same to the
        // API, and what lets a stateless reader (the scripted server) tell consecutive messages apart.
        if (text && message.tool_calls?.length)
          items.push({ type: 'message', role: 'assistant', content: text });
        else if (text) items.push({ role: 'assistant', content: text });
        for (const call of message.tool_calls ?? []) {
          if (call.type !== 'function') continue;
          items.push({
            type: 'function_call',
            call_id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          });
        }
        return;
      }
      case 'tool':
        items.push({
          type: 'function_call_output',
          call_id: message.tool_call_id,
          output: textOf(message.content),
        });
        return;
      default:
        throw new Error(`messages[${i}]: a "${message.role}" message cannot be sent on the Responses wire`);
    }
  });
  return items;
}

/** The text of string-or-parts content (text and refusal parts joined). */
function textOf(content: string | ReadonlyArray<{ type: string; text?: string; refusal?: string }>): string {
  if (typeof content === 'string') return content;
  return content.map((part) => part.text ?? part.refusal ?? '').join('');
}

/** A user content part as a Responses input part. */
function inputPart(part: ChatCompletionContentPart, index: number): ResponseInputContent {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image_url':
      return { type: 'input_image', image_url: part.image_url.url, detail: part.image_url.detail ?? 'auto' };
    case 'file':
      return {
        type: 'input_file',
        ...(part.file.file_data ? { file_data: part.file.file_data } : {}),
        ...(part.file.file_id ? { file_id: part.file.file_id } : {}),
        ...(part.file.filename ? { filename: part.file.filename } : {}),
      };
    default:
      throw new Error(`messages[${index}]: a "${part.type}" part cannot be sent on the Responses wire`);
  }
}
