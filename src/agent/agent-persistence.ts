import type { Redactor } from '../events/redact.js';
import { type PersistenceErrorHandler, SessionPersistence } from '../session/persistent-session.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { AgentOptions } from './agent-options.js';

/**
 * The session keeper for `store` / `session`, or undefined when the agent is not persisted. A tool
 * declared `idempotent` may run again after a crash; the transcript is written redacted.
 */
export function persistenceFor(
  options: AgentOptions<unknown>,
  registry: ToolRegistry,
  redactor: Redactor,
  onError: PersistenceErrorHandler,
): SessionPersistence | undefined {
  if (options.store === undefined && options.session === undefined) return undefined;
  if (
    options.session !== undefined &&
    options.sessionId !== undefined &&
    options.session !== options.sessionId
  ) {
    throw new Error(`createAgent: session "${options.session}" and sessionId "${options.sessionId}" differ`);
  }
  return new SessionPersistence(
    { ...options, session: options.session ?? options.sessionId, agentName: options.name },
    (name) => registry.get(name)?.idempotent === true,
    onError,
    (value) => redactor.redactValue(value),
  );
}
