import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { Message } from './message.js';
import type { ModelToolCall } from './model-reply.js';
import { type CallIdScope, settleCallId } from './tool-call-ids.js';

/**
 * The XML tool-call protocol, for models or servers without native function calling. The model writes
 *
 * ```
 * <thinking>why this tool</thinking>
 * <tool>{"server_name": "local", "tool_name": "read_file", "arguments": {"path": "a.md"}}</tool>
 * ```
 *
 * The conversation keeps the native shape (assistant `tool_calls`, `role: 'tool'` results), so the
 * loop, persistence and UIs are the same in both modes; only the request view and the parsing of the
 * answer differ.
 */

/** One call found in the model's text. */
export interface XmlToolCall {
  name: string;
  /** The arguments as JSON text (`{}` when absent); the raw block when it is not valid JSON. */
  argsText: string;
}

const TOOL_BLOCK = /<tool>([\s\S]*?)<\/tool>/g;
const NAME_FIELD = /"tool_name"\s*:\s*"([^"]*)"/;

/** Finds every `<tool>` block in `content`. A block that is not valid JSON still yields a call (it fails with a readable error). */
export function parseXmlToolCalls(content: string): XmlToolCall[] {
  const calls: XmlToolCall[] = [];
  for (const match of content.matchAll(TOOL_BLOCK)) {
    const body = match[1]!.trim();
    try {
      const parsed = JSON.parse(body) as { tool_name?: unknown; arguments?: unknown };
      const name = typeof parsed.tool_name === 'string' ? parsed.tool_name : '';
      calls.push({ name, argsText: JSON.stringify(parsed.arguments ?? {}) });
    } catch {
      calls.push({ name: NAME_FIELD.exec(body)?.[1] ?? '', argsText: body });
    }
  }
  return calls;
}

/**
 * The calls of an XML-mode answer, its `<tool>` blocks in order. They carry no id of their own: each
 * gets `<stem>_<i>` (checked against the conversation's ids like any made id).
 */
export function xmlCallsOf(content: string, scope: CallIdScope): ModelToolCall[] {
  // Made ids of different indexes never collide (`<stem>_<i>`, `<stem>_<i>_<n>`): only the
  // conversation's ids can be taken.
  const taken = (id: string) => scope.usedCallIds.has(id);
  return parseXmlToolCalls(content).map(({ name, argsText }, i) => ({
    id: settleCallId(undefined, i, scope.callIdStem, taken),
    name,
    argsText,
  }));
}

/** The system prompt section that teaches the model the protocol and lists the tools. */
export function xmlToolInstructions(tools: readonly ChatCompletionFunctionTool[]): string {
  const list = tools
    .map((t) => {
      const schema = JSON.stringify(t.function.parameters ?? { type: 'object', properties: {} });
      return `- ${t.function.name}: ${t.function.description ?? ''}\n  arguments (JSON Schema): ${schema}`;
    })
    .join('\n');
  return [
    '<tool_calling>',
    'You call tools by writing XML blocks with embedded JSON, one block per call:',
    '<tool>',
    '{"server_name": "local", "tool_name": "<name>", "arguments": { ... }}',
    '</tool>',
    'Before calling tools, think in <thinking> tags: what you know, what you need, which tool helps.',
    'Stop writing after your tool blocks: the results come back in the next message as',
    '<tool_result tool_name="<name>" id="<id>">...</tool_result>. Write no tool block when you answer the user.',
    '</tool_calling>',
    '<tools>',
    list,
    '</tools>',
  ].join('\n');
}

/**
 * The request view of a conversation in XML mode: the tool instructions after the leading system
 * messages, assistant messages without `tool_calls` (their text already holds the `<tool>` blocks),
 * and each run of tool results as one user message of `<tool_result>` blocks.
 */
export function toXmlRequestMessages(messages: readonly Message[], instructions: string): Message[] {
  const out: Message[] = [];
  let lead = 0;
  while (lead < messages.length && messages[lead]!.role === 'system') lead++;
  out.push(...messages.slice(0, lead), { role: 'system', content: instructions });
  const names = new Map<string, string>();
  let results: string[] = [];
  const flush = () => {
    if (results.length > 0) out.push({ role: 'user', content: results.join('\n') });
    results = [];
  };
  for (const message of messages.slice(lead)) {
    if (message.role === 'tool') {
      const name = names.get(message.tool_call_id) ?? 'unknown';
      const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
      results.push(
        `<tool_result tool_name="${name}" id="${message.tool_call_id}">\n${content}\n</tool_result>`,
      );
      continue;
    }
    flush();
    if (message.role === 'assistant' && message.tool_calls) {
      for (const call of message.tool_calls) {
        if (call.type === 'function') names.set(call.id, call.function.name);
      }
      const { tool_calls: _calls, ...rest } = message;
      out.push({ ...rest, content: rest.content ?? '' });
      continue;
    }
    out.push(message);
  }
  flush();
  return out;
}
