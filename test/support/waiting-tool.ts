import { z } from 'zod';
import { type ScriptedServer, startScriptedServer } from '../../src/testing/index.js';
import { defineTool, type Tool } from '../../src/tools/define-tool.js';
import { deferred } from './harness.js';

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

/**
 * The tool `wait_for_it`: it notes that it started and runs until the test releases it with its
 * result (`release`), or until its call is stopped (`aborted`, and the call fails). For tests that act
 * while a turn is in a tool call.
 */
export function gateTool() {
  const started = deferred();
  const release = deferred<string>();
  const aborted = deferred();
  const tool = defineTool({
    name: 'wait_for_it',
    description: 'waits',
    parameters: z.object({}),
    execute: async (_args, ctx) => {
      started.resolve();
      ctx.signal.addEventListener('abort', () => aborted.resolve());
      return await Promise.race([
        release.promise,
        new Promise<string>((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))),
        ),
      ]);
    },
  });
  return { tool, started, release, aborted };
}

/** A model that says it will check, calls `wait_for_it` (the {@link gateTool}), then answers "It is done.". */
export const gateScenario = {
  turns: [
    { content: 'Let me check.', toolCalls: [{ name: 'wait_for_it', arguments: {} }] },
    { content: 'It is done.' },
  ],
};
