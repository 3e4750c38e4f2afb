import type { ServerResponse } from 'node:http';

/**
 * A refusal the server answers with a status and a message for the client. The message is written for
 * the client: it names the field, the thread or the limit, and never a path, a stack or a secret.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  /** A short machine-readable reason (`bad_input`, `thread_not_found`, ...). */
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Writes `error` as a JSON body `{ error: { code, message } }`; anything but an HttpError becomes a bare 500. */
export function sendError(res: ServerResponse, error: unknown): void {
  const known = error instanceof HttpError;
  const status = known ? error.status : 500;
  const body = known
    ? { error: { code: error.code, message: error.message } }
    : { error: { code: 'internal', message: 'the server failed to handle the request' } };
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
