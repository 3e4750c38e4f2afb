import { type AgentOptions, toAgentOptions } from '../agent/agent-options.js';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import type { BundleAgent } from './session-imports.js';

/**
 * What the server runs for a session: an `AgentDefinition`, a loaded bundle agent, or a factory of
 * `createAgent` options for a session id (it may pick a model, tools, limits per session). The store,
 * the session id and the session's owner are the server's: a factory's `store` / `session` are ignored.
 */
export type AgentSource =
  | AgentDefinition
  | BundleAgent
  | ((sessionId: string) => AgentOptions | Promise<AgentOptions>);

/** Options every agent of the server gets unless its source sets them (a model connection: `baseURL`, `apiKey`, `client`). */
export type AgentRuntimeOptions = Omit<
  AgentOptions,
  'instructions' | 'tools' | 'outputSchema' | 'store' | 'session'
>;

/**
 * The `createAgent` options of `source` for one session, before the server adds the store and the
 * session: a new object each call, which the caller may change.
 */
export async function agentOptionsFor(
  source: AgentSource,
  sessionId: string,
  runtime: AgentRuntimeOptions,
): Promise<AgentOptions> {
  if (typeof source === 'function') {
    const own = source(sessionId);
    // A factory that answers at once is not awaited (no promise and no turn of the microtask queue).
    return { ...runtime, ...(isPromiseLike(own) ? await own : own) };
  }
  if (isBundleAgent(source)) {
    return { ...toAgentOptions(source.definition, {}, runtime), sessionInfo: { bundle: source.bundleRoot } };
  }
  return toAgentOptions(source, {}, runtime);
}

function isBundleAgent(source: AgentDefinition | BundleAgent): source is BundleAgent {
  return 'definition' in source && 'bundleRoot' in source;
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
