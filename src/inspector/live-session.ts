// An agent attached to the inspector server, and what the page is told about it.
import type { Agent } from '../agent/agent.js';
import type { AgentEvent } from '../machines/emitted-events.js';
import type { BusEvent, SessionInfo, SessionStatus, SessionSync } from './protocol.js';
import { createSanitizer, type Sanitizer } from './sanitize.js';
import { type SnapshotLike, statusOf, topState } from './session-view.js';

/** How an attached agent is listed. */
export interface AttachOptions {
  name?: string;
  /** The parent session: a subagent is listed under it. */
  parentId?: string;
  title?: string;
}

/** An attached agent: shown live, approvals answered from the page. */
export interface LiveSession {
  kind: 'live';
  id: string;
  name: string;
  parentId: string | undefined;
  title: string | undefined;
  agent: Agent<unknown>;
  /** The actor's system id, which inspection events name as their `rootId` (known once the actor exists). */
  rootActorId: string | undefined;
  /** False once detached: still listed, as ended. */
  attached: boolean;
  /** Sanitizer with this agent's secrets. */
  sanitize: Sanitizer;
  /** The same for inspection events: conversations in them become counts (the transcript channel carries them). */
  sanitizeEvent: Sanitizer;
  /** Bus events kept for pages that connect later (the last `historyLimit`, no token chunks). */
  history: AgentEvent[];
  /** Token chunks gathered since the last flush. */
  stream: string;
  /** Messages sent to the pages so far (by batches). */
  sentMessages: number;
  /** Something happened since the last batch: its status (and messages) go out with the next one. */
  dirty: boolean;
  /** Stops listening to the agent's bus. */
  off: () => void;
}

/** A new session for `agent`, whose sanitizers hide `secrets` and the agent's own secrets. */
export function createLiveSession(
  agent: Agent<unknown>,
  options: AttachOptions,
  sanitizing: { secrets: readonly string[]; maxStringChars: number },
): LiveSession {
  const secrets = [...sanitizing.secrets, ...agent.inspectionSecrets];
  const { maxStringChars } = sanitizing;
  return {
    kind: 'live',
    id: agent.sessionId,
    name: options.name ?? 'agent',
    parentId: options.parentId,
    title: options.title,
    agent,
    rootActorId: undefined,
    attached: true,
    sanitize: createSanitizer({ secrets, maxStringChars }),
    sanitizeEvent: createSanitizer({ secrets, maxStringChars, countKeys: ['messages'] }),
    history: [],
    stream: '',
    sentMessages: 0,
    dirty: false,
    off: () => {},
  };
}

/** The agent's snapshot, or undefined while it is still loading a saved session. */
export function snapshotOf(session: LiveSession): SnapshotLike | undefined {
  try {
    return session.agent.actor.getSnapshot() as unknown as SnapshotLike;
  } catch {
    return undefined;
  }
}

/** The agent actor's session id (inspection events' `rootId`), or undefined while it is still loading. */
export function rootActorIdOf(session: LiveSession): string | undefined {
  try {
    return session.agent.actor.sessionId;
  } catch {
    return undefined;
  }
}

/** The session's row in the list. */
export function liveInfo(session: LiveSession): SessionInfo {
  const info: SessionInfo = {
    id: session.id,
    name: session.name,
    live: session.attached,
    source: 'live',
    state: topState(snapshotOf(session)?.value ?? 'Initializing'),
  };
  if (session.parentId) info.parentId = session.parentId;
  if (session.title) info.title = session.title;
  return info;
}

/** What the agent is doing now, sanitized. */
export function liveStatus(session: LiveSession): SessionStatus {
  const snapshot = snapshotOf(session) ?? { value: 'Initializing', status: 'active', context: undefined };
  const status = statusOf(snapshot, session.sanitize);
  // A stopped agent's snapshot still says `active`.
  if (!session.attached && status.status === 'active') status.status = 'stopped';
  return status;
}

/** Everything about the session, sanitized: sent when a page connects or asks. */
export function liveSync(session: LiveSession): SessionSync {
  const context = snapshotOf(session)?.context;
  return {
    info: liveInfo(session),
    status: liveStatus(session),
    messages: session.sanitize(context?.messages ?? []) as unknown[],
    events: session.history.map((e) => session.sanitize(e) as BusEvent),
    partial: session.sanitize(context?.partial ?? '') as string,
  };
}
