import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/defaults.js';
import {
  type AgentContext,
  deadlineFrom,
  endedTurnFields,
  initialContext,
  newTurnFields,
  ZERO_USAGE,
} from '../src/machines/agent-context.js';
import { EMPTY_BATCH } from '../src/machines/tool-batch.js';

// The context a machine starts with, and the field sets a turn starts and ends with (a restore
// rebuilds contexts from the same sets).

/** The fields of turn `turn` as it starts: nothing used, nothing pending, no answer. */
function turnStart(turn: number, maxIterations: number, deadline: number | null) {
  return {
    turn,
    iteration: 0,
    maxIterations,
    warned: false,
    deadline,
    pausedAt: null,
    batch: EMPTY_BATCH,
    finalReason: null,
    partial: '',
    response: '',
    terminateReason: null,
    error: null,
    turnUsage: ZERO_USAGE,
    repeatedCalls: {},
    consecutiveErrors: 0,
    compactedCall: null,
  };
}

describe('initialContext', () => {
  it('starts before the first turn: nothing allowed, no plan, not initialized, nothing used', () => {
    const context = initialContext({ sessionId: 's', messages: [{ role: 'system', content: 'Hi.' }] });
    expect(context).toMatchObject({
      sessionId: 's',
      messages: [{ role: 'system', content: 'Hi.' }],
      ...turnStart(0, DEFAULTS.maxIterations, null),
      totalUsage: ZERO_USAGE,
      alwaysAllowed: [],
      plan: null,
      initialized: false,
      lastState: 'Initializing',
      compaction: null,
    });
  });

  it('makes a session id when none is given, a new one each time, and takes the limits given', () => {
    const a = initialContext({});
    const b = initialContext({ limits: { maxIterations: 3 } });
    expect(a.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.sessionId).not.toBe(a.sessionId);
    expect(a.messages).toEqual([]);
    expect(b.limits.maxIterations).toBe(3);
    expect(b.maxIterations).toBe(3);
  });
});

describe('a turn’s fields', () => {
  const timed = (timeoutMs: number | null): AgentContext => initialContext({ limits: { timeoutMs } });

  it('a turn’s deadline is its start plus the time limit, none without one', () => {
    expect(deadlineFrom(timed(5_000), 1_000)).toBe(6_000);
    expect(deadlineFrom(timed(null), 1_000)).toBeNull();
    expect(deadlineFrom(timed(0), 1_000)).toBe(1_000);
  });

  it('a new turn resets the counters, the answer and the batch, and sets its number and deadline', () => {
    const context: AgentContext = {
      ...timed(2_000),
      turn: 4,
      iteration: 9,
      maxIterations: 70,
      warned: true,
      partial: 'half',
      response: 'old answer',
      terminateReason: 'max_iterations',
      consecutiveErrors: 3,
      repeatedCalls: { x: 2 },
    };
    expect(newTurnFields(context, 5, 10_000)).toEqual(turnStart(5, context.limits.maxIterations, 12_000));
  });

  it('an ended turn has no batch, no stream, no paused clock, its reason, and keeps its answer', () => {
    const ended = endedTurnFields('interrupted');
    expect(ended).toEqual({
      batch: EMPTY_BATCH,
      partial: '',
      pausedAt: null,
      finalReason: null,
      terminateReason: 'interrupted',
      compactedCall: null,
    });
    expect(ended).not.toHaveProperty('response');
  });
});
