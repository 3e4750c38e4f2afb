import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

/** What went wrong with an LLM call, in terms a retry policy and a UI can act on. */
export type LlmErrorKind =
  | 'rate_limit'
  | 'server'
  | 'connection'
  | 'timeout'
  | 'aborted'
  | 'bad_request'
  | 'auth'
  | 'not_found'
  | 'stream_cut'
  | 'unknown';

/** The verdict on one failed LLM call. */
export interface ClassifiedError {
  kind: LlmErrorKind;
  /** Whether the same request may succeed if sent again. */
  retryable: boolean;
  /** The HTTP status, when the server answered. */
  status?: number;
  /** How long the server asked us to wait (`retry-after-ms` or `retry-after`), in ms. */
  retryAfterMs?: number;
  /** The API's error code or type when it gave one (`insufficient_quota`, `context_length_exceeded`, ...). */
  code?: string;
  message: string;
}

/**
 * Thrown by the caller of the SDK when a streamed completion ends without a finish reason
 * (the server closed the body cleanly in the middle of the answer). The SDK itself ends the
 * iteration without an error in that case, so only the caller can notice. Classified as
 * `stream_cut`, retryable.
 */
export class StreamCutError extends Error {
  override readonly name = 'StreamCutError';
  constructor(message = 'The response stream ended before the completion finished', options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * Socket-level error codes of node and undici, seen as the `cause` (or the cause's cause)
 * of a failed fetch or of a body read that broke off.
 */
const SOCKET_CODES = new Set([
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Classifies an error thrown while calling the OpenAI SDK (6.x) or reading its stream.
 *
 * - 429 `rate_limit` is retryable, except `insufficient_quota` (billing: waiting will not help).
 * - 5xx `server`, retryable, as the SDK does. 409 (lock timeout) is `server` and 408 is `timeout`,
 *   both retryable, following the SDK's own retry rule.
 * - 400, 413, 422 and other 4xx are `bad_request`; 401 and 403 `auth`; 404 `not_found`: not retryable.
 * - A server's `x-should-retry: true|false` header overrides the verdict for HTTP errors.
 * - `APIConnectionTimeoutError` is `timeout`, other `APIConnectionError`s are `connection`: retryable,
 *   except what no retry fixes: an invalid URL, an unknown host (`ENOTFOUND`), a port fetch blocks.
 * - `APIUserAbortError` and any `AbortError` are `aborted`: never retried.
 * - A body read that breaks off (undici's `TypeError: terminated` caused by a socket error, as
 *   the SDK lets it through when the socket is destroyed mid-SSE-stream) and `StreamCutError`
 *   are `stream_cut`, retryable.
 * - An `error` object inside the SSE stream arrives as an `APIError` without a status: it is
 *   `rate_limit` or `server` (retryable) when its type or code says so, else `unknown`.
 * - Anything else is `unknown`, not retryable.
 *
 * A connection error's message says what failed where: `could not reach <url>: connection refused
 * (ECONNREFUSED 127.0.0.1:4000)`, the DNS lookup, the TLS handshake (`context.url` is the server's
 * base URL; without it the message says "the model server").
 */
export function classifyLlmError(err: unknown, context: { url?: string } = {}): ClassifiedError {
  const message = errorMessage(err);

  if (err instanceof APIUserAbortError || isAbortError(err)) {
    return { kind: 'aborted', retryable: false, message };
  }
  if (err instanceof APIConnectionTimeoutError) {
    return { kind: 'timeout', retryable: true, message };
  }
  if (err instanceof APIConnectionError || causeCode(err, PERMANENT_CODES) !== undefined) {
    const retryable = !isPermanent(err);
    return { kind: 'connection', retryable, message: connectionMessage(err, context.url) };
  }
  if (err instanceof StreamCutError) {
    return { kind: 'stream_cut', retryable: true, message };
  }
  if (err instanceof APIError || hasHttpStatus(err)) {
    return classifyApiError(err as APIError, message);
  }
  if (isStreamCut(err)) {
    return { kind: 'stream_cut', retryable: true, message };
  }
  if (causeCode(err, SOCKET_CODES) !== undefined) {
    return { kind: 'connection', retryable: true, message: connectionMessage(err, context.url) };
  }
  return { kind: 'unknown', retryable: false, message };
}

function classifyApiError(err: APIError, message: string): ClassifiedError {
  const status = typeof err.status === 'number' ? err.status : undefined;
  const code = apiErrorCode(err);
  const base = { message, ...(status !== undefined && { status }), ...(code !== undefined && { code }) };

  if (status === undefined) {
    // An `error` event inside an SSE stream: the SDK gives it no status.
    const hint = `${code ?? ''} ${message}`.toLowerCase();
    if (hint.includes('rate_limit') || hint.includes('rate limit')) {
      return { ...base, kind: 'rate_limit', retryable: true };
    }
    if (hint.includes('server_error') || hint.includes('overloaded') || hint.includes('internal')) {
      return { ...base, kind: 'server', retryable: true };
    }
    return { ...base, kind: 'unknown', retryable: false };
  }

  const retryAfterMs = parseRetryAfter(err.headers);
  const withWait = retryAfterMs === undefined ? base : { ...base, retryAfterMs };
  const verdict = statusVerdict(status, code);
  const override = headerValue(err.headers, 'x-should-retry');
  const retryable = override === 'true' ? true : override === 'false' ? false : verdict.retryable;
  return { ...withWait, kind: verdict.kind, retryable };
}

function statusVerdict(status: number, code: string | undefined): { kind: LlmErrorKind; retryable: boolean } {
  if (status === 429) return { kind: 'rate_limit', retryable: code !== 'insufficient_quota' };
  if (status >= 500) return { kind: 'server', retryable: true };
  if (status === 408) return { kind: 'timeout', retryable: true };
  if (status === 409) return { kind: 'server', retryable: true };
  if (status === 401 || status === 403) return { kind: 'auth', retryable: false };
  if (status === 404) return { kind: 'not_found', retryable: false };
  if (status >= 400) return { kind: 'bad_request', retryable: false };
  return { kind: 'unknown', retryable: false };
}

/**
 * Reads `retry-after-ms` (milliseconds) or `retry-after` (seconds, or an HTTP date) from
 * response headers, as a `Headers` object (SDK 6) or a plain record. Returns undefined when
 * absent, unparsable or negative.
 */
export function parseRetryAfter(headers: unknown, now: number = Date.now()): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms !== undefined) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headerValue(headers, 'retry-after');
  if (after === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Number.parseFloat(after) * 1000;
  const date = Date.parse(after);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() === name) {
      const value = record[key];
      return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0]) : undefined;
    }
  }
  return undefined;
}

function apiErrorCode(err: APIError): string | undefined {
  if (typeof err.code === 'string' && err.code) return err.code;
  if (typeof err.type === 'string' && err.type) return err.type;
  return undefined;
}

/** An error from another copy of the SDK (or a look-alike) still carries an HTTP status. */
function hasHttpStatus(err: unknown): boolean {
  return err instanceof Error && typeof (err as { status?: unknown }).status === 'number' && 'headers' in err;
}

function isAbortError(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { name?: unknown }).name === 'AbortError' &&
    !(err instanceof APIError)
  );
}

/** undici reports a body that broke off as `TypeError: terminated` with the socket error as cause. */
function isStreamCut(err: unknown): boolean {
  if (!(err instanceof TypeError)) return false;
  if (err.message === 'terminated') return true;
  return err.message !== 'fetch failed' && causeCode(err, SOCKET_CODES) !== undefined;
}

/** The first code of `codes` on the error or its causes. */
function causeCode(err: unknown, codes: ReadonlySet<string>): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && codes.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Failures no retry can fix: a URL that does not parse, a host name DNS says does not exist, a port
 * the fetch standard blocks (undici refuses it before connecting: `bad port`, no code).
 */
const PERMANENT_CODES: ReadonlySet<string> = new Set(['ERR_INVALID_URL', 'ENOTFOUND']);

function isPermanent(err: unknown): boolean {
  if (causeCode(err, PERMANENT_CODES) !== undefined) return true;
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message === BAD_PORT) return true;
    current = current.cause;
  }
  return false;
}

/** undici's message for a port the fetch standard blocks (6000, 1, 25, ...). */
const BAD_PORT = 'bad port';

function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? err.cause.message : undefined;
    return cause && cause !== err.message ? `${err.message} (${cause})` : err.message;
  }
  return typeof err === 'string' ? err : String(err);
}

/** What a cause's code says happened, in words. */
const CONNECTION_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EPIPE: 'connection closed while sending',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'DNS lookup found no such host',
  EAI_AGAIN: 'DNS lookup failed (temporary failure)',
  UND_ERR_SOCKET: 'the socket closed',
  UND_ERR_CLOSED: 'the connection closed',
  ERR_INVALID_URL: 'not a valid URL',
};

/**
 * `could not reach <url>: <what happened> (<code> <detail>)`, from the deepest cause that says
 * something (undici wraps the socket's error in `TypeError: fetch failed`, the SDK wraps that in
 * `Connection error.`).
 */
function connectionMessage(err: unknown, url: string | undefined): string {
  const where = `could not reach ${url ?? 'the model server'}`;
  const causes: { message: string; code?: string; detail?: string }[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    const e = current as Error & { code?: unknown; hostname?: unknown; address?: unknown; port?: unknown };
    const code = typeof e.code === 'string' ? e.code : undefined;
    const detail =
      typeof e.hostname === 'string'
        ? e.hostname
        : typeof e.address === 'string'
          ? `${e.address}${e.port === undefined ? '' : `:${String(e.port)}`}`
          : undefined;
    causes.push({ message: e.message, ...(code && { code }), ...(detail && { detail }) });
    // An AggregateError (one error per address tried) carries its code and the first error's address.
    current = e.cause ?? (e instanceof AggregateError ? e.errors[0] : undefined);
  }
  const coded = causes.findLast((c) => c.code !== undefined);
  if (coded?.code) {
    const code = coded.code;
    const tls = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$)/.test(code);
    const what = tls
      ? `TLS handshake failed: ${firstLine(coded.message)}`
      : (CONNECTION_CAUSES[code] ?? firstLine(coded.message));
    return `${where}: ${what} (${code}${coded.detail ? ` ${coded.detail}` : ''})`;
  }
  // No code: the innermost message that is not one of the wrappers' ("bad port", ...).
  const plain = causes.findLast((c) => c.message !== 'fetch failed' && c.message !== 'Connection error.');
  if (plain?.message === BAD_PORT) return `${where}: the port is one the fetch standard blocks (bad port)`;
  return plain ? `${where}: ${firstLine(plain.message)}` : where;
}

/** The first line of a message, without OpenSSL's source location. */
function firstLine(message: string): string {
  const line = message.split('\n')[0]!.trim();
  // `80ACC142727F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/...`
  const ssl = /:SSL routines:[^:]*:([^:]+)/.exec(line);
  return ssl ? ssl[1]! : line;
}
