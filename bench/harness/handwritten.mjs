// The floor: a minimal hand-written agent loop on the same `openai` SDK. One shared client per
// process; per session only the messages array. Tools run after the model's message is complete
// (for a stream: after the stream ends), in parallel.
import { assistantMessage, createComplete, runToolCalls, taskMessages } from '../lib/chat-calls.mjs';
import { OpenAI } from '../lib/root-deps.mjs';
import { SYSTEM_PROMPT } from '../lib/task.mjs';

export const title = 'hand-written loop (openai SDK)';

export async function createHarness({ baseURL, stream, fetch, onToolStart, onArgsDelivered }) {
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const complete = createComplete(client, { stream, onArgsDelivered });

  return {
    /** Runs the task once; resolves with the number of model calls. */
    async runSession() {
      const messages = taskMessages();
      for (let calls = 1; ; calls++) {
        const message = await complete(messages);
        const toolCalls = message.tool_calls ?? [];
        messages.push(assistantMessage(message));
        if (toolCalls.length === 0) return calls;
        messages.push(...(await runToolCalls(toolCalls, onToolStart)));
      }
    },
    /** An idle session: what the loop keeps between turns. */
    async createIdle() {
      return { messages: [{ role: 'system', content: SYSTEM_PROMPT }] };
    },
  };
}
