import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/defaults.js';
import { CallAbort } from '../src/llm/call-abort.js';
import type { ClassifiedError } from '../src/llm/error-classification.js';
import {
  abortableSleep,
  LlmCallError,
  type RetryInfo,
  type RetryOptions,
  resolveRetryPolicy,
  retryDelayMs,
  withRetry,
} from '../src/llm/retry-policy.js';
import { type Fault, type FaultServer, startFaultServer, streamText } from './fault-server.js';

let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Options that never wait for real: sleeps are recorded, jitter draws 0.5. */
function recorded(extra: RetryOptions = {}) {
  const sleeps: number[] = [];
  const retries: RetryInfo[] = [];
  const options: RetryOptions = {
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    onRetry: (info) => retries.push(info),
    ...extra,
  };
  return { sleeps, retries, options };
}

/** Runs one streamed SDK call per attempt against a server that plays `script`. */
async function runAgainst(script: Fault[], extra: RetryOptions = {}) {
  server = await startFaultServer(script);
  const client = server.client();
  const { sleeps, retries, options } = recorded(extra);
  const attempts: number[] = [];
  const outcome: { text?: string; error?: unknown } = await withRetry((n) => {
    attempts.push(n);
    return streamText(client);
  }, options).then(
    (text) => ({ text }),
    (error: unknown) => ({ error }),
  );
  return { ...outcome, sleeps, retries, attempts, requests: server.requests };
}

const serverError: ClassifiedError = { kind: 'server', retryable: true, message: 'x' };

describe('retryDelayMs', () => {
  const policy = resolveRetryPolicy();

  it('doubles from the base delay and applies full jitter', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, serverError, policy, () => 0.5))).toEqual([
      250, 500, 1000, 2000,
    ]);
    expect(retryDelayMs(1, serverError, policy, () => 0)).toBe(0);
  });

  it('never exceeds maxDelayMs', () => {
    expect(retryDelayMs(30, serverError, policy, () => 0.999999)).toBe(policy.maxDelayMs);
  });

  it('supports equal and no jitter', () => {
    expect(retryDelayMs(2, serverError, { ...policy, jitter: 'equal' }, () => 0)).toBe(500);
    expect(retryDelayMs(2, serverError, { ...policy, jitter: 'none' }, () => 0)).toBe(1000);
  });

  it('honours retry-after exactly, capped by retryAfterCapMs', () => {
    expect(retryDelayMs(1, { ...serverError, retryAfterMs: 1234 }, policy, () => 0)).toBe(1234);
    expect(retryDelayMs(1, { ...serverError, retryAfterMs: 600_000 }, policy)).toBe(
      DEFAULTS.llmRetryAfterCapMs,
    );
  });

  it('takes its defaults from DEFAULTS', () => {
    expect(policy).toEqual({
      maxAttempts: DEFAULTS.llmMaxAttempts,
      baseDelayMs: DEFAULTS.llmRetryBaseDelayMs,
      maxDelayMs: DEFAULTS.llmRetryMaxDelayMs,
      retryAfterCapMs: DEFAULTS.llmRetryAfterCapMs,
      jitter: 'full',
    });
  });
});

describe('withRetry against a real server through the real SDK', () => {
  it('waits what retry-after-ms says, backs off on 500, then succeeds', async () => {
    const r = await runAgainst([
      { kind: 'status', status: 429, headers: { 'retry-after-ms': '1500' } },
      { kind: 'status', status: 500 },
      { kind: 'ok', text: 'done' },
    ]);
    expect(r).toMatchObject({ text: 'done', attempts: [1, 2, 3], requests: 3, sleeps: [1500, 500] });
    expect(r.retries.map((i) => [i.attempt, i.error.kind, i.error.status, i.delayMs])).toEqual([
      [1, 'rate_limit', 429, 1500],
      [2, 'server', 500, 500],
    ]);
  });

  it('gives up after maxAttempts with the last error, classified and counted', async () => {
    const r = await runAgainst([
      { kind: 'status', status: 503 },
      { kind: 'status', status: 503 },
      { kind: 'status', status: 502 },
      { kind: 'status', status: 503 },
      { kind: 'ok', text: 'too late' },
    ]);
    expect(r.requests).toBe(4);
    expect(r.sleeps).toEqual([250, 500, 1000]);
    expect(r.error).toBeInstanceOf(LlmCallError);
    expect(r.error).toMatchObject({ kind: 'server', status: 503, attempts: 4, retryable: true });
    expect((r.error as LlmCallError).cause?.constructor.name).toBe('InternalServerError');
  });

  it.each([
    [400, 'bad_request'],
    [401, 'auth'],
  ] as const)('does not retry %i', async (status, kind) => {
    const r = await runAgainst([{ kind: 'status', status }]);
    expect(r.requests).toBe(1);
    expect(r.sleeps).toEqual([]);
    expect(r.error).toMatchObject({ kind, status, attempts: 1, retryable: false });
  });

  it('retries a reset socket and a stream cut mid-SSE, then succeeds', async () => {
    const r = await runAgainst([
      { kind: 'reset' },
      { kind: 'cut', deltas: ['par', 'tial'] },
      { kind: 'ok', text: 'whole' },
    ]);
    expect(r).toMatchObject({ text: 'whole', requests: 3, sleeps: [250, 500] });
    expect(r.retries.map((i) => i.error.kind)).toEqual(['connection', 'stream_cut']);
  });

  it('reports a stream cut that never heals as stream_cut', async () => {
    const cut: Fault = { kind: 'cut', deltas: ['x'] };
    const r = await runAgainst([cut, cut], { maxAttempts: 2 });
    expect(r.error).toMatchObject({ kind: 'stream_cut', attempts: 2 });
  });

  it('caps a long retry-after', async () => {
    const r = await runAgainst([{ kind: 'status', status: 429, headers: { 'retry-after': '3600' } }], {
      retryAfterCapMs: 10_000,
    });
    expect(r.sleeps).toEqual([10_000]);
    expect(r.text).toBe('fine');
  });

  it('stops during the wait when the signal aborts, rejecting with the reason', async () => {
    server = await startFaultServer([{ kind: 'status', status: 503 }]);
    const client = server.client();
    const controller = new AbortController();
    const reason = new Error('user interrupt');
    let calls = 0;
    const started = Date.now();
    const outcome = withRetry(
      () => {
        calls++;
        return streamText(client, controller.signal);
      },
      {
        signal: controller.signal,
        baseDelayMs: 60_000,
        jitter: 'none',
        onRetry: () => controller.abort(reason),
      },
    );
    await expect(outcome).rejects.toBe(reason);
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops during the wait when a stop notice (no signal) stops, rejecting with its reason', async () => {
    server = await startFaultServer([{ kind: 'status', status: 503 }]);
    const client = server.client();
    const stop = new CallAbort({}, null);
    const reason = new Error('user interrupt');
    let calls = 0;
    const started = Date.now();
    const outcome = withRetry(
      () => {
        calls++;
        return streamText(client, stop.attempt().signal);
      },
      { stop, baseDelayMs: 60_000, jitter: 'none', onRetry: () => stop.abort(reason) },
    );
    await expect(outcome).rejects.toBe(reason);
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops during an attempt when the signal aborts, without retrying', async () => {
    server = await startFaultServer([{ kind: 'hang' }]);
    const client = server.client();
    const controller = new AbortController();
    const { sleeps, options } = recorded({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 30);
    await expect(withRetry(() => streamText(client, controller.signal), options)).rejects.toThrow('stop');
    expect(sleeps).toEqual([]);
  });
});

describe('withRetry without a server', () => {
  it('does not start an attempt when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    let calls = 0;
    await expect(withRetry(async () => calls++, { signal: controller.signal })).rejects.toThrow('gone');
    expect(calls).toBe(0);
  });

  it('does not start an attempt when the stop notice has stopped', async () => {
    const stop = new CallAbort({}, null);
    stop.abort(new Error('gone'));
    let calls = 0;
    await expect(withRetry(async () => calls++, { stop })).rejects.toThrow('gone');
    expect(calls).toBe(0);
  });

  it('does not retry when the wait would pass the deadline', async () => {
    const { sleeps, options } = recorded({ now: () => 1_000, deadline: 1_600, jitter: 'none' });
    let calls = 0;
    const failing = async () => {
      calls++;
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    };
    await expect(withRetry(failing, options)).rejects.toMatchObject({ kind: 'connection', attempts: 2 });
    expect(calls).toBe(2);
    expect(sleeps).toEqual([500]);
  });

  it('does not retry an LlmCallError from a nested withRetry', async () => {
    const inner = new LlmCallError(serverError, 4, new Error('503'));
    let calls = 0;
    const { options } = recorded();
    await expect(
      withRetry(async () => {
        calls++;
        throw inner;
      }, options),
    ).rejects.toMatchObject({ kind: 'server', attempts: 1 });
    expect(calls).toBe(1);
  });

  it('abortableSleep resolves after the time, or rejects with the abort reason', async () => {
    await expect(abortableSleep(5)).resolves.toBeUndefined();
    const controller = new AbortController();
    const pending = abortableSleep(60_000, controller.signal);
    controller.abort('why');
    await expect(pending).rejects.toBe('why');
  });
});

// Written for the survivors of `npm run mutation -- src/llm/retry-policy.ts` (docs/testing.md): what
// the give-up error carries, the equal jitter's range, the deadline's boundary, a retry with nobody
// listening, and the server's URL in a connection error's message.
describe('the retry policy, edge by edge', () => {
  it('LlmCallError names itself, counts attempts in words and carries only the fields it has', () => {
    const full = new LlmCallError(
      {
        kind: 'rate_limit',
        retryable: true,
        message: 'slow down',
        status: 429,
        code: 'rate_limit_exceeded',
        retryAfterMs: 2000,
      },
      1,
      new Error('429'),
    );
    expect(full.name).toBe('LlmCallError');
    expect(full.message).toBe('LLM call failed (rate_limit) after 1 attempt: slow down');
    expect(full.toClassified()).toEqual({
      kind: 'rate_limit',
      retryable: true,
      message: full.message,
      status: 429,
      code: 'rate_limit_exceeded',
      retryAfterMs: 2000,
    });
    const bare = new LlmCallError(serverError, 3, undefined);
    expect(bare.message).toBe('LLM call failed (server) after 3 attempts: x');
    expect(Object.keys(bare.toClassified()).sort()).toEqual(['kind', 'message', 'retryable']);
  });

  it('equal jitter waits between half the ceiling and the ceiling', () => {
    const equal = { ...resolveRetryPolicy(), jitter: 'equal' as const };
    expect(retryDelayMs(2, serverError, equal, () => 0.5)).toBe(750);
    expect(retryDelayMs(2, serverError, equal, () => 1)).toBe(1000);
    expect(resolveRetryPolicy({}).jitter).toBe('full');
  });

  it('retries when the wait ends exactly at the deadline, not past it', async () => {
    const { sleeps, options } = recorded({
      now: () => 1_000,
      deadline: 1_500,
      jitter: 'none',
      maxAttempts: 2,
    });
    let calls = 0;
    const result = await withRetry(async () => {
      if (++calls === 1) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
      return 'ok';
    }, options);
    expect([result, calls, sleeps]).toEqual(['ok', 2, [500]]);
  });

  it('retries without an onRetry listener', async () => {
    let calls = 0;
    const result = await withRetry(
      async () => {
        if (++calls < 3) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
        return calls;
      },
      { sleep: async () => {}, random: () => 0 },
    );
    expect(result).toBe(3);
  });

  it("names the server's URL in a connection error when given one, and nothing in its place otherwise", async () => {
    const refused = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    };
    const withUrl = await withRetry(refused, { maxAttempts: 1, url: 'http://127.0.0.1:9/v1' }).catch(
      (e: Error) => e,
    );
    expect((withUrl as Error).message).toContain('http://127.0.0.1:9/v1');
    const without = await withRetry(refused, { maxAttempts: 1 }).catch((e: Error) => e);
    expect((without as Error).message).not.toContain('undefined');
    expect((without as Error).message).not.toContain('http://127.0.0.1:9/v1');
  });
});
