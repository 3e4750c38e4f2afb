// The sessions the inspector server shows: live agents attached to it and sessions read from disk.
import { type LiveSession, liveInfo, liveSync, rootActorIdOf } from './live-session.js';
import type { SessionInfo, SessionSync } from './protocol.js';
import type { SavedSessionView } from './saved-sessions.js';

/** A session read from disk: shown, never driven. */
export interface SavedSession {
  kind: 'saved';
  id: string;
  view: SavedSessionView;
}

export type TrackedSession = LiveSession | SavedSession;

/** A session's row in the list. */
export function sessionInfo(session: TrackedSession): SessionInfo {
  if (session.kind === 'saved') return { ...session.view.info, live: false, source: 'saved' };
  return liveInfo(session);
}

/** Everything about a session, as a `sync` message carries it. */
export function sessionSync(session: TrackedSession): SessionSync {
  if (session.kind === 'live') return liveSync(session);
  const { view } = session;
  return {
    info: sessionInfo(session),
    status: view.status,
    messages: view.messages,
    events: view.events,
    partial: '',
    ...(view.forkPoints && view.forkPoints.length > 0 ? { forkPoints: view.forkPoints } : {}),
  };
}

/** Every session by id (in the order they were first added), and live ones by their root actor. */
export class TrackedSessions {
  readonly #sessions = new Map<string, TrackedSession>();
  readonly #byRootActor = new Map<string, LiveSession>();

  get(id: string): TrackedSession | undefined {
    return this.#sessions.get(id);
  }

  values(): IterableIterator<TrackedSession> {
    return this.#sessions.values();
  }

  *live(): Generator<LiveSession> {
    for (const session of this.#sessions.values()) if (session.kind === 'live') yield session;
  }

  /** The session list as the page shows it. */
  list(): SessionInfo[] {
    return [...this.#sessions.values()].map(sessionInfo);
  }

  /** Adds a session, or replaces the one with its id (keeping its place in the list). */
  set(session: TrackedSession): void {
    this.#sessions.set(session.id, session);
    if (session.kind === 'live') this.#findRoot(session);
  }

  /** The attached session whose agent's actor is `rootId`. */
  forRootActor(rootId: string): LiveSession | undefined {
    const session = this.#byRootActor.get(rootId);
    if (session) return session;
    // An agent that was still loading its session when it was attached has its actor now.
    for (const s of this.live()) if (s.rootActorId === undefined) this.#findRoot(s);
    return this.#byRootActor.get(rootId);
  }

  /** Forgets a detached session's actor (it stays listed). */
  release(session: LiveSession): void {
    if (session.rootActorId) this.#byRootActor.delete(session.rootActorId);
  }

  #findRoot(session: LiveSession): void {
    const rootId = rootActorIdOf(session);
    if (rootId === undefined) return; // Still loading: found on its first inspection event.
    session.rootActorId = rootId;
    this.#byRootActor.set(rootId, session);
  }
}
