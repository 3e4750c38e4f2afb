import { describe, expect, it } from 'vitest';
import { CompactionFailedError } from '../src/machines/actors/compact-conversation.js';
import type { CompactionRecord } from '../src/prompt/compaction.js';
import { actionProbe, contextWith } from './support/action-probe.js';

// The actions of compaction by summary (src/machines/actions/compaction-actions.ts) and the entry of a
// state (state-actions.ts), each run on its own against a context the test sets.

const record: CompactionRecord = {
  summary: 'They talked.',
  from: 1,
  through: 7,
  tokensBefore: 9_000,
  tokensAfter: 2_000,
  model: 'small-model',
};
const usage = { promptTokens: 100, completionTokens: 20, totalTokens: 120, costUsd: 0.01 };
const spent = { promptTokens: 1, completionTokens: 1, totalTokens: 2, costUsd: 0.5 };
const compacting = () =>
  contextWith({ turn: 2, iteration: 3, turnUsage: spent, totalUsage: spent, compactedCall: null });
const sum = { promptTokens: 101, completionTokens: 21, totalTokens: 122, costUsd: 0.51 };

describe('finishCompaction', () => {
  it('takes a summary in, counts its call, marks this model call as compacted and reports it', () => {
    const probe = actionProbe('finishCompaction', compacting());
    const next = probe.send({ type: 'xstate.done.actor.compact', output: { record, usage } });
    expect(next).toMatchObject({ compaction: record, compactedCall: 3, turnUsage: sum, totalUsage: sum });
    expect(probe.emitted).toEqual([
      {
        type: 'context_compacted',
        sessionId: 's1',
        turn: 2,
        iteration: 3,
        tokensBefore: 9_000,
        tokensAfter: 2_000,
        entriesCovered: 6,
        model: 'small-model',
      },
    ]);
    // A summary call that reported no usage counts no tokens, and its cost is unknown from then on
    // (as for a model reply without usage: a sum is never too small).
    const unreported = actionProbe('finishCompaction', compacting()).send({
      type: 'xstate.done.actor.compact',
      output: { record, usage: null },
    });
    const { costUsd: _, ...tokens } = spent;
    expect(unreported).toMatchObject({ compaction: record, compactedCall: 3 });
    expect(unreported.turnUsage).toEqual(tokens);
    expect(unreported.totalUsage).toEqual(tokens);
  });

  it('a failed summary changes no message: the call goes on, pruned, with a warning naming why', () => {
    const failure = new CompactionFailedError('the summary call timed out', usage, 9_500, 8_000);
    const probe = actionProbe('finishCompaction', compacting());
    const next = probe.send({ type: 'xstate.error.actor.compact', error: failure });
    expect(next).toMatchObject({ compaction: null, compactedCall: 3, turnUsage: sum, totalUsage: sum });
    expect(probe.emitted).toEqual([
      expect.objectContaining({ type: 'limit_warning', limit: 'context_window', used: 9_500, max: 8_000 }),
    ]);
    expect(probe.emitted[0]!.message).toContain('the summary call timed out');
  });

  it('any other failure: no usage counted, the reason still named, no tokens known', () => {
    for (const [error, named] of [
      [new Error('interrupted'), 'interrupted'],
      ['plain reason', 'plain reason'],
    ] as const) {
      const probe = actionProbe('finishCompaction', compacting());
      const next = probe.send({ type: 'xstate.error.actor.compact', error });
      expect(next).toMatchObject({ compactedCall: 3, turnUsage: spent, totalUsage: spent, compaction: null });
      expect(probe.emitted).toEqual([expect.objectContaining({ type: 'limit_warning', used: 0, max: 0 })]);
      expect(probe.emitted[0]!.message).toContain(named);
    }
  });
});

describe('applyCompaction', () => {
  it('takes in a summary asked for after the turn, and counts its call', () => {
    const probe = actionProbe('applyCompaction', compacting());
    const next = probe.send({ type: 'COMPACTED', record, usage });
    expect(next).toMatchObject({ compaction: record, turnUsage: sum, totalUsage: sum, compactedCall: null });
    expect(probe.emitted).toEqual([
      expect.objectContaining({
        type: 'context_compacted',
        entriesCovered: 6,
        model: 'small-model',
        tokensAfter: 2_000,
      }),
    ]);
    // Its call reported no usage: no tokens counted, the cost unknown from then on.
    const unreported = actionProbe('applyCompaction', compacting()).send({
      type: 'COMPACTED',
      record,
      usage: null,
    });
    const { costUsd: _, ...tokens } = spent;
    expect(unreported).toMatchObject({ compaction: record, turnUsage: tokens, totalUsage: tokens });
    expect(unreported.totalUsage).not.toHaveProperty('costUsd');
  });

  it('without a summary: the conversation unchanged, the failure named (or that none came)', () => {
    const probe = actionProbe('applyCompaction', compacting());
    const next = probe.send({ type: 'COMPACTED', failure: 'nothing to summarize', usage: null });
    expect(next).toMatchObject({
      compaction: null,
      totalUsage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    });
    expect(probe.emitted).toEqual([
      expect.objectContaining({ type: 'limit_warning', limit: 'context_window', used: 0, max: 0 }),
    ]);
    expect(probe.emitted[0]!.message).toContain('nothing to summarize');
    const silent = actionProbe('applyCompaction', compacting());
    const kept = silent.send({ type: 'COMPACTED', usage: usage });
    expect(kept.totalUsage).toEqual(sum);
    expect(silent.emitted[0]!.message).toContain('no summary');
  });

  it('does nothing on another event', () => {
    const context = compacting();
    const probe = actionProbe('applyCompaction', context);
    expect(probe.send({ type: 'RESUME', record, usage })).toEqual(context);
    expect(probe.emitted).toEqual([]);
  });
});

describe('enterState', () => {
  it('records the state entered and announces it with the one before, to those who listen', () => {
    const probe = actionProbe('enterState', contextWith({ lastState: 'Thinking', turn: 1 }), {
      params: { state: 'Completed' },
    });
    expect(probe.send({ type: 'GO' }).lastState).toBe('Completed');
    expect(probe.emitted).toEqual([
      {
        type: 'state_change',
        sessionId: 's1',
        turn: 1,
        iteration: 0,
        state: 'Completed',
        previous: 'Thinking',
      },
    ]);
    const quiet = actionProbe('enterState', contextWith({ lastState: 'Thinking' }), {
      params: { state: 'Error' },
      hears: (t) => t !== 'state_change',
    });
    expect(quiet.send({ type: 'GO' }).lastState).toBe('Error');
    expect(quiet.emitted).toEqual([]);
  });

  it('does nothing when the state was recorded already (by the transition’s own update)', () => {
    const context = contextWith({ lastState: 'ExecutingTool' });
    const probe = actionProbe('enterState', context, { params: { state: 'ExecutingTool' } });
    expect(probe.send({ type: 'GO' })).toBe(probe.actor.getSnapshot().context);
    expect(probe.actor.getSnapshot().context).toEqual(context);
    expect(probe.emitted).toEqual([]);
  });
});
