import { describe, expect, it } from 'vitest';
import {
  acceptResults,
  answerAll,
  answerApproval,
  callInfo,
  EMPTY_BATCH,
  errorResult,
  isComplete,
  loopBreaker,
  needsApproval,
  orderedResults,
  pendingApprovals,
  readyCalls,
  receiveCalls,
  runnerClosesBatch,
  runnerFailure,
  runnerIdFor,
  runnerIds,
  runnerResults,
  startRun,
  type ToolBatch,
} from '../src/machines/tool-batch.js';
import type { ToolCallRequest, ToolResult } from '../src/tools/tool-call.js';

// The tool batch's operations one by one: which calls wait, which start, which results count, and
// when a batch is done. The machine's guards and actions are these functions; the agent tests reach
// them through whole turns, these pin each decision down.

const call = (id: string, extra: Partial<ToolCallRequest> = {}): ToolCallRequest => ({
  id,
  name: 'echo',
  argsText: `{"id":"${id}"}`,
  args: { id },
  needsApproval: false,
  ...extra,
});
const ok = (id: string, content = `done ${id}`): ToolResult => ({
  toolCallId: id,
  name: 'echo',
  content,
  isError: false,
  durationMs: 5,
});
const failed = (id: string): ToolResult => ({ ...ok(id, `failed ${id}`), isError: true });

/** A batch of `calls`, every one handed to one runner, `tools:a` (the id is opaque to the batch). */
function running(calls: ToolCallRequest[]): ToolBatch {
  return startRun(receiveCalls(EMPTY_BATCH, calls, []), calls, 'tools:a');
}

describe('callInfo', () => {
  it('shows parsed arguments, or the raw text when they did not parse', () => {
    expect(callInfo(call('a'))).toEqual({ toolCallId: 'a', name: 'echo', args: { id: 'a' } });
    expect(callInfo(call('b', { args: undefined, argsText: '{broken' }))).toEqual({
      toolCallId: 'b',
      name: 'echo',
      args: '{broken',
    });
  });
});

describe('needsApproval', () => {
  it('asks when the call asks, unless the user allowed its tool for the session', () => {
    const deploy = call('a', { name: 'deploy', needsApproval: true });
    expect(needsApproval(deploy, [])).toBe(true);
    expect(needsApproval(deploy, ['lookup'])).toBe(true);
    expect(needsApproval(deploy, ['deploy'])).toBe(false);
    expect(needsApproval(call('b'), [])).toBe(false);
  });
});

describe('receiveCalls', () => {
  it('puts the calls that need approval in pending and leaves the others ready', () => {
    const calls = [call('a'), call('b', { name: 'deploy', needsApproval: true })];
    const batch = receiveCalls(EMPTY_BATCH, calls, []);
    expect(batch.calls).toEqual(calls);
    expect(batch.pending).toEqual(['b']);
    expect(readyCalls(batch).map((c) => c.id)).toEqual(['a']);
    expect(receiveCalls(EMPTY_BATCH, calls, ['deploy']).pending).toEqual([]);
  });

  it('keeps what calls started early from the stream have: their runner, their result, no approval asked', () => {
    const early = call('a', { needsApproval: true });
    const started = startRun(EMPTY_BATCH, [early], 'tools:a');
    const { batch: answered } = acceptResults(started, [ok('a')]);
    const stray = { ...ok('gone'), toolCallId: 'gone' };
    const withStray = { ...answered, results: { ...answered.results, gone: stray } };
    const batch = receiveCalls(withStray, [early, call('b')], []);
    expect(batch.pending).toEqual([]);
    expect(batch.started).toEqual(['a']);
    expect(batch.runners).toEqual({ 'tools:a': ['a'] });
    // Only results of the message's calls are kept.
    expect(batch.results).toEqual({ a: ok('a') });
    // No entry at all for a call without a result (a saved snapshot holds no `undefined`).
    expect(Object.keys(batch.results)).toEqual(['a']);
    expect(readyCalls(batch).map((c) => c.id)).toEqual(['b']);
  });
});

describe('runnerIdFor', () => {
  it('takes the smallest number that no runner of the batch and no live child holds', () => {
    expect(runnerIdFor(EMPTY_BATCH, {})).toBe('tools:0');
    const batch = { ...EMPTY_BATCH, runners: { 'tools:0': ['a'], 'tools:2': ['c'] } };
    expect(runnerIdFor(batch, {})).toBe('tools:1');
    // A live child keeps its id: a runner that reported every result but has not ended, or one of an
    // abandoned batch; so does a runner saved by an earlier version under its first call's id.
    expect(runnerIdFor(batch, { 'tools:1': {}, 'tools:3': {} })).toBe('tools:4');
    expect(runnerIdFor({ ...EMPTY_BATCH, runners: { 'tools:call_x': ['call_x'] } }, { llm: {} })).toBe(
      'tools:0',
    );
  });

  it('reuses an id once its runner has ended', () => {
    const batch = { ...EMPTY_BATCH, runners: { 'tools:0': ['a'] } };
    expect(runnerIdFor(batch, { 'tools:0': {} })).toBe('tools:1');
    expect(runnerIdFor(EMPTY_BATCH, {})).toBe('tools:0');
  });
});

describe('startRun', () => {
  it('marks the calls started under their runner and adds calls the batch did not know yet', () => {
    const known = receiveCalls(EMPTY_BATCH, [call('a'), call('b')], []);
    const one = startRun(known, [call('a')], runnerIdFor(known, {}));
    expect(one.calls.map((c) => c.id)).toEqual(['a', 'b']);
    expect(one.started).toEqual(['a']);
    expect(one.runners).toEqual({ 'tools:0': ['a'] });
    expect(readyCalls(one).map((c) => c.id)).toEqual(['b']);

    const two = startRun(one, [call('b'), call('c')], runnerIdFor(one, {}));
    expect(two.calls.map((c) => c.id)).toEqual(['a', 'b', 'c']);
    expect(two.started).toEqual(['a', 'b', 'c']);
    expect(two.runners).toEqual({ 'tools:0': ['a'], 'tools:1': ['b', 'c'] });
    expect(readyCalls(two)).toEqual([]);
    // The batch it came from is unchanged.
    expect(one.started).toEqual(['a']);
  });

  it('keeps the same calls array when every call was known', () => {
    const known = receiveCalls(EMPTY_BATCH, [call('a')], []);
    expect(startRun(known, [call('a')], 'tools:a').calls).toBe(known.calls);
  });
});

describe('answerApproval', () => {
  const calls = [call('a', { needsApproval: true }), call('b', { needsApproval: true })];
  const waiting = receiveCalls(EMPTY_BATCH, calls, []);

  it('an approved call leaves pending and becomes ready, with no result', () => {
    const batch = answerApproval(waiting, 'a');
    expect(batch.pending).toEqual(['b']);
    expect(Object.keys(batch.results)).toEqual([]);
    expect(readyCalls(batch).map((c) => c.id)).toEqual(['a']);
  });

  it('a declined call leaves pending with its result', () => {
    const declined = failed('b');
    const batch = answerApproval(waiting, 'b', declined);
    expect(batch.pending).toEqual(['a']);
    expect(batch.results).toEqual({ b: declined });
  });
});

describe('acceptResults', () => {
  it('takes results of started, unanswered calls and drops the rest', () => {
    const batch = receiveCalls(running([call('a'), call('b')]), [call('a'), call('b'), call('c')], []);
    const first = acceptResults(batch, [ok('a'), ok('c'), ok('x')]);
    expect(first.accepted).toEqual([ok('a')]);
    expect(first.batch.results).toEqual({ a: ok('a') });
    // A second result for the same call is not taken.
    const again = acceptResults(first.batch, [ok('a', 'again'), ok('b')]);
    expect(again.accepted).toEqual([ok('b')]);
    expect(again.batch.results).toEqual({ a: ok('a'), b: ok('b') });
  });

  it('removes the runner that ended, and only that one', () => {
    const batch = startRun(running([call('a')]), [call('b')], 'tools:b');
    const ended = acceptResults(batch, [ok('a')], 'tools:a');
    expect(ended.batch.runners).toEqual({ 'tools:b': ['b'] });
    expect(runnerIds(ended.batch)).toEqual(['tools:b']);
    // Nothing accepted, a runner ended: a new batch without it.
    const quiet = acceptResults(batch, [], 'tools:b');
    expect(quiet.accepted).toEqual([]);
    expect(quiet.batch.runners).toEqual({ 'tools:a': ['a'] });
    expect(quiet.batch.results).toEqual({});
  });

  it('returns the very same batch when nothing changes', () => {
    const batch = running([call('a')]);
    expect(acceptResults(batch, []).batch).toBe(batch);
    expect(acceptResults(batch, [ok('other')], 'tools:unknown').batch).toBe(batch);
    expect(acceptResults(batch, [], 'tools:unknown').batch.runners).toBe(batch.runners);
  });
});

describe('runnerFailure and runnerResults', () => {
  const batch = startRun(running([call('a'), call('b')]), [call('c')], 'tools:c');

  it('answers each call of the failed runner with an error naming the failure', () => {
    const results = runnerFailure(batch, 'tools:a', new Error('disk gone'));
    expect(results.map((r) => r.toolCallId)).toEqual(['a', 'b']);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(result.name).toBe('echo');
      expect(result.content).toContain('disk gone');
      expect(result.durationMs).toBe(0);
    }
    // A thrown non-Error is shown as text too.
    expect(runnerFailure(batch, 'tools:c', 'plain reason')[0]!.content).toContain('plain reason');
    expect(runnerFailure(batch, 'tools:none', new Error('x'))).toEqual([]);
  });

  it('skips ids of a runner that name no call of the batch', () => {
    const odd = { ...batch, runners: { ...batch.runners, 'tools:z': ['z', 'c'] } };
    expect(runnerFailure(odd, 'tools:z', new Error('boom')).map((r) => r.toolCallId)).toEqual(['c']);
  });

  it('reads a done event’s output, an error event’s failure, and nothing from other output', () => {
    const done = runnerResults(batch, {
      type: 'xstate.done.actor.tools:c',
      actorId: 'tools:c',
      output: [ok('c')],
    });
    expect(done).toEqual({ runner: 'tools:c', results: [ok('c')] });
    const error = runnerResults(batch, {
      type: 'xstate.error.actor.tools:c',
      actorId: 'tools:c',
      error: new Error('crashed'),
    });
    expect(error.runner).toBe('tools:c');
    expect(error.results).toHaveLength(1);
    expect(error.results[0]).toMatchObject({ toolCallId: 'c', isError: true });
    expect(error.results[0]!.content).toContain('crashed');
    expect(
      runnerResults(batch, { type: 'xstate.done.actor.tools:c', actorId: 'tools:c', output: 'not a list' }),
    ).toEqual({ runner: 'tools:c', results: [] });
    expect(runnerResults(batch, { type: 'xstate.done.actor.x', output: [] }).runner).toBe('');
  });
});

describe('runnerClosesBatch', () => {
  const done = (actorId: string, output: unknown) => ({
    type: `xstate.done.actor.${actorId}`,
    actorId,
    output,
  });

  it('is true when the runner’s output answers every call left', () => {
    const batch = running([call('a'), call('b')]);
    expect(runnerClosesBatch(batch, done('tools:a', [ok('a'), ok('b')]))).toBe(true);
    // Answers already in the batch count too.
    const half = acceptResults(batch, [ok('a')]).batch;
    expect(runnerClosesBatch(half, done('tools:a', [ok('b')]))).toBe(true);
  });

  it('is false while a call is unanswered, or for output of a call the runner does not run', () => {
    const batch = startRun(running([call('a')]), [call('b')], 'tools:b');
    expect(runnerClosesBatch(batch, done('tools:a', [ok('a')]))).toBe(false);
    // The runner of `a` cannot answer `b`, even if its output says so.
    expect(runnerClosesBatch(batch, done('tools:a', [ok('a'), ok('b')]))).toBe(false);
    expect(runnerClosesBatch(batch, done('tools:a', [ok('b')]))).toBe(false);
  });

  it('is false for an error event, output that is not a list, or a runner the batch does not know', () => {
    const batch = running([call('a')]);
    expect(
      runnerClosesBatch(batch, { type: 'xstate.error.actor.tools:a', actorId: 'tools:a', output: [ok('a')] }),
    ).toBe(false);
    expect(runnerClosesBatch(batch, done('tools:a', { a: ok('a') }))).toBe(false);
    expect(runnerClosesBatch(batch, done('tools:other', [ok('a')]))).toBe(false);
    expect(runnerClosesBatch(batch, { type: 'xstate.done.actor.x', output: [ok('a')] })).toBe(false);
  });

  it('is false when a loop-breaking call succeeded (the turn ends instead), true when it failed', () => {
    const batch = running([call('a'), call('done', { name: 'task_completion', loopBreaking: 'completed' })]);
    expect(runnerClosesBatch(batch, done('tools:a', [ok('a'), ok('done')]))).toBe(false);
    expect(runnerClosesBatch(batch, done('tools:a', [ok('a'), failed('done')]))).toBe(true);
  });
});

describe('a batch’s end', () => {
  const calls = [call('a'), call('b', { name: 'ask_question', loopBreaking: 'question' })];
  const batch = running(calls);

  it('is complete once every call has a result, and never without calls', () => {
    expect(isComplete(EMPTY_BATCH)).toBe(false);
    expect(isComplete(batch)).toBe(false);
    const half = acceptResults(batch, [ok('b')]).batch;
    expect(isComplete(half)).toBe(false);
    expect(isComplete(acceptResults(half, [ok('a')]).batch)).toBe(true);
  });

  it('finds the loop-breaking call that succeeded, not one that failed or has no result', () => {
    expect(loopBreaker(batch)).toBeUndefined();
    expect(loopBreaker(acceptResults(batch, [ok('a'), failed('b')]).batch)).toBeUndefined();
    expect(loopBreaker(acceptResults(batch, [failed('a'), ok('b')]).batch)?.id).toBe('b');
  });

  it('orders results as the calls were made, whatever order they came in', () => {
    const complete = acceptResults(batch, [ok('b'), ok('a')]).batch;
    expect(orderedResults(complete)).toEqual([ok('a'), ok('b')]);
  });

  it('answers every call once: its result, or the fallback as an error for calls without one', () => {
    const half = acceptResults(batch, [ok('b', 'the answer')]).batch;
    expect(answerAll(half, 'interrupted')).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'interrupted' },
      { role: 'tool', tool_call_id: 'b', content: 'the answer' },
    ]);
    expect(errorResult(call('a'), 'why')).toEqual({
      toolCallId: 'a',
      name: 'echo',
      content: 'why',
      isError: true,
      durationMs: 0,
    });
  });
});

describe('pendingApprovals', () => {
  it('lists the calls waiting for the user, in call order, as UIs show them', () => {
    const calls = [
      call('a', { needsApproval: true }),
      call('b'),
      call('c', { name: 'deploy', needsApproval: true }),
    ];
    const batch = receiveCalls(EMPTY_BATCH, calls, []);
    expect(pendingApprovals(batch)).toEqual([callInfo(calls[0]!), callInfo(calls[2]!)]);
    expect(pendingApprovals(answerApproval(batch, 'a'))).toEqual([callInfo(calls[2]!)]);
  });
});
