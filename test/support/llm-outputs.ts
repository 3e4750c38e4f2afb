import type { LlmCallOutput } from '../../src/machines/actors/call-llm.js';
import type { ToolCallRequest } from '../../src/tools/tool-call.js';

// What a `callLlm` effect resolves with, for tests that drive the machine with effects of their own
// (no model server): a final answer, or a reply asking for tool calls.

/** A reply with the final answer `content` and no calls. */
export function answerOutput(content: string): LlmCallOutput {
  return { message: { role: 'assistant', content }, calls: [], finishReason: 'stop', usage: null, at: 0 };
}

/** A reply asking for `calls` (its assistant message carries them as the API sends them). */
export function callsOutput(calls: ToolCallRequest[], extra: Partial<LlmCallOutput> = {}): LlmCallOutput {
  return {
    message: {
      role: 'assistant',
      content: null,
      tool_calls: calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.argsText },
      })),
    },
    calls,
    finishReason: 'tool_calls',
    usage: null,
    at: 0,
    ...extra,
  };
}
