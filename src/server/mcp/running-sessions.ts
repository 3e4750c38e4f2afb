/** A turn this process runs on a session: marked when the client cancelled it, released once it rests. */
export interface RunningTurn {
  /** The client cancelled the turn: it is coming to rest, and the next call on the session waits for it. */
  cancelled(): void;
  /** The turn rests and its agent let the session go. */
  release(): void;
}

/**
 * The sessions a turn runs on in this process, shared by every client of it: one turn a session at a
 * time. A call on a session whose turn was cancelled waits for it to come to rest (a client's cancel
 * then its next message just work); a call on a session whose turn runs is refused.
 */
export class RunningSessions {
  readonly #turns = new Map<string, { cancelled: boolean; done: Promise<void> }>();
  #idle: (() => void)[] = [];

  /** Claims `sessionId` for a turn, or undefined when another turn runs on it. */
  async claim(sessionId: string): Promise<RunningTurn | undefined> {
    for (let turn = this.#turns.get(sessionId); turn; turn = this.#turns.get(sessionId)) {
      if (!turn.cancelled) return undefined;
      await turn.done;
    }
    let release!: () => void;
    const entry = { cancelled: false, done: new Promise<void>((resolve) => (release = resolve)) };
    this.#turns.set(sessionId, entry);
    return {
      cancelled: () => {
        entry.cancelled = true;
      },
      release: () => {
        if (this.#turns.get(sessionId) !== entry) return;
        this.#turns.delete(sessionId);
        release();
        if (this.#turns.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
      },
    };
  }

  /** Resolves once no turn runs. */
  idle(): Promise<void> {
    if (this.#turns.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }
}
