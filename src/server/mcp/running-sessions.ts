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
  readonly #turns = new Map<string, SessionTurn>();
  #idle: (() => void)[] = [];
  /** Called when the last turn rests: one function for the process's turns, not one a turn. */
  readonly #emptied = (): void => {
    if (this.#idle.length === 0) return;
    const idle = this.#idle;
    this.#idle = [];
    for (const resolve of idle) resolve();
  };

  /**
   * Claims `sessionId` for a turn, or undefined when another turn runs on it. A free session is claimed
   * at once (no promise, nothing to wait for); a promise only when a cancelled turn is still coming to rest.
   */
  claim(sessionId: string): RunningTurn | undefined | Promise<RunningTurn | undefined> {
    const turn = this.#turns.get(sessionId);
    if (turn === undefined) return this.#start(sessionId);
    return turn.wasCancelled ? this.#claimOnceRested(sessionId) : undefined;
  }

  /** Resolves once no turn runs. */
  idle(): Promise<void> {
    if (this.#turns.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #claimOnceRested(sessionId: string): Promise<RunningTurn | undefined> {
    for (let turn = this.#turns.get(sessionId); turn; turn = this.#turns.get(sessionId)) {
      if (!turn.wasCancelled) return undefined;
      await turn.rested();
    }
    return this.#start(sessionId);
  }

  #start(sessionId: string): SessionTurn {
    const turn = new SessionTurn(sessionId, this.#turns, this.#emptied);
    this.#turns.set(sessionId, turn);
    return turn;
  }
}

/** One claimed session's turn (its promise of rest made only when a call waits for it). */
class SessionTurn implements RunningTurn {
  wasCancelled = false;
  #rested: Promise<void> | undefined;
  #rest: (() => void) | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly turns: Map<string, SessionTurn>,
    private readonly emptied: () => void,
  ) {}

  cancelled(): void {
    this.wasCancelled = true;
  }

  release(): void {
    if (this.turns.get(this.sessionId) !== this) return;
    this.turns.delete(this.sessionId);
    this.#rest?.();
    if (this.turns.size === 0) this.emptied();
  }

  /** Resolves once the turn rests. */
  rested(): Promise<void> {
    this.#rested ??= new Promise<void>((resolve) => {
      this.#rest = resolve;
    });
    return this.#rested;
  }
}
