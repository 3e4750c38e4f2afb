// agentloop: one agent (statechart actor) per session, all sharing one OpenAI client and one tool
// definition, as an app serving many users would hold them.

import { createAgent, defineTool } from '../../dist/index.js';
import { OpenAI, z } from '../lib/root-deps.mjs';
import { lookup, MODEL, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, USER_PROMPT } from '../lib/task.mjs';

export const title = 'agentloop';

export async function createHarness({ baseURL, stream, fetch, onToolStart }) {
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const tool = defineTool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: z.object({ key: z.string() }),
    execute: (args, ctx) => {
      onToolStart?.(ctx.toolCallId, performance.now());
      return lookup(args);
    },
  });
  const options = {
    client,
    model: MODEL,
    instructions: SYSTEM_PROMPT,
    tools: [tool],
    stream,
    loopControlTools: false,
    // update_plan (on by default) would add its schema to every request: the other harnesses send one tool.
    planning: false,
    contextWindow: false,
  };
  return {
    async runSession() {
      const agent = createAgent(options);
      const result = await agent.send(USER_PROMPT);
      agent.stop();
      if (!result.success)
        throw new Error(`agentloop session failed: ${result.error ?? result.terminateReason}`);
      return result.iterations;
    },
    async createIdle() {
      const agent = createAgent(options);
      await agent.ready();
      return agent;
    },
  };
}
