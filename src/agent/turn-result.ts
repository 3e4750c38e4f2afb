import type { ZodType } from 'zod';
import type { Message } from '../llm/message.js';
import { type AgentContext, ZERO_USAGE } from '../machines/agent-context.js';
import type { ExecutionResult } from './agent-options.js';

/** The outcome of the last turn as the context holds it; with a schema, the answer is validated into `output`. */
export function turnResult<TOutput>(
  context: Readonly<AgentContext>,
  schema: ZodType<TOutput> | undefined,
): ExecutionResult<TOutput> {
  const result = withMessages<ExecutionResult<TOutput>>(
    {
      success: context.terminateReason === 'completed' || context.terminateReason === 'question',
      response: context.response,
      iterations: context.iteration,
      terminateReason: context.terminateReason ?? 'completed',
      usage: context.turnUsage,
    },
    context.messages,
  );
  if (context.error) result.error = context.error.message;
  if (schema && result.success) validateOutput(result, schema);
  return result;
}

/** The answer with a fenced code block around it (```json ... ```) unwrapped: the JSON an output schema reads. */
export function unfencedAnswer(response: string): string {
  return response
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/```$/, '');
}

/** Parses the answer as JSON (a fenced block is unwrapped) and validates it into `result.output`, or says why not. */
function validateOutput<TOutput>(result: ExecutionResult<TOutput>, schema: ZodType<TOutput>): void {
  const text = unfencedAnswer(result.response);
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
  return withMessages<ExecutionResult<TOutput>>(
    {
      success: false,
      response: context?.partial ?? '',
      iterations: context?.iteration ?? 0,
      terminateReason: 'interrupted',
      usage: context?.turnUsage ?? ZERO_USAGE,
      error: 'the agent was stopped (agent.stop()) before the turn ended',
    },
    context?.messages ?? [],
  );
}

/**
 * `result.messages`: the caller's own copy of the conversation, made when first read (then the same
 * array on every read). A turn's result is built at every turn's end, and most callers read only the
 * answer: copying a long conversation for each of them is the one per-turn walk of the whole
 * conversation a result would make. The context's array is never changed after it is made (an assign
 * appends into a new one), so the copy made later holds what the turn ended with.
 */
function withMessages<R extends { messages: Message[] }>(
  fields: Omit<R, 'messages'>,
  messages: readonly Message[],
): R {
  let copy: Message[] | undefined;
  return Object.defineProperty(fields, 'messages', {
    enumerable: true,
    configurable: true,
    get: () => {
      copy ??= messages.slice();
      return copy;
    },
    set: (value: Message[]) => {
      copy = value;
    },
  }) as R;
}

/** The message of any thrown value. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
