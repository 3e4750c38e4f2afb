import type { ScriptedRequest, ScriptedTurn } from '../../../testing/scenario.js';

/** A tool result as the scripted model reads it in a request: the call it answers and its text. */
export interface SeenToolResult {
  name: string;
  /** The call's arguments, parsed (an empty object when they do not parse). */
  args: Record<string, unknown>;
  content: string;
  /** Whether the result is an error (agentloop's error results start with `Error:`). */
  failed: boolean;
}

/**
 * The results of every tool call in the request's conversation, in order. The demos' scripted
 * answers are built from these, so that a tool that failed shows in the answer instead of a
 * confident reply written in advance.
 */
export function toolResults(request: ScriptedRequest): SeenToolResult[][] {
  const rounds: SeenToolResult[][] = [];
  const messages = request.messages;
  messages.forEach((message, i) => {
    if (message.role !== 'assistant' || !message.tool_calls?.length) return;
    const answers = new Map<string, string>();
    for (const later of messages.slice(i + 1)) {
      if (later.role === 'tool') answers.set(later.tool_call_id, textOf(later.content));
    }
    rounds.push(
      message.tool_calls.map((call) => {
        const fn = call.type === 'function' ? call.function : { name: call.custom.name, arguments: '{}' };
        const content = answers.get(call.id) ?? 'Error: no result';
        return { name: fn.name, args: parseArgs(fn.arguments), content, failed: content.startsWith('Error') };
      }),
    );
  });
  return rounds;
}

/** The results of the tool calls the model made last (its newest message with calls), in call order. */
export function lastToolResults(request: ScriptedRequest): SeenToolResult[] {
  return toolResults(request).at(-1) ?? [];
}

/** The scripted answer when a tool failed: what failed and why, nothing made up. */
export function failureAnswer(what: string, results: readonly SeenToolResult[]): ScriptedTurn {
  const why =
    results
      .filter((r) => r.failed)
      .map((r) => `${r.name} ${JSON.stringify(r.args)}: ${r.content}`)
      .join('\n') || 'the tools returned nothing I could use';
  return { content: `I could not ${what}:\n${why}` };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? '').join('');
  return '';
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
