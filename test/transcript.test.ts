import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  interruptedToolResult,
  resumeDecisions,
  type TranscriptEntry,
  toolCallLedger,
} from '../src/session/transcript.js';

let seq = 0;
const at = '2025-01-01T00:00:00.000Z';
const started = (toolCallId: string, name = 'write_file', args: unknown = {}): TranscriptEntry => ({
  seq: ++seq,
  at,
  kind: 'tool_call_started',
  toolCallId,
  name,
  args,
});
const finished = (
  toolCallId: string,
  result: string,
  name = 'write_file',
  isError = false,
): TranscriptEntry => ({
  seq: ++seq,
  at,
  kind: 'tool_call_finished',
  toolCallId,
  name,
  result,
  isError,
  durationMs: 5,
});
const never = () => false;

describe('toolCallLedger', () => {
  it('tells completed calls, calls cut off, and leaves out calls never started', () => {
    const ledger = toolCallLedger([
      { seq: ++seq, at, kind: 'message', message: { role: 'user', content: 'go' } },
      started('a', 'read_file', { path: 'x' }),
      started('b'),
      finished('a', 'contents', 'read_file'),
      { seq: ++seq, at, kind: 'event', event: 'interrupt' },
    ]);
    expect(ledger.get('a')).toMatchObject({
      status: 'completed',
      name: 'read_file',
      result: 'contents',
      isError: false,
    });
    expect(ledger.get('b')).toMatchObject({ status: 'started-no-result', name: 'write_file', args: {} });
    expect(ledger.has('c')).toBe(false);
  });

  it('keeps the first recorded result, even when the call was started or finished again later', () => {
    const ledger = toolCallLedger([
      started('a'),
      finished('a', 'first'),
      started('a'),
      finished('a', 'second'),
      started('a'),
    ]);
    expect(ledger.get('a')).toMatchObject({ status: 'completed', result: 'first' });
  });

  it('counts a result without a start (a rejected approval) as completed', () => {
    expect(toolCallLedger([finished('a', 'rejected by the user', 'rm', true)]).get('a')).toMatchObject({
      status: 'completed',
      isError: true,
    });
  });
});

describe('resumeDecisions', () => {
  it('reuses recorded results, reports cut-off calls as interrupted and runs the rest, in the given order', () => {
    const entries = [
      started('done', 'read_file'),
      finished('done', 'ok', 'read_file'),
      started('cut', 'send_email'),
    ];
    expect(resumeDecisions(entries, ['new', 'cut', 'done'], never)).toEqual([
      { toolCallId: 'new', action: 'run', reason: 'not-started' },
      {
        toolCallId: 'cut',
        action: 'report-interrupted',
        name: 'send_email',
        result: interruptedToolResult('send_email'),
        isError: true,
      },
      { toolCallId: 'done', action: 'use-recorded', name: 'read_file', result: 'ok', isError: false },
    ]);
  });

  it('runs a cut-off call again when its tool is idempotent', () => {
    const isIdempotent = (name: string) => name === 'read_file';
    expect(
      resumeDecisions([started('a', 'read_file'), started('b', 'send_email')], ['a', 'b'], isIdempotent),
    ).toEqual([
      { toolCallId: 'a', action: 'run', reason: 'idempotent-rerun' },
      expect.objectContaining({ toolCallId: 'b', action: 'report-interrupted' }),
    ]);
  });

  it('reuses a recorded error result rather than running the call again', () => {
    expect(
      resumeDecisions([started('a'), finished('a', 'disk full', 'write_file', true)], ['a'], () => true),
    ).toEqual([
      { toolCallId: 'a', action: 'use-recorded', name: 'write_file', result: 'disk full', isError: true },
    ]);
  });

  it('names the tool in the interrupted result and tells the model to check before retrying', () => {
    const text = interruptedToolResult('send_email');
    expect(text).toContain('"send_email"');
    expect(text).toMatch(/interrupted/);
    expect(text).toMatch(/check/);
  });

  it('never runs a started call of a non-idempotent tool and never re-runs a call with a result', () => {
    type Fate = 'never' | 'cut' | 'done' | 'done-twice';
    const calls = fc.uniqueArray(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 6 }),
        fate: fc.constantFrom<Fate>('never', 'cut', 'done', 'done-twice'),
        idempotent: fc.boolean(),
      }),
      { selector: (call) => call.id, maxLength: 8 },
    );
    fc.assert(
      fc.property(calls, fc.infiniteStream(fc.nat()), (spec, picks) => {
        // Each call's lines in order; the calls' lines interleaved at random.
        const queues = spec.map((call) => {
          const name = `${call.idempotent ? 'idem' : 'once'}_${call.id}`;
          if (call.fate === 'never') return [];
          if (call.fate === 'cut') return [started(call.id, name)];
          const first = [started(call.id, name), finished(call.id, `r1-${call.id}`, name)];
          return call.fate === 'done'
            ? first
            : [...first, started(call.id, name), finished(call.id, 'r2', name)];
        });
        const entries: TranscriptEntry[] = [];
        const pick = picks[Symbol.iterator]();
        for (;;) {
          const open = queues.filter((queue) => queue.length > 0);
          if (open.length === 0) break;
          entries.push(open[(pick.next().value as number) % open.length]!.shift()!);
        }
        const decisions = resumeDecisions(
          entries,
          spec.map((call) => call.id),
          (name) => name.startsWith('idem_'),
        );
        spec.forEach((call, i) => {
          const decision = decisions[i]!;
          expect(decision.toolCallId).toBe(call.id);
          if (call.fate === 'never') expect(decision).toMatchObject({ action: 'run', reason: 'not-started' });
          if (call.fate === 'done' || call.fate === 'done-twice') {
            expect(decision).toMatchObject({ action: 'use-recorded', result: `r1-${call.id}` });
          }
          if (call.fate === 'cut') {
            expect(decision.action).toBe(call.idempotent ? 'run' : 'report-interrupted');
          }
        });
      }),
    );
  });
});
