import { APIConnectionError, APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { classifyLlmError, parseRetryAfter } from '../src/llm/error-classification.js';

// classifyLlmError's corners, on errors built as the SDK and undici build them: what an error inside
// an SSE stream (no status) means, each status, the `x-should-retry` override, every form of
// `retry-after`, look-alike errors, and the connection message's parts. Written for the survivors of
// `npm run mutation -- src/llm/error-classification.ts` (docs/testing.md).

const apiError = (
  status: number | undefined,
  body: Record<string, unknown>,
  message: string,
  headers?: Headers,
) => new APIError(status, body, message, headers);

const coded = (message: string, code: string, more: Record<string, unknown> = {}, cause?: unknown) =>
  Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code, ...more });

describe('an error event inside a stream (no HTTP status)', () => {
  it('is read from its code or its words', () => {
    const kinds = [
      apiError(undefined, { code: 'rate_limit_exceeded' }, 'slow'),
      apiError(undefined, { message: 'Rate limit reached for requests' }, 'Rate limit reached for requests'),
      apiError(undefined, { code: 'server_error' }, 'oops'),
      apiError(
        undefined,
        { message: 'The engine is currently overloaded' },
        'The engine is currently overloaded',
      ),
      apiError(undefined, { message: 'An internal error occurred' }, 'An internal error occurred'),
      apiError(undefined, { message: 'something else' }, 'something else'),
    ].map((e) => [classifyLlmError(e).kind, classifyLlmError(e).retryable]);
    expect(kinds).toEqual([
      ['rate_limit', true],
      ['rate_limit', true],
      ['server', true],
      ['server', true],
      ['server', true],
      ['unknown', false],
    ]);
  });

  it('carries its code (or its type when the code is empty), and no status', () => {
    const byType = classifyLlmError(apiError(undefined, { code: '', type: 'server_error' }, 'x'));
    expect(byType).toMatchObject({ kind: 'server', code: 'server_error' });
    expect(byType).not.toHaveProperty('status');
    const none = classifyLlmError(apiError(undefined, { code: '', type: '' }, 'plain'));
    expect(Object.keys(none).sort()).toEqual(['kind', 'message', 'retryable']);
  });
});

describe('an HTTP status', () => {
  it('gives the kind and whether a retry may help', () => {
    const verdict = (status: number, code?: string) => {
      const { kind, retryable } = classifyLlmError(
        apiError(status, code ? { code } : {}, 'm', new Headers()),
      );
      return `${status}${code ? `/${code}` : ''} ${kind} ${retryable}`;
    };
    expect(
      [
        verdict(429),
        verdict(429, 'insufficient_quota'),
        verdict(500),
        verdict(503),
        verdict(408),
        verdict(409),
        verdict(401),
        verdict(403),
        verdict(404),
        verdict(422),
        verdict(302),
      ].join('\n'),
    ).toBe(
      [
        '429 rate_limit true',
        '429/insufficient_quota rate_limit false',
        '500 server true',
        '503 server true',
        '408 timeout true',
        '409 server true',
        '401 auth false',
        '403 auth false',
        '404 not_found false',
        '422 bad_request false',
        '302 unknown false',
      ].join('\n'),
    );
    expect(
      classifyLlmError(apiError(400, { code: 'context_length_exceeded' }, 'm', new Headers())),
    ).toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    });
  });

  it("yields to the server's x-should-retry, and carries its retry-after", () => {
    const headers = (h: Record<string, string>) => new Headers(h);
    expect(classifyLlmError(apiError(400, {}, 'm', headers({ 'x-should-retry': 'true' }))).retryable).toBe(
      true,
    );
    expect(classifyLlmError(apiError(500, {}, 'm', headers({ 'x-should-retry': 'false' }))).retryable).toBe(
      false,
    );
    expect(classifyLlmError(apiError(500, {}, 'm', headers({ 'x-should-retry': 'maybe' }))).retryable).toBe(
      true,
    );
    expect(classifyLlmError(apiError(429, {}, 'm', headers({ 'retry-after': '3' })))).toMatchObject({
      retryAfterMs: 3000,
    });
    expect(classifyLlmError(apiError(429, {}, 'm', headers({})))).not.toHaveProperty('retryAfterMs');
  });

  it('is read from a look-alike error (another copy of the SDK) that has a status and headers', () => {
    const lookAlike = Object.assign(new Error('Service Unavailable'), { status: 503, headers: {} });
    expect(classifyLlmError(lookAlike)).toMatchObject({ kind: 'server', retryable: true, status: 503 });
    const noHeaders = Object.assign(new Error('odd'), { status: 503 });
    expect(classifyLlmError(noHeaders).kind).toBe('unknown');
    const notAnError = { status: 503, headers: {}, message: 'x' };
    expect(classifyLlmError(notAnError).kind).toBe('unknown');
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 26, 12, 0, 0);
  const parse = (headers: unknown) => parseRetryAfter(headers, now);

  it('reads milliseconds first, then seconds, then an HTTP date', () => {
    expect(parse({ 'retry-after-ms': '1500', 'retry-after': '9' })).toBe(1500);
    expect(parse({ 'retry-after-ms': '0' })).toBe(0);
    expect(parse({ 'retry-after-ms': '-5', 'retry-after': '2' })).toBe(2000);
    expect(parse({ 'Retry-After': ' 1.25 ' })).toBe(1250);
    expect(parse({ 'retry-after': '12' })).toBe(12_000);
    expect(parse({ 'retry-after': ['3', '4'] })).toBe(3000);
    expect(parse(new Headers({ 'retry-after': '2 ' }))).toBe(2000);
    expect(parse({ 'retry-after': new Date(now + 5_000).toUTCString() })).toBe(5_000);
    expect(parse({ 'retry-after': new Date(now - 5_000).toUTCString() })).toBe(0);
  });

  it('gives nothing for what it cannot read', () => {
    for (const headers of [
      null,
      'retry-after: 2',
      42,
      {},
      { 'retry-after': 'soon' },
      { 'retry-after': '2 x' },
      { 'retry-after': 'x2' },
      { 'retry-after': 7 },
    ]) {
      expect(parse(headers)).toBeUndefined();
    }
  });
});

describe('errors below HTTP', () => {
  it('a body that broke off is a stream cut; a fetch that failed is a connection error', () => {
    expect(classifyLlmError(new TypeError('terminated')).kind).toBe('stream_cut');
    const cutWithCause = new TypeError('other', { cause: coded('read ECONNRESET', 'ECONNRESET') });
    expect(classifyLlmError(cutWithCause).kind).toBe('stream_cut');
    const fetchFailed = new TypeError('fetch failed', { cause: coded('read ECONNRESET', 'ECONNRESET') });
    expect(classifyLlmError(fetchFailed).kind).toBe('connection');
    expect(classifyLlmError(new TypeError('other')).kind).toBe('unknown');
  });

  it('finds a socket code up to five errors deep, not deeper', () => {
    const nest = (depth: number): unknown => {
      let error: unknown = coded('connect ECONNREFUSED', 'ECONNREFUSED');
      for (let i = 1; i < depth; i++) error = new Error(`wrap ${i}`, { cause: error });
      return error;
    };
    expect(classifyLlmError(nest(5)).kind).toBe('connection');
    expect(classifyLlmError(nest(6)).kind).toBe('unknown');
  });

  it("says what went wrong: the cause's words, its code and address, the URL when known", () => {
    const refused = new APIConnectionError({
      cause: new TypeError('fetch failed', {
        cause: coded('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED', { address: '127.0.0.1', port: 9 }),
      }),
    });
    expect(classifyLlmError(refused, { url: 'http://127.0.0.1:9/v1' }).message).toBe(
      'could not reach http://127.0.0.1:9/v1: connection refused (ECONNREFUSED 127.0.0.1:9)',
    );
    const noPort = new APIConnectionError({ cause: coded('x', 'EHOSTUNREACH', { address: '10.0.0.1' }) });
    expect(classifyLlmError(noPort).message).toBe(
      'could not reach the model server: host unreachable (EHOSTUNREACH 10.0.0.1)',
    );
    const dns = new APIConnectionError({
      cause: coded('getaddrinfo ENOTFOUND nope.invalid', 'ENOTFOUND', { hostname: 'nope.invalid' }),
    });
    expect(classifyLlmError(dns)).toMatchObject({
      retryable: false,
      message: 'could not reach the model server: DNS lookup found no such host (ENOTFOUND nope.invalid)',
    });
    const tls = new APIConnectionError({
      cause: coded(
        '80ACC142727F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/x.c:354:\nmore',
        'ERR_SSL_WRONG_VERSION_NUMBER',
      ),
    });
    expect(classifyLlmError(tls).message).toBe(
      'could not reach the model server: TLS handshake failed: wrong version number (ERR_SSL_WRONG_VERSION_NUMBER)',
    );
    const odd = new APIConnectionError({ cause: coded('  strange thing  \nsecond line', 'E_ODD') });
    expect(classifyLlmError(odd).message).toBe('could not reach the model server: strange thing (E_ODD)');
    const badPort = new APIConnectionError({
      cause: new TypeError('fetch failed', { cause: new Error('bad port') }),
    });
    expect(classifyLlmError(badPort)).toMatchObject({
      retryable: false,
      message: 'could not reach the model server: the port is one the fetch standard blocks (bad port)',
    });
    const plain = new APIConnectionError({
      cause: new TypeError('fetch failed', { cause: new Error('socket hang up') }),
    });
    expect(classifyLlmError(plain).message).toBe('could not reach the model server: socket hang up');
    const bare = new APIConnectionError({ message: 'Connection error.' });
    expect(classifyLlmError(bare).message).toBe('could not reach the model server');
  });

  it("keeps a thrown value's text: an error with its cause, a string, anything else", () => {
    expect(classifyLlmError(new Error('outer', { cause: new Error('inner') })).message).toBe('outer (inner)');
    expect(classifyLlmError(new Error('same', { cause: new Error('same') })).message).toBe('same');
    expect(classifyLlmError(new Error('alone', { cause: 'not an error' })).message).toBe('alone');
    expect(classifyLlmError('just text').message).toBe('just text');
    expect(classifyLlmError(42).message).toBe('42');
  });
});

// Written for the survivors of the second run (docs/testing.md): what a hostile or odd thrown value
// does to the classifier: never a crash, never a hang.
describe('thrown values no server sends, classified without a crash or a hang', () => {
  it('classifies a thrown null, and an error whose cause is null', () => {
    expect(classifyLlmError(null)).toMatchObject({ kind: 'unknown', retryable: false });
    expect(classifyLlmError(new Error('x', { cause: null }))).toMatchObject({ kind: 'unknown' });
    expect(
      classifyLlmError(new APIConnectionError({ cause: new TypeError('fetch failed', { cause: null }) })),
    ).toMatchObject({
      kind: 'connection',
      retryable: true,
    });
  });

  it('ends on an error that is its own cause', () => {
    const loop = new TypeError('fetch failed');
    (loop as { cause?: unknown }).cause = loop;
    const verdict = classifyLlmError(new APIConnectionError({ cause: loop }));
    expect(verdict).toMatchObject({ kind: 'connection', retryable: true });
  });

  it('names the code of an outer cause when the innermost has none, and no wrapper text', () => {
    const outer = new APIConnectionError({
      cause: coded('fetch failed', 'ECONNREFUSED', { cause: new Error('detail without a code') }),
    });
    expect(classifyLlmError(outer, { url: 'http://h/v1' }).message).toContain(
      'connection refused (ECONNREFUSED',
    );
    const bare = new APIConnectionError({ cause: new TypeError('fetch failed') });
    expect(classifyLlmError(bare, { url: 'http://h/v1' }).message).toBe('could not reach http://h/v1');
  });
});
