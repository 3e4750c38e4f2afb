import type { Actor } from 'xstate';
import type { Message } from '../llm/message.js';
import type { AgentMachineInput } from '../machines/agent-context.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import type { SkillSetup } from '../skills/skills-agent.js';
import type { AgentOptions } from './agent-options.js';

/** The machine's input from the agent's options: the leading messages (system prompt with the skills catalog, context) and the limits in context. */
export function machineInput(
  options: AgentOptions<unknown>,
  sessionId: string | undefined,
  catalog?: string,
): AgentMachineInput {
  const messages: Message[] = [];
  const instructions = [options.instructions, catalog].filter(Boolean).join('\n\n');
  if (instructions) messages.push({ role: 'system', content: instructions });
  messages.push(...(options.contextMessages ?? []));
  const { toolTimeoutMs: _t, maxToolResultChars: _m, ...limits } = options.limits ?? {};
  return { ...(sessionId ? { sessionId } : {}), messages, limits };
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
