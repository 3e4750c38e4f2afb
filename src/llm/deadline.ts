/** Thrown when the turn's deadline passes during the call. */
export class DeadlineExceededError extends Error {
  readonly code = 'deadline_exceeded';
  constructor() {
    super("the turn's time limit was reached during the model call");
  }
}
