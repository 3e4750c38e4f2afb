// Peer: Vercel AI SDK (`ai` 5 with `@ai-sdk/openai` 2, Chat Completions), from bench/node_modules.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { lookup, MODEL, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, USER_PROMPT } from '../lib/task.mjs';

export const title = 'ai + @ai-sdk/openai';

export async function createHarness({ baseURL, stream, fetch, onToolStart }) {
  const provider = createOpenAI({ baseURL, apiKey: 'bench', ...(fetch ? { fetch } : {}) });
  const model = provider.chat(MODEL);
  const tools = {
    [TOOL_NAME]: tool({
      description: TOOL_DESCRIPTION,
      inputSchema: z.object({ key: z.string() }),
      execute: async (args, { toolCallId }) => {
        onToolStart?.(toolCallId, performance.now());
        return lookup(args);
      },
    }),
  };
  const request = {
    model,
    system: SYSTEM_PROMPT,
    prompt: USER_PROMPT,
    tools,
    stopWhen: stepCountIs(50),
    maxRetries: 0,
  };
  return {
    async runSession() {
      if (!stream) return (await generateText(request)).steps.length;
      const result = streamText(request);
      await result.consumeStream();
      return (await result.steps).length;
    },
  };
}
