// The model call and the tool calls as the hand-written loop makes them, shared by the harnesses
// that differ only in what drives them (the hand-written loop and the XState harnesses), so
// that their requests, stream assembly and tool runs are the same code.
import {
  lookup,
  MODEL,
  SYSTEM_PROMPT,
  TOOL_DESCRIPTION,
  TOOL_NAME,
  TOOL_PARAMETERS,
  USER_PROMPT,
} from './task.mjs';

const tools = [
  {
    type: 'function',
    function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS },
  },
];
const implementations = { [TOOL_NAME]: lookup };

/**
 * `complete(messages, signal?)`: one Chat Completions call with the task's tool, resolving with the
 * assistant message. Streaming accumulates the deltas (tool calls by index). `onArgsDelivered`
 * (figure 3 only) notes when the SDK hands over the chunk that completes a call's arguments.
 * `request`: the model and tool list to send instead of the task's (bench/lib/engine-shapes.mjs sends
 * the agent's own, so that both loops send the same bodies).
 */
export function createComplete(client, { stream, onArgsDelivered, request }) {
  const model = request?.model ?? MODEL;
  const toolList = request?.tools ?? tools;
  return async (messages, signal) => {
    const body = { model, messages, tools: toolList, tool_choice: 'auto' };
    const options = signal ? { signal } : undefined;
    if (!stream) return (await client.chat.completions.create(body, options)).choices[0].message;
    const response = await client.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      options,
    );
    let content = '';
    const calls = [];
    for await (const chunk of response) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) content += delta.content;
      for (const part of delta.tool_calls ?? []) {
        if (!calls[part.index])
          calls[part.index] = { id: '', type: 'function', function: { name: '', arguments: '' } };
        const call = calls[part.index];
        if (part.id) call.id = part.id;
        if (part.function?.name) call.function.name += part.function.name;
        if (part.function?.arguments) {
          call.function.arguments += part.function.arguments;
          if (onArgsDelivered && call.function.arguments.endsWith('}'))
            onArgsDelivered(part.index, performance.now());
        }
      }
    }
    return { role: 'assistant', content: content || null, ...(calls.length ? { tool_calls: calls } : {}) };
  };
}

/** Runs one tool call; never rejects: a failure becomes the message's content. */
export async function runToolCall(call, onToolStart) {
  onToolStart?.(call.id, performance.now());
  let content;
  try {
    content = String(await implementations[call.function.name](JSON.parse(call.function.arguments)));
  } catch (error) {
    content = `Error: ${error.message}`;
  }
  return { role: 'tool', tool_call_id: call.id, content };
}

/** The tool calls of one assistant message, in parallel (`runToolCall` never rejects). */
export function runToolCalls(calls, onToolStart) {
  return Promise.all(calls.map((call) => runToolCall(call, onToolStart)));
}

/** A session's first messages: the system prompt and the user's request. */
export function taskMessages() {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: USER_PROMPT },
  ];
}

/** The assistant message as the conversation keeps it: with its tool calls, or as a text answer. */
export function assistantMessage(message) {
  return message.tool_calls?.length
    ? { role: 'assistant', content: message.content ?? null, tool_calls: message.tool_calls }
    : { role: 'assistant', content: message.content ?? '' };
}
