import { z } from 'zod';
import { defineTool } from '../../src/index.js';

/** A tool that reports progress as it runs (a `tool_progress` event for a listener, nothing built for nobody). */
export const progressEcho = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }, ctx) => {
    ctx.progress({ message: `echoing ${text}`, progress: 1, total: 1 });
    return `echo: ${text}`;
  },
});

/** One turn: two model calls that each ask for one `echo` call, then the answer (3 model calls, 2 tool calls). */
export const echoTwiceScenario = {
  turns: [
    { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] },
    { toolCalls: [{ name: 'echo', arguments: { text: 'b' } }] },
    { content: 'done' },
  ],
};
