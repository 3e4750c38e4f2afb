import type { SessionStore } from '../session/session-store.js';

/**
 * The four test-registration functions of the runner the suite runs in. Vitest's, Jest's and
 * `node:test`'s fit as they are: `{ describe, it, beforeEach, afterEach }`.
 *
 * The kit takes them as a parameter instead of importing `vitest`, so that `agentloop` does not
 * depend on a test runner (an embedder's production install gets none) and a store author may use
 * whichever runner the project has. Assertions use `node:assert`, which every Node has.
 */
export interface TestApi {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>): unknown;
  beforeEach(hook: () => Promise<void>): unknown;
  afterEach(hook: () => Promise<void>): unknown;
}

/** The store under test, as the suite makes, reopens and disposes of it. */
export interface StoreUnderTest {
  /** Shown in the suite's name, e.g. `RedisSessionStore`. */
  name: string;
  /** A new, empty store for one test. */
  create(): Promise<SessionStore> | SessionStore;
  /** Disposes of a store `create` gave, after its test (drop its tables, remove its folder). */
  dispose?(store: SessionStore): Promise<void> | void;
  /**
   * A second store over the same data, as a process started after this one crashed would open it
   * (same folder, same database schema). With it the suite runs the crash cases; a store that keeps
   * nothing beyond its process (in memory) leaves it out.
   */
  reopen?(store: SessionStore): Promise<SessionStore> | SessionStore;
  /** Closes a store `reopen` gave (its connections); its data stays for `dispose`. */
  close?(store: SessionStore): Promise<void> | void;
}

/** The store of the running test, and a way to open a second one over its data (crash cases). */
export interface StoreHandle {
  (): SessionStore;
  reopen(): Promise<SessionStore>;
}
