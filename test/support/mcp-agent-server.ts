import type { ScriptedTurn } from '../../src/testing/index.js';

/** A chat request's message as the scripted server sees it. */
interface SeenMessage {
  role: string;
  content?: unknown;
}

/**
 * The scripted model the MCP server tests talk to, routed by the conversation's last message: after
 * a tool result it answers `done: <result>`; a user message with `hang` never answers (for cancels),
 * `note` calls `noteTool` (a tool that needs approval), `look` calls `lookup`, anything else is
 * echoed (`echo: <text>`).
 */
export function routedModel(noteTool: string, noteArgs: Record<string, unknown>) {
  return (request: { messages: SeenMessage[] }): ScriptedTurn => {
    const last = request.messages.at(-1);
    const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
    if (last?.role === 'tool') return { content: `done: ${text}` };
    if (text.includes('hang')) return { fault: 'hang' };
    if (text.includes('note')) return { toolCalls: [{ name: noteTool, arguments: noteArgs }] };
    if (text.includes('look')) return { toolCalls: [{ name: 'lookup', arguments: { word: 'mcp' } }] };
    return { content: `echo: ${text}` };
  };
}

/** Resolves once `check` holds, checking every 10 ms (no timed assertion: the test's timeout bounds it). */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}
