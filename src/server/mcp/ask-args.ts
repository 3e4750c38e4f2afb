import type { AskArgs } from './ask-turn.js';

/**
 * The arguments of an `ask_<agent>` call, checked by hand against its input schema (`message` a
 * string, `session` a string or absent; other members ignored, as the schema's object strips them):
 * the arguments, or what is wrong with them, for a tool error naming the call.
 */
export function askArgsOf(args: Record<string, unknown> | undefined): AskArgs | { problem: string } {
  const message = args?.message;
  if (typeof message !== 'string') {
    return {
      problem:
        message === undefined
          ? '`message` is missing: send the text for the agent as a string'
          : `\`message\` must be a string (the text for the agent), not ${kindOf(message)}`,
    };
  }
  const session = args?.session;
  if (session !== undefined && typeof session !== 'string') {
    return {
      problem: `\`session\` must be a string (the session id from an earlier answer), not ${kindOf(session)}; leave it out to start a new conversation`,
    };
  }
  return session === undefined ? { message } : { message, session };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
