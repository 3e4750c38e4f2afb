// Peer: LangGraph.js prebuilt ReAct agent with @langchain/openai's ChatOpenAI, from bench/node_modules.
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { lookup, MODEL, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, USER_PROMPT } from '../lib/task.mjs';

export const title = '@langchain/langgraph';

export async function createHarness({ baseURL, stream, fetch, onToolStart }) {
  const llm = new ChatOpenAI({
    model: MODEL,
    apiKey: 'bench',
    maxRetries: 0,
    // Streaming comes from LangGraph's `messages` stream mode (the model's own `streaming` flag makes
    // it count tokens with tiktoken tables fetched from the network, which this machine cannot reach).
    configuration: { baseURL, ...(fetch ? { fetch } : {}) },
  });
  const lookupTool = tool(
    async (args, config) => {
      onToolStart?.(config?.toolCall?.id, performance.now());
      return lookup(args);
    },
    { name: TOOL_NAME, description: TOOL_DESCRIPTION, schema: z.object({ key: z.string() }) },
  );
  const agent = createReactAgent({ llm, tools: [lookupTool], prompt: SYSTEM_PROMPT });
  const input = () => ({ messages: [{ role: 'user', content: USER_PROMPT }] });
  return {
    async runSession() {
      let state;
      if (!stream) state = await agent.invoke(input(), { recursionLimit: 100 });
      else {
        const events = await agent.stream(input(), {
          recursionLimit: 100,
          streamMode: ['messages', 'values'],
        });
        for await (const [mode, chunk] of events) if (mode === 'values') state = chunk;
      }
      return state.messages.filter((m) => m.getType() === 'ai').length;
    },
  };
}
