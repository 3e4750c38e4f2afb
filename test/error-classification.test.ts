import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI, { APIConnectionError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ClassifiedError,
  classifyLlmError,
  parseRetryAfter,
  StreamCutError,
} from '../src/llm/error-classification.js';
import { type Fault, type FaultServer, startFaultServer, streamText } from './fault-server.js';

let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Makes one real SDK call against a server answering `fault` and classifies what it throws. */
async function classifyFault(fault: Fault, options: { stream?: boolean; timeout?: number } = {}) {
  server = await startFaultServer([fault]);
  const client = server.client(options.timeout ? { timeout: options.timeout } : {});
  try {
    if (options.stream) await streamText(client);
    else await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  } catch (err) {
    return { err, classified: classifyLlmError(err) };
  }
  throw new Error('the call did not fail');
}

describe('classifyLlmError over real SDK errors', () => {
  it.each([
    [500, 'server', true],
    [502, 'server', true],
    [503, 'server', true],
    [504, 'server', true],
    [400, 'bad_request', false],
    [401, 'auth', false],
    [403, 'auth', false],
    [404, 'not_found', false],
    [422, 'bad_request', false],
    [408, 'timeout', true],
    [409, 'server', true],
  ] as const)('HTTP %i is %s (retryable: %s)', async (status, kind, retryable) => {
    const { classified } = await classifyFault({ kind: 'status', status });
    expect(classified).toMatchObject({ kind, retryable, status });
    expect(classified.message).toContain(String(status));
  });

  it('429 with retry-after-ms is a retryable rate limit that says how long to wait', async () => {
    const { classified } = await classifyFault({
      kind: 'status',
      status: 429,
      headers: { 'retry-after-ms': '1500' },
      body: { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } },
    });
    expect(classified).toMatchObject({
      kind: 'rate_limit',
      retryable: true,
      status: 429,
      retryAfterMs: 1500,
      code: 'rate_limit_exceeded',
    });
  });

  it('429 with retry-after in seconds', async () => {
    const { classified } = await classifyFault({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '2' },
    });
    expect(classified.retryAfterMs).toBe(2000);
  });

  it('429 insufficient_quota is not retryable: waiting does not refill a quota', async () => {
    const { classified } = await classifyFault({
      kind: 'status',
      status: 429,
      body: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: null } },
    });
    expect(classified).toMatchObject({ kind: 'rate_limit', retryable: false, code: 'insufficient_quota' });
  });

  it('400 context_length_exceeded keeps the code for the caller', async () => {
    const { classified } = await classifyFault({
      kind: 'status',
      status: 400,
      body: {
        error: { message: 'too long', type: 'invalid_request_error', code: 'context_length_exceeded' },
      },
    });
    expect(classified).toMatchObject({
      kind: 'bad_request',
      retryable: false,
      code: 'context_length_exceeded',
    });
  });

  it('x-should-retry overrides the status rule', async () => {
    const { classified } = await classifyFault({
      kind: 'status',
      status: 503,
      headers: { 'x-should-retry': 'false' },
    });
    expect(classified).toMatchObject({ kind: 'server', retryable: false });
  });

  it('a reset socket is a retryable connection error', async () => {
    const { err, classified } = await classifyFault({ kind: 'reset' });
    expect(err?.constructor.name).toBe('APIConnectionError');
    expect(classified).toMatchObject({ kind: 'connection', retryable: true });
  });

  it('a socket destroyed mid-SSE-stream is a retryable stream_cut (undici TypeError "terminated")', async () => {
    const { err, classified } = await classifyFault({ kind: 'cut', deltas: ['hel', 'lo'] }, { stream: true });
    // What the SDK lets through: undici's body error, not an SDK error class.
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('terminated');
    expect(classified).toMatchObject({ kind: 'stream_cut', retryable: true });
  });

  it('an error object inside the SSE stream is a retryable server error', async () => {
    const { classified } = await classifyFault(
      {
        kind: 'sse-error',
        deltas: ['a'],
        error: { message: 'The server is overloaded', type: 'server_error' },
      },
      { stream: true },
    );
    expect(classified).toMatchObject({ kind: 'server', retryable: true });
    expect(classified.status).toBeUndefined();
  });

  it('a client timeout is a retryable timeout', async () => {
    const { err, classified } = await classifyFault({ kind: 'hang' }, { timeout: 100 });
    expect(err?.constructor.name).toBe('APIConnectionTimeoutError');
    expect(classified).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('an aborted request is aborted, never retryable', async () => {
    server = await startFaultServer([{ kind: 'hang' }]);
    const controller = new AbortController();
    const call = streamText(server.client(), controller.signal);
    setTimeout(() => controller.abort(), 20);
    const err = await call.catch((e: unknown) => e);
    expect(err?.constructor.name).toBe('APIUserAbortError');
    expect(classifyLlmError(err)).toMatchObject({ kind: 'aborted', retryable: false });
  });
});

/** What one real SDK call to `baseURL` (no retries) fails with. */
async function sdkError(baseURL: string): Promise<unknown> {
  const client = new OpenAI({ baseURL, apiKey: 'k', maxRetries: 0, timeout: 10_000 });
  return client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe('connection errors say what failed where (issue 16)', () => {
  /** What classifyLlmError makes of a connection error of one real SDK call to `baseURL`, given the URL. */
  async function failedCall(baseURL: string): Promise<ClassifiedError> {
    const err = await sdkError(baseURL);
    expect(err?.constructor.name).toBe('APIConnectionError');
    return classifyLlmError(err, { url: baseURL });
  }

  it('a closed port on 127.0.0.1: the URL, "connection refused", ECONNREFUSED and the address', async () => {
    const listener = createNetServer();
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const { port } = listener.address() as { port: number };
    await new Promise((resolve) => listener.close(resolve));
    const url = `http://127.0.0.1:${port}/v1`;
    expect(await failedCall(url)).toEqual({
      kind: 'connection',
      retryable: true,
      message: `could not reach ${url}: connection refused (ECONNREFUSED 127.0.0.1:${port})`,
    });
  });

  it('a host that does not resolve: the DNS lookup and the host', async () => {
    // .invalid never resolves (RFC 2606); without a resolver the lookup fails with EAI_AGAIN.
    const url = 'http://agentloop-test.invalid/v1';
    expect((await failedCall(url)).message).toMatch(
      /^could not reach http:\/\/agentloop-test\.invalid\/v1: DNS lookup .*\((ENOTFOUND|EAI_AGAIN) agentloop-test\.invalid\)$/,
    );
  });

  it("https to a server that speaks plain HTTP: the TLS handshake and OpenSSL's reason", async () => {
    server = await startFaultServer([{ kind: 'status', status: 200 }]);
    const url = `https://127.0.0.1:${new URL(server.url).port}/v1`;
    expect((await failedCall(url)).message).toBe(
      `could not reach ${url}: TLS handshake failed: wrong version number (ERR_SSL_WRONG_VERSION_NUMBER)`,
    );
  });

  it('a self-signed certificate: the TLS handshake and the certificate problem', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const tls = createHttpsServer(
      { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) },
      (_req, res) => res.end('{}'),
    );
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(tls.address() as { port: number }).port}/v1`;
    try {
      expect((await failedCall(url)).message).toBe(
        `could not reach ${url}: TLS handshake failed: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)`,
      );
    } finally {
      await new Promise((resolve) => tls.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('errors no retry can fix are not retryable, and say the URL and the cause', () => {
  const classified = async (baseURL: string) => classifyLlmError(await sdkError(baseURL), { url: baseURL });

  it('a port the fetch standard blocks (6000): undici refuses it before connecting', async () => {
    const url = 'http://127.0.0.1:6000/v1';
    expect(await classified(url)).toEqual({
      kind: 'connection',
      retryable: false,
      message: `could not reach ${url}: the port is one the fetch standard blocks (bad port)`,
    });
  });

  it.each(['notaurl', 'http://exa mple.com/v1'])('a base URL that does not parse: %s', async (url) => {
    expect(await classified(url)).toEqual({
      kind: 'connection',
      retryable: false,
      message: `could not reach ${url}: not a valid URL (ERR_INVALID_URL)`,
    });
  });

  it('a host DNS says does not exist (ENOTFOUND); a lookup that failed for now (EAI_AGAIN) is retried', () => {
    const lookup = (code: string) =>
      new APIConnectionError({
        cause: Object.assign(new TypeError('fetch failed'), {
          cause: Object.assign(new Error(`getaddrinfo ${code} nohost.example`), {
            code,
            hostname: 'nohost.example',
          }),
        }),
      });
    const url = 'http://nohost.example/v1';
    expect(classifyLlmError(lookup('ENOTFOUND'), { url })).toEqual({
      kind: 'connection',
      retryable: false,
      message: `could not reach ${url}: DNS lookup found no such host (ENOTFOUND nohost.example)`,
    });
    expect(classifyLlmError(lookup('EAI_AGAIN'), { url })).toMatchObject({
      kind: 'connection',
      retryable: true,
    });
  });
});

describe('classifyLlmError on plain values', () => {
  it.each<[string, unknown, Partial<ClassifiedError>]>([
    ['a DOM AbortError', new DOMException('stop', 'AbortError'), { kind: 'aborted', retryable: false }],
    ['StreamCutError', new StreamCutError(), { kind: 'stream_cut', retryable: true }],
    [
      'an ECONNRESET error',
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      { kind: 'connection', retryable: true },
    ],
    ['a plain Error', new Error('boom'), { kind: 'unknown', retryable: false, message: 'boom' }],
    ['a string', 'boom', { kind: 'unknown', retryable: false, message: 'boom' }],
    ['undefined', undefined, { kind: 'unknown', retryable: false }],
  ])('%s', (_name, err, expected) => {
    expect(classifyLlmError(err)).toMatchObject(expected);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each<[string, unknown, number | undefined]>([
    ['retry-after-ms wins', new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), 250],
    ['seconds', new Headers({ 'retry-after': '1.5' }), 1500],
    ['an HTTP date', new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }), 3000],
    ['a date in the past', new Headers({ 'retry-after': 'Tue, 31 Dec 2024 00:00:00 GMT' }), 0],
    ['garbage', new Headers({ 'retry-after': 'soon' }), undefined],
    ['a negative ms value falls back to retry-after', new Headers({ 'retry-after-ms': '-1' }), undefined],
    ['a plain record, any case', { 'Retry-After': '4' }, 4000],
    ['no headers', undefined, undefined],
  ])('%s', (_name, headers, expected) => {
    expect(parseRetryAfter(headers, now)).toBe(expected);
  });
});
