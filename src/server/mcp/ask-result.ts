import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ExecutionResult } from '../../agent/agent.js';
import type { Message } from '../../llm/message.js';

/** What became of one tool call of the turn. */
export type AskToolCallStatus = 'ok' | 'error' | 'declined' | 'not_run';

/**
 * The structured content of an `ask_<agent>` result (its declared `outputSchema`): the session to
 * continue, where it rests, the turn's outcome, its tool calls and its cost.
 */
export const askOutputSchema = z.object({
  session: z.string().describe('the session id: pass it as `session` to continue this conversation'),
  state: z.string().describe('where the session rests: Completed, Interrupted or Error'),
  success: z.boolean().describe('the turn ended by the agent’s own choice (an answer or a question)'),
  terminateReason: z
    .string()
    .describe('completed, question, interrupted, max_iterations, timeout, error, ... (docs/mcp-server.md)'),
  response: z.string().describe('the agent’s answer (or question)'),
  iterations: z.number().int().describe('model calls the turn made'),
  toolCalls: z
    .array(
      z.object({
        id: z.string(),
        name: z.string(),
        args: z.unknown(),
        status: z.enum(['ok', 'error', 'declined', 'not_run']),
        result: z.string().optional(),
      }),
    )
    .describe('the tool calls the agent made in the turn, in order'),
  usage: z.object({
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    totalTokens: z.number().int(),
    costUsd: z.number().optional().describe('absent when the model has no price'),
  }),
  error: z.string().optional().describe('why the turn did not succeed'),
});

/** The structured content of an `ask_<agent>` result. */
export type AskOutput = z.infer<typeof askOutputSchema>;

/** What the turn's events said about its calls, by tool call id (a call with none did not run). */
export type CallOutcomes = ReadonlyMap<string, 'ok' | 'error' | 'declined'>;

/** The tool calls of the messages a turn added, each with its result (text for the client). */
export function turnToolCalls(
  added: readonly Message[],
  outcomes: CallOutcomes,
  forClient: (text: string) => string,
  redactValue: (value: unknown) => unknown,
): AskOutput['toolCalls'] {
  const calls: AskOutput['toolCalls'] = [];
  // The tool results by call id, read once a turn made a call (a text turn reads none).
  let results: Map<string, string> | undefined;
  for (const message of added) {
    if (message.role !== 'assistant' || !message.tool_calls) continue;
    results ??= toolResults(added);
    for (const call of message.tool_calls) {
      if (call.type !== 'function') continue;
      const result = results.get(call.id);
      const entry: AskOutput['toolCalls'][number] = {
        id: call.id,
        name: call.function.name,
        args: redactValue(parseArgs(call.function.arguments)),
        status: outcomes.get(call.id) ?? 'not_run',
      };
      if (result !== undefined) entry.result = forClient(result);
      calls.push(entry);
    }
  }
  return calls;
}

function toolResults(added: readonly Message[]): Map<string, string> {
  const results = new Map<string, string>();
  for (const message of added) {
    if (message.role === 'tool') results.set(message.tool_call_id, textOf(message.content));
  }
  return results;
}

/** The structured content of a finished turn. */
export function askOutput(
  session: string,
  state: string,
  result: ExecutionResult,
  toolCalls: AskOutput['toolCalls'],
  forClient: (text: string) => string,
): AskOutput {
  const usage = result.usage;
  const output: AskOutput = {
    session,
    state,
    success: result.success,
    terminateReason: result.terminateReason,
    response: forClient(result.response),
    iterations: result.iterations,
    toolCalls,
    usage: {
      inputTokens: usage.promptTokens,
      outputTokens: usage.completionTokens,
      totalTokens: usage.totalTokens,
    },
  };
  // Optional members set in place, in the order the schema lists them (no object spread a call).
  if (usage.costUsd !== undefined) output.usage.costUsd = usage.costUsd;
  if (result.error !== undefined) output.error = forClient(result.error);
  return output;
}

/**
 * The MCP result of a finished turn: the answer as text, a second text naming the session to
 * continue, and the structured content. A turn that did not succeed is a tool error (`isError`) whose
 * text says why.
 */
export function askCallResult(toolName: string, output: AskOutput, refusal?: string): CallToolResult {
  const failed = refusal !== undefined || !output.success;
  const text = refusal
    ? refusal
    : failed
      ? `${toolName}: the turn ended ${output.terminateReason}${output.error ? `: ${output.error}` : ''}${output.response ? `\n\n${output.response}` : ''}`
      : output.response;
  const answer: CallToolResult = {
    content: [
      { type: 'text', text },
      {
        type: 'text',
        text: `session: ${output.session} (pass it as "session" to continue this conversation)`,
      },
    ],
    structuredContent: output,
  };
  if (failed) answer.isError = true;
  return answer;
}

/** A refusal before any turn ran (bad input, unknown session, ...): a tool error naming the tool. */
export function askRefusal(toolName: string, message: string): CallToolResult {
  return { content: [{ type: 'text', text: `${toolName}: ${message}` }], isError: true };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part?.text === 'string' ? part.text : ''))
      .filter(Boolean)
      .join('\n');
  }
  return '';
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
