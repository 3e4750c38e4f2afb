import { type AnyActorRef, type SnapshotFrom, waitFor } from 'xstate';

/**
 * `waitFor` that gives up after 5 s. For tests of the machine with scripted effects, where a turn
 * takes milliseconds: a broken machine (a mutant, a missed transition) fails fast instead of hanging.
 */
export function until<T extends AnyActorRef>(actor: T, done: (s: SnapshotFrom<T>) => boolean) {
  return waitFor(actor, done, { timeout: 5_000 });
}
