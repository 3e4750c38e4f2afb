import type { ZodType } from 'zod';
import { type AgentContext, ZERO_USAGE } from '../machines/agent-context.js';
import type { ExecutionResult } from './agent-options.js';

/** The outcome of the last turn as the context holds it; with a schema, the answer is validated into `output`. */
export function turnResult<TOutput>(
  context: Readonly<AgentContext>,
  schema: ZodType<TOutput> | undefined,
): ExecutionResult<TOutput> {
  const result: ExecutionResult<TOutput> = {
    success: context.terminateReason === 'completed' || context.terminateReason === 'question',
    response: context.response,
    iterations: context.iteration,
    messages: [...context.messages],
    terminateReason: context.terminateReason ?? 'completed',
    usage: context.turnUsage,
  };
  if (context.error) result.error = context.error.message;
  if (schema && result.success) validateOutput(result, schema);
  return result;
}

/** Parses the answer as JSON (a fenced block is unwrapped) and validates it into `result.output`, or says why not. */
function validateOutput<TOutput>(result: ExecutionResult<TOutput>, schema: ZodType<TOutput>): void {
  const text = result.response
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/```$/, '');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    result.outputError = `the response is not JSON: ${(error as Error).message}`;
    return;
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) result.output = parsed.data;
  else
    result.outputError = parsed.error.issues
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
}

/** The result a turn still running gets when the agent is stopped: interrupted, with the conversation so far. */
export function stoppedResult<TOutput>(
  context: Readonly<AgentContext> | undefined,
): ExecutionResult<TOutput> {
  return {
    success: false,
    response: context?.partial ?? '',
    iterations: context?.iteration ?? 0,
    messages: [...(context?.messages ?? [])],
    terminateReason: 'interrupted',
    usage: context?.turnUsage ?? ZERO_USAGE,
    error: 'the agent was stopped (agent.stop()) before the turn ended',
  };
}

/** The message of any thrown value. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
