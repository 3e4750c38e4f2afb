// Peer: OpenAI Agents SDK (`@openai/agents`) on the Chat Completions model, from bench/node_modules.
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { lookup, MODEL, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, USER_PROMPT } from '../lib/task.mjs';

export const title = '@openai/agents';

export async function createHarness({ baseURL, stream, fetch, onToolStart }) {
  setTracingDisabled(true);
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const agent = new Agent({
    name: 'bench',
    instructions: SYSTEM_PROMPT,
    model: new OpenAIChatCompletionsModel(client, MODEL),
    tools: [
      tool({
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        parameters: z.object({ key: z.string() }),
        execute: async (args, _context, details) => {
          onToolStart?.(details?.toolCall?.callId, performance.now());
          return lookup(args);
        },
      }),
    ],
  });
  return {
    async runSession() {
      if (!stream) return (await run(agent, USER_PROMPT, { maxTurns: 50 })).rawResponses.length;
      const result = await run(agent, USER_PROMPT, { maxTurns: 50, stream: true });
      for await (const _event of result) {
        // consume
      }
      await result.completed;
      return result.rawResponses.length;
    },
  };
}
