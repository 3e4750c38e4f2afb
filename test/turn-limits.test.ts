import { describe, expect, it } from 'vitest';
import type { Usage } from '../src/llm/message.js';
import { type AgentContext, initialContext } from '../src/machines/agent-context.js';
import type { TerminateReason } from '../src/machines/emitted-events.js';
import { EMPTY_BATCH, receiveCalls } from '../src/machines/tool-batch.js';
import {
  checkLimitsAfterTools,
  costBudgetReached,
  costWarnings,
  finalCallNote,
  iterationWarning,
  sessionBudgetSpent,
  stopReplyReason,
  usageAfter,
} from '../src/machines/turn-limits.js';
import type { ToolCallRequest, ToolResult } from '../src/tools/tool-call.js';

// The limit checks as pure functions of a context: which limit ends the turn, when the model is
// warned, what a cost budget counts. limits.test.ts and cost-budget.test.ts run the same rules
// through whole turns; these pin down each boundary.

const call = (id: string, name = 'search', argsText = '{"q":1}'): ToolCallRequest => ({
  id,
  name,
  argsText,
  args: JSON.parse(argsText),
  needsApproval: false,
});
const result = (id: string, isError = false, extra: Partial<ToolResult> = {}): ToolResult => ({
  toolCallId: id,
  name: 'search',
  content: isError ? 'failed' : 'found',
  isError,
  durationMs: 1,
  ...extra,
});
const usage = (costUsd?: number, totalTokens = 10): Usage => ({
  promptTokens: totalTokens - 2,
  completionTokens: 2,
  totalTokens,
  ...(costUsd === undefined ? {} : { costUsd }),
});

function context(fields: Partial<AgentContext> = {}, limits: Partial<AgentContext['limits']> = {}) {
  const base = initialContext({ sessionId: 's', limits });
  return { ...base, turn: 1, ...fields };
}
const withCalls = (calls: ToolCallRequest[], fields: Partial<AgentContext> = {}, limits = {}) =>
  context({ ...fields, batch: receiveCalls(EMPTY_BATCH, calls, []) }, limits);

describe('checkLimitsAfterTools', () => {
  it('counts identical calls (same tool, same arguments) across batches, apart from different ones', () => {
    const first = checkLimitsAfterTools(withCalls([call('a'), call('b'), call('c', 'fetch')]), [
      result('a'),
      result('b'),
      result('c'),
    ]);
    expect(first.repeatedCalls).toEqual({ 'search {"q":1}': 2, 'fetch {"q":1}': 1 });
    const second = checkLimitsAfterTools(
      withCalls([call('d', 'search', '{"q":2}')], { repeatedCalls: first.repeatedCalls }),
      [result('d')],
    );
    expect(second.repeatedCalls).toEqual({ 'search {"q":1}': 2, 'fetch {"q":1}': 1, 'search {"q":2}': 1 });
    expect(second.finalReason).toBeNull();
  });

  it('warns one identical call before the limit, naming the tool and the count, and ends the turn at it', () => {
    const limits = { maxRepeatedCalls: 3 };
    const fine = checkLimitsAfterTools(withCalls([call('a')], {}, limits), [result('a')]);
    expect(fine.notes).toEqual([]);
    const near = checkLimitsAfterTools(
      withCalls([call('a', 'fetch'), call('b')], { repeatedCalls: { 'search {"q":1}': 1 } }, limits),
      [result('a'), result('b')],
    );
    expect(near.finalReason).toBeNull();
    expect(near.notes).toHaveLength(1);
    expect(near.notes[0]).toMatchObject({ limit: 'repeated_calls', used: 2, max: 3 });
    // The note names the repeated tool, not the other call of the batch.
    expect(near.notes[0]!.message).toContain('search');
    expect(near.notes[0]!.message).not.toContain('fetch');
    expect(near.notes[0]!.message).toContain('2');
    const over = checkLimitsAfterTools(
      withCalls([call('c')], { repeatedCalls: near.repeatedCalls }, limits),
      [result('c')],
    );
    expect(over.finalReason).toBe('repeated_calls');
    expect(over.notes).toEqual([]);
  });

  it('names the most repeated call, wherever it is in the batch', () => {
    const limits = { maxRepeatedCalls: 3 };
    const near = checkLimitsAfterTools(
      withCalls([call('b'), call('a', 'fetch')], { repeatedCalls: { 'search {"q":1}': 1 } }, limits),
      [result('b'), result('a')],
    );
    expect(near.notes).toEqual([expect.objectContaining({ limit: 'repeated_calls', used: 2 })]);
    expect(near.notes[0]!.message).toContain('search');
    expect(near.notes[0]!.message).not.toContain('fetch');
  });

  it('gives no note once a limit ends the turn, even one that is near', () => {
    const ctx = withCalls(
      [call('a')],
      { repeatedCalls: { 'search {"q":1}': 1 }, consecutiveErrors: 1 },
      {
        maxRepeatedCalls: 3,
        maxConsecutiveErrors: 3,
      },
    );
    expect(checkLimitsAfterTools(ctx, [result('a', true)]).notes).toHaveLength(2);
    const timedOut = checkLimitsAfterTools(ctx, [result('a', true, { deadlineExceeded: true })]);
    expect(timedOut.finalReason).toBe('timeout');
    expect(timedOut.notes).toEqual([]);
  });

  it('counts a failing streak across batches; a success resets it', () => {
    const limits = { maxConsecutiveErrors: 3 };
    const ctx = withCalls([call('a', 'x', '{}'), call('b', 'y', '{}')], { consecutiveErrors: 1 }, limits);
    const near = checkLimitsAfterTools(ctx, [result('a', true)]);
    expect(near.consecutiveErrors).toBe(2);
    expect(near.finalReason).toBeNull();
    expect(near.notes).toEqual([expect.objectContaining({ limit: 'consecutive_errors', used: 2, max: 3 })]);
    expect(near.notes[0]!.message).toContain('2');
    expect(checkLimitsAfterTools(ctx, [result('a', true), result('b', true)])).toMatchObject({
      consecutiveErrors: 3,
      finalReason: 'consecutive_errors',
      notes: [],
    });
    expect(checkLimitsAfterTools(ctx, [result('a', true), result('b')]).consecutiveErrors).toBe(0);
    expect(checkLimitsAfterTools(ctx, [result('a'), result('b', true)]).consecutiveErrors).toBe(1);
  });

  it('ends the turn on a tool cut short by the deadline before any other limit', () => {
    const ctx = withCalls([call('a')], { consecutiveErrors: 9, iteration: 99 }, { maxRepeatedCalls: 1 });
    expect(checkLimitsAfterTools(ctx, [result('a', true, { deadlineExceeded: true })]).finalReason).toBe(
      'timeout',
    );
    expect(checkLimitsAfterTools(ctx, [result('a', true)]).finalReason).toBe('repeated_calls');
    // One call of the batch cut short is enough.
    const two = withCalls([call('a'), call('b', 'fetch')]);
    expect(
      checkLimitsAfterTools(two, [result('a'), result('b', true, { deadlineExceeded: true })]).finalReason,
    ).toBe('timeout');
  });

  it('ends the turn once its tokens reach the budget, and not without a budget', () => {
    const ctx = (totalTokens: number, tokenBudget: number | null) =>
      withCalls([call('a')], { turnUsage: usage(undefined, totalTokens) }, { tokenBudget });
    expect(checkLimitsAfterTools(ctx(99, 100), [result('a')]).finalReason).toBeNull();
    expect(checkLimitsAfterTools(ctx(100, 100), [result('a')]).finalReason).toBe('token_budget');
    expect(checkLimitsAfterTools(ctx(10_000, null), [result('a')]).finalReason).toBeNull();
  });

  it('ends the turn when the model calls reach maxIterations (extensions included)', () => {
    const ctx = (iteration: number, maxIterations: number) =>
      withCalls([call('a')], { iteration, maxIterations }, { maxIterations: 4 });
    expect(checkLimitsAfterTools(ctx(3, 4), [result('a')]).finalReason).toBeNull();
    expect(checkLimitsAfterTools(ctx(4, 4), [result('a')]).finalReason).toBe('max_iterations');
    expect(checkLimitsAfterTools(ctx(4, 14), [result('a')]).finalReason).toBeNull();
  });

  it('gives both notes when both limits are near', () => {
    const ctx = withCalls(
      [call('a')],
      { consecutiveErrors: 1 },
      { maxRepeatedCalls: 2, maxConsecutiveErrors: 3 },
    );
    const verdict = checkLimitsAfterTools(ctx, [result('a', true)]);
    expect(verdict.notes.map((n) => n.limit)).toEqual(['repeated_calls', 'consecutive_errors']);
  });
});

describe('iterationWarning', () => {
  const at = (iteration: number, fields: Partial<AgentContext> = {}) =>
    iterationWarning(context({ iteration, ...fields }, { maxIterations: 10, iterationWarningShare: 0.75 }));

  it('warns from ceil(share * max) calls on, with the calls used and left, until the last', () => {
    expect(at(7)).toBeNull();
    const warning = at(8);
    expect(warning).toMatchObject({ used: 8, max: 10 });
    // 8 used, 2 remain: both numbers are in the note.
    expect(warning!.message).toMatch(/8\D+10/);
    expect(warning!.message).toContain('2');
    expect(at(9)).toMatchObject({ used: 9, max: 10 });
    expect(at(10)).toBeNull();
  });

  it('warns once a turn, and not on the final call', () => {
    expect(at(8, { warned: true })).toBeNull();
    expect(at(8, { finalReason: 'timeout' })).toBeNull();
  });

  it('counts against the extended limit', () => {
    expect(at(9, { maxIterations: 20 })).toBeNull();
    expect(at(15, { maxIterations: 20 })).toMatchObject({ used: 15, max: 20 });
  });
});

describe('finalCallNote', () => {
  it('is a system message that says tools are off, with a different reason for each limit', () => {
    const reasons: TerminateReason[] = [
      'max_iterations',
      'timeout',
      'token_budget',
      'repeated_calls',
      'consecutive_errors',
    ];
    const notes = reasons.map((r) => finalCallNote(r));
    for (const note of notes) expect(note.role).toBe('system');
    const texts = notes.map((n) => String(n.content));
    expect(new Set(texts).size).toBe(reasons.length);
    // Every reason is explained in words, not by its code.
    for (const [i, reason] of reasons.entries()) expect(texts[i]).not.toContain(reason);
    // A reason without its own words is named as it is.
    const generic = String(finalCallNote('cost_budget').content);
    expect(generic).toContain('cost_budget');
    // Each limit's words say more than its code would.
    for (const [i, reason] of reasons.entries()) {
      expect(texts[i]!.length, reason).toBeGreaterThan(generic.length - 'cost_budget'.length + 20);
    }
  });
});

describe('cost budgets', () => {
  const priced = (turnCost: number, totalCost: number, limits: Partial<AgentContext['limits']>) =>
    context({ turnUsage: usage(turnCost), totalUsage: usage(totalCost) }, limits);

  it('a budget is reached at its amount, a billionth short included, and not before', () => {
    const ctx = priced(0, 0, { maxCostUsd: 0.1 });
    expect(costBudgetReached(ctx, usage(0.099), usage(0.099))).toBe(false);
    expect(costBudgetReached(ctx, usage(0.02 * 4 + 0.02), usage(0))).toBe(true);
    expect(costBudgetReached(ctx, usage(0.1 - 5e-10), usage(0))).toBe(true);
    expect(costBudgetReached(ctx, usage(0.1 - 2e-9), usage(0))).toBe(false);
    expect(costBudgetReached(ctx, usage(0.2), usage(0))).toBe(true);
  });

  it('the session budget counts the session’s usage, the turn budget the turn’s', () => {
    const session = priced(0, 0, { maxSessionCostUsd: 1 });
    expect(costBudgetReached(session, usage(5), usage(0.5))).toBe(false);
    expect(costBudgetReached(session, usage(0), usage(1))).toBe(true);
    const turn = priced(0, 0, { maxCostUsd: 1 });
    expect(costBudgetReached(turn, usage(0.5), usage(5))).toBe(false);
  });

  it('an unknown cost reaches no budget, and no budget is reached without one', () => {
    const ctx = priced(0, 0, { maxCostUsd: 0.01, maxSessionCostUsd: 0.01 });
    expect(costBudgetReached(ctx, usage(), usage())).toBe(false);
    expect(costBudgetReached(priced(0, 0, {}), usage(100), usage(100))).toBe(false);
    // A context saved before the cost budgets existed has neither field.
    const old = context({}, {});
    const { maxCostUsd: _t, maxSessionCostUsd: _s, ...limits } = old.limits;
    expect(costBudgetReached({ ...old, limits: limits as never }, usage(100), usage(100))).toBe(false);
  });

  it('usageAfter adds a reply’s usage to the turn and the session; a reply without usage makes the cost unknown', () => {
    const ctx = context({ turnUsage: usage(0.5, 100), totalUsage: usage(2, 1000) });
    expect(usageAfter(ctx, usage(0.25, 10))).toEqual({
      turnUsage: { promptTokens: 106, completionTokens: 4, totalTokens: 110, costUsd: 0.75 },
      totalUsage: { promptTokens: 1006, completionTokens: 4, totalTokens: 1010, costUsd: 2.25 },
    });
    const unknown = usageAfter(ctx, null);
    expect(unknown.turnUsage).toEqual({ promptTokens: 98, completionTokens: 2, totalTokens: 100 });
    expect(unknown.totalUsage.costUsd).toBeUndefined();
  });
});

describe('stopReplyReason', () => {
  const reply = (finishReason: string, calls: unknown[] = [], replyUsage: Usage | null = null) => ({
    finishReason,
    calls,
    usage: replyUsage,
  });

  it('a cut-off reply is not run, with or without calls', () => {
    expect(stopReplyReason(context(), reply('length'))).toBe('length');
    expect(stopReplyReason(context(), reply('content_filter', [call('a')]))).toBe('content_filter');
  });

  it('a reply with calls that reaches a cost budget is not run; one below it, or one without calls, is', () => {
    const ctx = context({ turnUsage: usage(0.5), totalUsage: usage(0.5) }, { maxCostUsd: 1 });
    expect(stopReplyReason(ctx, reply('tool_calls', [call('a')], usage(0.5)))).toBe('cost_budget');
    expect(stopReplyReason(ctx, reply('tool_calls', [call('a')], usage(0.4)))).toBeNull();
    expect(stopReplyReason(ctx, reply('stop', [], usage(0.5)))).toBeNull();
    // The final call's reply ends the turn anyway.
    expect(
      stopReplyReason({ ...ctx, finalReason: 'timeout' }, reply('stop', [call('a')], usage(5))),
    ).toBeNull();
    // A reply without usage: cost unknown, no budget reached.
    expect(stopReplyReason(ctx, reply('tool_calls', [call('a')], null))).toBeNull();
  });
});

describe('sessionBudgetSpent', () => {
  it('refuses a new turn once the session’s cost reached its budget, showing the cost and the budget', () => {
    const spent = (costUsd: number | undefined, max: number | null) =>
      sessionBudgetSpent(context({ totalUsage: usage(costUsd) }, { maxSessionCostUsd: max }));
    expect(spent(0.5, 1)).toBeNull();
    expect(spent(undefined, 1)).toBeNull();
    expect(spent(5, null)).toBeNull();
    const why = spent(1.23456, 1);
    expect(why).toContain('1.2346');
    expect(why).toContain('$1 ');
    expect(why).toContain('maxSessionCostUsd');
    // The turn's budget does not refuse a new turn.
    expect(
      sessionBudgetSpent(context({ turnUsage: usage(5), totalUsage: usage(5) }, { maxCostUsd: 1 })),
    ).toBeNull();
  });
});

describe('costWarnings', () => {
  it('warns once, on the reply that crosses the share of a budget, with the scope, the cost and the budget', () => {
    const ctx = context({ turnUsage: usage(0.5), totalUsage: usage(0.5) }, { maxCostUsd: 1 });
    expect(costWarnings(ctx, usage(0.7), usage(0.7))).toEqual([]);
    const warnings = costWarnings(ctx, usage(0.85), usage(0.85));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ used: 0.85, max: 1 });
    expect(warnings[0]!.message).toContain('turn');
    expect(warnings[0]!.message).toContain('0.8500');
    // Already past the share before this reply: no second warning.
    const past = context({ turnUsage: usage(0.85), totalUsage: usage(0.85) }, { maxCostUsd: 1 });
    expect(costWarnings(past, usage(0.9), usage(0.9))).toEqual([]);
    // The share itself counts as crossed.
    expect(costWarnings(ctx, usage(0.8), usage(0.8))).toHaveLength(1);
  });

  it('warns for the session budget by its own scope, and not once a budget is reached', () => {
    const ctx = context({ turnUsage: usage(0), totalUsage: usage(7) }, { maxSessionCostUsd: 10 });
    const warnings = costWarnings(ctx, usage(1.5), usage(8.5));
    expect(warnings).toEqual([expect.objectContaining({ used: 8.5, max: 10 })]);
    expect(warnings[0]!.message).toContain('session');
    expect(costWarnings(ctx, usage(3), usage(10))).toEqual([]);
  });

  it('with both budgets, warns for each whose share the reply crosses', () => {
    const ctx = context(
      { turnUsage: usage(0), totalUsage: usage(7.9) },
      { maxCostUsd: 1, maxSessionCostUsd: 10 },
    );
    expect(costWarnings(ctx, usage(0.1), usage(8)).map((w) => w.max)).toEqual([10]);
    expect(costWarnings(ctx, usage(0.9), usage(8.1)).map((w) => w.max)).toEqual([1, 10]);
    // The session was past its share before this reply: only the turn's budget warns.
    const sessionPast = context(
      { turnUsage: usage(0), totalUsage: usage(8.5) },
      { maxCostUsd: 1, maxSessionCostUsd: 10 },
    );
    expect(costWarnings(sessionPast, usage(0.9), usage(9.4)).map((w) => w.max)).toEqual([1]);
    // A context that had no usage yet for the session budget (cost unknown before) still warns.
    const unknownBefore = context({ turnUsage: usage(), totalUsage: usage() }, { maxSessionCostUsd: 10 });
    expect(costWarnings(unknownBefore, usage(9), usage(9)).map((w) => w.max)).toEqual([10]);
  });
});
