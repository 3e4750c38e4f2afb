import type { Message } from '../llm/message.js';
import { ACTIVATE_SKILL_TOOL } from './skill-catalog.js';

// Which skills a session has activated, read from its conversation: an `activate_skill` call whose
// result says `{"activated": name, ...}`. The conversation is the session's record (saved in the
// snapshot, replayed from the transcript), so a resumed session knows what is active without a
// second copy of that fact to keep in step.

/** The start of a successful activation's result; a truncated result still begins with it. */
const ACTIVATED = /^\s*\{\s*"activated"\s*:\s*("(?:[^"\\]|\\.)*")/;

/** The name an activation result names, or `undefined` for anything else (an error, another tool's text). */
export function activatedName(content: unknown): string | undefined {
  if (typeof content !== 'string') return undefined;
  const m = ACTIVATED.exec(content);
  if (!m) return undefined;
  try {
    const name = JSON.parse(m[1]!) as unknown;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The skills activated in a conversation, least recent first (a skill activated again moves to the
 * end). The last one is the active skill: bare relative paths of `read_file` start at its folder.
 */
export function activeSkillNames(messages: readonly Message[] | undefined): string[] {
  if (!messages) return [];
  const calls = new Set<string>();
  const active: string[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') {
      for (const call of m.tool_calls ?? []) {
        if (call.type === 'function' && call.function.name === ACTIVATE_SKILL_TOOL) calls.add(call.id);
      }
    } else if (m.role === 'tool' && calls.has(m.tool_call_id)) {
      const name = activatedName(m.content);
      if (!name) continue;
      const at = active.indexOf(name);
      if (at >= 0) active.splice(at, 1);
      active.push(name);
    }
  }
  return active;
}
