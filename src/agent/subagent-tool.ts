import { type ZodRawShape, z } from 'zod';
import type { AgentEvent } from '../machines/emitted-events.js';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import { defineTool, type Tool } from '../tools/define-tool.js';
import { type Agent, type AgentOptions, createAgent } from './agent.js';
import { toAgentOptions } from './agent-options.js';

/** How a subagent runs: the model server and options it shares with its parent. */
export interface SubagentOptions {
  /** Runtime options for the child (client or baseURL/apiKey, stream, limits, ...). */
  runtime: Omit<AgentOptions, 'instructions' | 'tools' | 'outputSchema' | 'sessionId'>;
  /** Tool name (default: the agent's name). */
  name?: string;
  /** Every event of the child, for a UI that shows subagents under their parent. */
  onEvent?: (event: AgentEvent) => void;
  /**
   * Called with each child agent as it starts, e.g. to show it in the inspector under its parent:
   * `onChild: (child, { parentSessionId }) => inspector.attach(child, { parentId: parentSessionId })`.
   * A function it returns is called when the child is done.
   */
  onChild?: (child: Agent, info: { parentSessionId: string; toolCallId: string }) => (() => void) | undefined;
  needsApproval?: boolean;
}

/**
 * Turns an agent definition into a tool another agent can call: the tool takes the subagent's inputs
 * plus a `task`, runs a fresh child agent (session id `<parent>/<name>/<toolCallId>`) to the end of its
 * turn, and returns its validated output (JSON) or its answer. The parent's interrupt interrupts the child.
 */
export function subagentTool<TInput extends ZodRawShape, TOutput>(
  definition: AgentDefinition<TInput, TOutput>,
  options: SubagentOptions,
): Tool {
  const inputShape = definition.inputSchema?.shape ?? ({} as TInput);
  const parameters = z.object({
    ...inputShape,
    task: z.string().describe(`What ${definition.name} should do`),
  });
  return defineTool({
    name: options.name ?? definition.name,
    description: definition.description,
    parameters,
    needsApproval: options.needsApproval ?? false,
    execute: async (args, ctx) => {
      const { task, ...inputs } = args as { task: string } & Record<string, unknown>;
      const child = createAgent(
        toAgentOptions(definition, inputs, {
          ...options.runtime,
          sessionId: `${ctx.sessionId}/${definition.name}/${ctx.toolCallId}`,
        }),
      );
      if (options.onEvent) child.on('*', options.onEvent);
      const detach = options.onChild?.(child as Agent, {
        parentSessionId: ctx.sessionId,
        toolCallId: ctx.toolCallId,
      });
      const stop = () => child.interrupt('the parent agent stopped this call');
      ctx.signal.addEventListener('abort', stop, { once: true });
      try {
        // With telemetry, the child's turn is a child of this call's run.
        const result = await child.send(
          task,
          ctx.telemetry === undefined ? {} : { traceParent: ctx.telemetry },
        );
        if (!result.success) {
          throw new Error(
            `${definition.name} ended with ${result.terminateReason}: ${result.error ?? result.response}`,
          );
        }
        if (definition.outputSchema) {
          if (result.outputError)
            throw new Error(`${definition.name} returned invalid output: ${result.outputError}`);
          return result.output;
        }
        return result.response;
      } finally {
        ctx.signal.removeEventListener('abort', stop);
        child.stop();
        detach?.();
      }
    },
  });
}
