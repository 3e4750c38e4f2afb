import type { Completion } from './model-reply.js';

/** What assembles one wire's stream events into a completion (`CompletionAssembler`, `ResponseAssembler`). */
export interface StreamAssembler {
  push(event: unknown): void;
  /** Whether the stream said it ended (a finish reason, a completed response): else it was cut. */
  readonly ended: boolean;
  toCompletion(): Completion;
}
