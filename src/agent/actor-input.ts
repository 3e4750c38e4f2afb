import type { Actor } from 'xstate';
import type { Message } from '../llm/message.js';
import type { AgentMachineInput } from '../machines/agent-context.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import type { AgentOptions } from './agent-options.js';

/** The machine's input from the agent's options: the leading messages (system prompt, context) and the limits in context. */
export function machineInput(
  options: AgentOptions<unknown>,
  sessionId: string | undefined,
): AgentMachineInput {
  const messages: Message[] = [];
  if (options.instructions) messages.push({ role: 'system', content: options.instructions });
  messages.push(...(options.contextMessages ?? []));
  const { toolTimeoutMs: _t, maxToolResultChars: _m, ...limits } = options.limits ?? {};
  return { ...(sessionId ? { sessionId } : {}), messages, limits };
}

/** Resolves when the actor leaves Initializing (subscribe before `actor.start()`). */
export function leftInitializing(actor: Actor<AgentMachine>): Promise<void> {
  return new Promise<void>((resolve) => {
    const sub = actor.subscribe((s) => {
      if (!s.matches('Initializing')) {
        sub.unsubscribe();
        resolve();
      }
    });
  });
}
