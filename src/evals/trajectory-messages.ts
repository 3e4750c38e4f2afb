import type { TranscriptEntry } from '../session/transcript.js';
import { currentEntries } from '../session/transcript-replay.js';
import { SESSION_FORKED_EVENT } from './fork-session.js';

/** One message of an OpenAI-messages trajectory: the Chat Completions shape other eval tools read. */
export type TrajectoryMessage =
  | { role: 'system' | 'developer' | 'user'; content: unknown; name?: string }
  | {
      role: 'assistant';
      content: unknown;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: unknown };

/**
 * The conversation a transcript records, as the OpenAI messages array (system, user, assistant with
 * `tool_calls`, tool with `tool_call_id`): what agentevals, OpenAI evals and similar tools take as a
 * trajectory. Read from the transcript (so redacted as it was written), the current session only; in a
 * fork that replaced the system prompt, the replaced one. Fields other tools do not know (reasoning
 * items of the Responses API, inbox tags) are left out; a message of a role they do not know, or a
 * value that is not a message, is passed over.
 */
export function trajectoryMessages(entries: readonly TranscriptEntry[]): TrajectoryMessage[] {
  const messages: TrajectoryMessage[] = [];
  for (const entry of currentEntries(entries)) {
    if (entry.kind === 'event' && entry.event === SESSION_FORKED_EVENT) {
      const system = (entry.data as { system?: unknown } | null)?.system;
      if (typeof system === 'string' && messages[0]?.role === 'system')
        messages[0] = { role: 'system', content: system };
      continue;
    }
    if (entry.kind !== 'message') continue;
    const message = trajectoryMessage(entry.message as unknown);
    if (message) messages.push(message);
  }
  return messages;
}

function trajectoryMessage(value: unknown): TrajectoryMessage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const m = value as Record<string, unknown>;
  const content = m.content ?? null;
  switch (m.role) {
    case 'system':
    case 'developer':
    case 'user':
      return typeof m.name === 'string' ? { role: m.role, content, name: m.name } : { role: m.role, content };
    case 'tool':
      return { role: 'tool', tool_call_id: String(m.tool_call_id), content };
    case 'assistant': {
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls.flatMap(toolCall) : [];
      return calls.length > 0
        ? { role: 'assistant', content, tool_calls: calls }
        : { role: 'assistant', content };
    }
    default:
      return undefined;
  }
}

function toolCall(value: unknown) {
  const call = value as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
  if (typeof call?.id !== 'string' || typeof call.function?.name !== 'string') return [];
  const args = call.function.arguments;
  return [
    {
      id: call.id,
      type: 'function' as const,
      function: {
        name: call.function.name,
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
      },
    },
  ];
}
