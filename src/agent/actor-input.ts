import type { Actor } from 'xstate';
import type { Message } from '../llm/message.js';
import type { AgentMachineInput } from '../machines/agent-context.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import type { SkillSetup } from '../skills/skills-agent.js';
import type { AgentOptions } from './agent-options.js';

/**
 * The machine's input from the agent's options: the session id, the leading messages (system prompt
 * with the skills catalog, context) and the limits in context. XState keeps the input for the actor's
 * life, so it holds nothing the context does not: the messages array is the one the context starts with.
 */
export function machineInput(
  options: AgentOptions<unknown>,
  sessionId: string | undefined,
  catalog?: string,
): AgentMachineInput {
  const instructions = [options.instructions, catalog].filter(Boolean).join('\n\n');
  const context = options.contextMessages ?? [];
  // Built at its final length: an array grown by `push` keeps spare slots for the session's life.
  const messages: Message[] = instructions
    ? [{ role: 'system', content: instructions }, ...context]
    : [...context];
  const { toolTimeoutMs: _t, maxToolResultChars: _m, ...limits } = options.limits ?? {};
  return { sessionId: sessionId || newSessionId(), messages, limits };
}

/**
 * A new session's id: a random UUID, as one flat string. `crypto.randomUUID()` gives a rope of 13
 * pieces (about 400 bytes, kept for the session's life and copied into every event); `toLowerCase()`
 * of an id already in lower case hands back the flattened text (56 bytes).
 */
export function newSessionId(): string {
  return crypto.randomUUID().toLowerCase();
}

/**
 * Resolves when the actor leaves Initializing, or stops before it did (an agent closed before its
 * first message: nothing else would ever say so). Subscribe before `actor.start()`.
 */
export function leftInitializing(actor: Actor<AgentMachine>): Promise<void> {
  return new Promise<void>((resolve) => {
    const sub = actor.subscribe({
      next: (s) => {
        if (!s.matches('Initializing')) {
          sub.unsubscribe();
          resolve();
        }
      },
      complete: resolve,
    });
  });
}

/**
 * What the agent waits for before it starts, all at once: the session's load (its snapshot), the
 * skills' discovery (the catalog for the system prompt) and the MCP servers (each listed or failed).
 * `undefined` when there is nothing to wait for: the agent starts at once.
 */
export function startWaits(
  open: Promise<unknown> | undefined,
  skills: Promise<SkillSetup> | undefined,
  serversUp: Promise<unknown> | undefined,
): Promise<[unknown, string | undefined]> | undefined {
  if (!open && !skills && !serversUp) return undefined;
  const catalog = skills?.then((setup) => setup.catalog);
  return Promise.all([open, catalog, serversUp]).then(([snapshot, text]) => [snapshot, text]);
}
