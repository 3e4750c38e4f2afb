import type {
  ChatCompletionCreateParamsBase,
  ChatCompletionFunctionTool,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { copyWith } from '../object-copy.js';
import { workCounts } from '../work-counters.js';
import type { Message } from './message.js';
import type { ChatRequestOptions, ModelRequest } from './model-request.js';
import { toXmlRequestMessages, xmlToolInstructions } from './xml-tool-calls.js';

/** Whether the calls of this request's reply come as `<tool>` blocks in its text. */
export function callsInText(options: ChatRequestOptions, request: ModelRequest): boolean {
  return options.toolFormat === 'xml' && request.tools.length > 0;
}

/**
 * The Chat Completions body (without `stream`): the extra fields, the model, the messages, and the
 * tools with `tool_choice` (`auto`, or `none` when tools are disabled). In XML mode the tools are
 * described in the messages instead and no `tools` field is sent.
 */
export function buildChatBody(
  options: ChatRequestOptions,
  request: ModelRequest,
): ChatCompletionCreateParamsBase {
  const tools = request.tools;
  let messages = withoutReasoningItems(request.messages);
  const native = options.toolFormat !== 'xml';
  if (!native && tools.length > 0) messages = toXmlRequestMessages(messages, xmlInstructionsFor(tools));
  const body: ChatCompletionCreateParamsBase = copyWith(options.request, { model: options.model, messages });
  if (native && tools.length > 0) {
    body.tools = tools as ChatCompletionTool[];
    body.tool_choice = request.toolsEnabled ? 'auto' : 'none';
  }
  return body;
}

/** XML-mode instructions per tools array (a registry hands out the same array until it changes). */
const instructions = new WeakMap<readonly ChatCompletionTool[], string>();

function xmlInstructionsFor(tools: readonly ChatCompletionTool[]): string {
  let text = instructions.get(tools);
  if (text === undefined) {
    text = xmlToolInstructions(tools.filter((t): t is ChatCompletionFunctionTool => t.type === 'function'));
    instructions.set(tools, text);
  }
  return text;
}

/**
 * The messages without the Responses API's `reasoning_items` (a session may change wires): a copy only
 * when a message holds some.
 */
function withoutReasoningItems(messages: readonly Message[]): Message[] {
  if (!messages.some((m) => m.role === 'assistant' && m.reasoning_items !== undefined)) {
    return messages as Message[];
  }
  workCounts.messageCopies++;
  return messages.map((m) => {
    if (m.role !== 'assistant' || m.reasoning_items === undefined) return m;
    const { reasoning_items: _items, ...rest } = m;
    return rest;
  });
}
