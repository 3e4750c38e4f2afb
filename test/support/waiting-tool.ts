import { z } from 'zod';
import { type ScriptedServer, startScriptedServer } from '../../src/testing/index.js';
import { defineTool, type Tool } from '../../src/tools/define-tool.js';

/**
 * A scripted model that calls `wait_long` once, and that tool: it runs until its call is stopped
 * (an interrupt), counting its starts and noting when it was stopped. For tests of interrupts
 * reaching a running turn.
 */
export async function waitingTurn(): Promise<{
  server: ScriptedServer;
  tool: Tool;
  started: () => number;
  /** When (epoch ms) the last run of the tool was stopped; 0 before any was. */
  stoppedAt: () => number;
}> {
  const server = await startScriptedServer({
    scenario: { turns: [{ toolCalls: [{ name: 'wait_long', arguments: {} }] }, { content: 'never' }] },
  });
  let started = 0;
  let stoppedAt = 0;
  const tool = defineTool({
    name: 'wait_long',
    description: 'takes its time',
    parameters: z.object({}),
    execute: (_args, ctx) =>
      new Promise((_resolve, reject) => {
        started++;
        ctx.signal.addEventListener('abort', () => {
          stoppedAt = Date.now();
          reject(new Error('aborted'));
        });
      }),
  });
  return { server, tool, started: () => started, stoppedAt: () => stoppedAt };
}
