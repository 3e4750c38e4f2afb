// The floor: a minimal hand-written agent loop on the same `openai` SDK. One shared client per
// process; per session only the messages array. Tools run after the model's message is complete
// (for a stream: after the stream ends), in parallel.
import { OpenAI } from '../lib/root-deps.mjs';
import {
  lookup,
  MODEL,
  SYSTEM_PROMPT,
  TOOL_DESCRIPTION,
  TOOL_NAME,
  TOOL_PARAMETERS,
  USER_PROMPT,
} from '../lib/task.mjs';

export const title = 'hand-written loop (openai SDK)';

const tools = [
  {
    type: 'function',
    function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS },
  },
];
const implementations = { [TOOL_NAME]: lookup };

export async function createHarness({ baseURL, stream, fetch, onToolStart, onArgsDelivered }) {
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });

  const complete = async (messages) => {
    const body = { model: MODEL, messages, tools, tool_choice: 'auto' };
    if (!stream) return (await client.chat.completions.create(body)).choices[0].message;
    const response = await client.chat.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
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
          // Figure 3 only: when the SDK hands the loop the chunk that completes a call's arguments.
          if (onArgsDelivered && call.function.arguments.endsWith('}'))
            onArgsDelivered(part.index, performance.now());
        }
      }
    }
    return { role: 'assistant', content: content || null, ...(calls.length ? { tool_calls: calls } : {}) };
  };

  const runTool = async (call) => {
    onToolStart?.(call.id, performance.now());
    let content;
    try {
      content = String(await implementations[call.function.name](JSON.parse(call.function.arguments)));
    } catch (error) {
      content = `Error: ${error.message}`;
    }
    return { role: 'tool', tool_call_id: call.id, content };
  };

  return {
    /** Runs the task once; resolves with the number of model calls. */
    async runSession() {
      const messages = [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: USER_PROMPT },
      ];
      for (let calls = 1; ; calls++) {
        const message = await complete(messages);
        const toolCalls = message.tool_calls ?? [];
        messages.push(
          toolCalls.length
            ? { role: 'assistant', content: message.content ?? null, tool_calls: toolCalls }
            : { role: 'assistant', content: message.content ?? '' },
        );
        if (toolCalls.length === 0) return calls;
        messages.push(...(await Promise.all(toolCalls.map(runTool))));
      }
    },
    /** An idle session: what the loop keeps between turns. */
    async createIdle() {
      return { messages: [{ role: 'system', content: SYSTEM_PROMPT }] };
    },
  };
}
