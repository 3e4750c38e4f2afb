/** Appends that arrived while earlier work for the session was running; written together. */
interface AppendBatch {
  /** Appends join a batch only with the same key (the same lease). */
  key: string;
  bodies: string[];
  done: Promise<void>;
}

interface Lane {
  tail: Promise<unknown>;
  batch: AppendBatch | undefined;
}

const noop = () => {};

/**
 * One in-process queue per session: calls take effect in call order and reads wait for the writes
 * called before them (the store contract), whatever the pool runs in parallel. Appends that pile up
 * while the session's queue is busy go out together in one statement.
 */
export class SessionQueue {
  readonly #lanes = new Map<string, Lane>();

  /** Runs `task` after everything queued before it for the session, whatever their outcome. */
  run<T>(id: string, task: () => Promise<T>): Promise<T> {
    const lane = this.#lane(id);
    const result = lane.tail.then(task);
    const tail = result.then(noop, noop);
    lane.tail = tail;
    void tail.then(() => {
      if (lane.tail === tail && lane.batch === undefined) this.#lanes.delete(id);
    });
    return result;
  }

  /** Queues `bodies` for `write`, joining appends with the same `key` already waiting for the session. */
  append(
    id: string,
    key: string,
    bodies: string[],
    write: (bodies: string[]) => Promise<void>,
  ): Promise<void> {
    const lane = this.#lane(id);
    let batch = lane.batch?.key === key ? lane.batch : undefined;
    if (!batch) {
      const fresh: AppendBatch = { key, bodies: [], done: Promise.resolve() };
      fresh.done = this.run(id, () => {
        if (lane.batch === fresh) lane.batch = undefined;
        return write(fresh.bodies);
      });
      lane.batch = fresh;
      batch = fresh;
    }
    batch.bodies.push(...bodies);
    return batch.done;
  }

  /** Settles when the session's queued work has. */
  idle(id: string): Promise<unknown> {
    return this.#lanes.get(id)?.tail ?? Promise.resolve();
  }

  /** Settles when every session's queued work has. */
  allIdle(): Promise<unknown> {
    return Promise.all([...this.#lanes.values()].map((lane) => lane.tail));
  }

  #lane(id: string): Lane {
    let lane = this.#lanes.get(id);
    if (!lane) {
      lane = { tail: Promise.resolve(), batch: undefined };
      this.#lanes.set(id, lane);
    }
    return lane;
  }
}
