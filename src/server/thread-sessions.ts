import { type Agent, createAgent } from '../agent/agent.js';
import type { McpAuthOptions } from '../mcp/mcp-auth.js';
import type { Tool } from '../tools/define-tool.js';
import { type AgentRuntimeOptions, type AgentSource, agentOptionsFor } from './agent-source.js';
import { HttpError } from './http-error.js';
import {
  type SessionLease,
  type SessionRecord,
  type SessionStore,
  SessionStoreError,
} from './session-imports.js';

/** The key of a session's record `meta` that names the principal the session belongs to. */
export const PRINCIPAL_KEY = 'principal';

/** What opening a thread needs: where sessions live, what runs them, and who asks. */
export interface ThreadContext {
  store: SessionStore;
  source: AgentSource;
  runtime: AgentRuntimeOptions;
  principal: string;
  /** How long a session's lease lasts unless renewed (default `DEFAULTS.leaseMs`): a dead carrier's runs are taken over after it. */
  leaseMs?: number;
  /** How long an approval interrupt stays open (its `expiresAt`); none by default. */
  approvalTimeoutMs?: number;
}

/**
 * The saved record of a thread (undefined for a new one), refused when it belongs to another
 * principal (403) or when the id cannot be a session id (400).
 */
export async function threadRecord(
  store: SessionStore,
  threadId: string,
  principal: string,
): Promise<SessionRecord | undefined> {
  let record: SessionRecord | undefined;
  try {
    record = await store.load(threadId);
  } catch (error) {
    if (error instanceof SessionStoreError && error.code === 'invalid_id') {
      throw new HttpError(400, 'bad_input', `threadId ${JSON.stringify(threadId)} cannot be a session id`);
    }
    throw new HttpError(500, 'store_failed', `thread "${threadId}" could not be read from the session store`);
  }
  if (record && ownerOf(record) !== principal) {
    throw new HttpError(403, 'thread_forbidden', `thread "${threadId}" belongs to another principal`);
  }
  return record;
}

/** The principal a saved session belongs to (sessions saved without one belong to `local`). */
export function ownerOf(record: SessionRecord): string {
  const owner = record.meta?.[PRINCIPAL_KEY];
  return typeof owner === 'string' ? owner : 'local';
}

/** What a protocol adds to a thread's agent (`openThread`). */
interface OpenThreadExtra {
  tools?: Tool[];
  meta?: Record<string, unknown>;
  lease?: SessionLease;
  /** Wraps the agent's `mcpAuth` (a protocol that reports sign-ins: A2A's `auth-required`). */
  mcpAuth?: (own: McpAuthOptions | undefined) => McpAuthOptions;
}

/** No extras: one object for every call that passes none. */
const NO_EXTRA: OpenThreadExtra = {};

/**
 * An agent carrying the thread's session in this process: restored when the store has it, created
 * under the thread id when not, owned by the caller. It holds the session's lease until closed; a
 * session another process carries is a 409.
 */
export async function openThread(
  context: ThreadContext,
  threadId: string,
  record: SessionRecord | undefined,
  extra: OpenThreadExtra = NO_EXTRA,
): Promise<Agent> {
  const options = await agentOptionsFor(context.source, threadId, context.runtime);
  const meta = {
    ...options.sessionInfo?.meta,
    ...record?.meta,
    ...extra.meta,
    [PRINCIPAL_KEY]: context.principal,
  };
  // `agentOptionsFor` made this object for this call: the server's part is set on it, not spread again.
  options.store = context.store;
  options.session = threadId;
  options.sessionRecord = record ?? null;
  options.sessionInfo = { ...options.sessionInfo, meta };
  // The agent copies its tools: the source's list goes as it is unless the caller adds some.
  if (extra.tools !== undefined && extra.tools.length > 0) {
    const tools = [...(options.tools ?? [])];
    for (const tool of extra.tools) {
      if (tools.some((t) => t.name === tool.name)) {
        throw new HttpError(
          400,
          'bad_input',
          `RunAgentInput.tools: "${tool.name}" is the name of one of the agent's own tools`,
        );
      }
      tools.push(tool);
    }
    options.tools = tools;
  }
  if (context.leaseMs !== undefined) options.leaseMs = context.leaseMs;
  if (extra.lease) options.lease = extra.lease;
  if (extra.mcpAuth && options.mcpServers) options.mcpAuth = extra.mcpAuth(options.mcpAuth);
  const agent = createAgent(options);
  try {
    await agent.ready(); // rejects when another process holds the session's lease
    void agent.actor; // throws when the session could not be loaded
  } catch (error) {
    await agent.close().catch(() => {});
    const inUse = hasCode(error, 'in_use');
    throw inUse
      ? new HttpError(
          409,
          'thread_busy',
          `thread "${threadId}" is being run by another process; try again when it rests`,
        )
      : new HttpError(500, 'thread_unreadable', `thread "${threadId}" could not be restored`);
  }
  return agent;
}

function hasCode(error: unknown, code: string): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof SessionStoreError && e.code === code) return true;
  }
  return false;
}
