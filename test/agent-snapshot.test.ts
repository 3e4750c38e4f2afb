import { describe, expect, it } from 'vitest';
import { AGENT_STATES, agentMachine } from '../src/index.js';
import { initialContext } from '../src/machines/agent-context.js';
import {
  checkPersistedSnapshot,
  interruptedSnapshot,
  type PersistedAgentSnapshot,
  upgradeSnapshot,
} from '../src/machines/agent-snapshot.js';
import { planRestore, REST_STATES } from '../src/unstable.js';

// What code outside the machine may do with a persisted snapshot goes through machines/agent-snapshot.ts:
// a saved 0.1 session upgrades, and a rebuilt context keeps every field.

const call = { id: 'c1', name: 'deploy', argsText: '{}', args: {}, needsApproval: true };

describe('the state names', () => {
  it('are the machine’s own top-level states, in one list', () => {
    expect(Object.keys(agentMachine.root.states).sort()).toEqual([...AGENT_STATES].sort());
    for (const state of REST_STATES) expect(AGENT_STATES).toContain(state);
  });
});

describe('upgradeSnapshot', () => {
  it('moves a 0.1 snapshot’s flat batch fields into `batch` and adds what it lacks', () => {
    const { batch: _b, alwaysAllowed: _a, ...context } = initialContext({ sessionId: 's1' });
    const old = {
      status: 'active',
      value: 'WaitingApproval',
      context: {
        ...context,
        calls: [call, { ...call, id: 'c2', name: 'lookup', needsApproval: false }],
        results: {},
        pending: ['c1'],
        started: ['c2'],
        runners: ['tools:c2'],
      },
      children: { 'tools:c2': { snapshot: {} } },
    } as unknown as PersistedAgentSnapshot;
    const upgraded = upgradeSnapshot(old);
    expect(upgraded.context.batch).toEqual({
      calls: (old.context as unknown as { calls: unknown }).calls,
      results: {},
      pending: ['c1'],
      started: ['c2'],
      runners: { 'tools:c2': ['c2'] },
    });
    expect(upgraded.context.alwaysAllowed).toEqual([]);
    expect(Object.keys(upgraded.context).sort()).toEqual(Object.keys(initialContext({})).sort());
    expect(upgraded.value).toBe('WaitingApproval');
  });

  it('drops tool runners that had finished (0.1 kept every runner of the session among the children)', () => {
    const saved = {
      status: 'active',
      value: 'AwaitingInput',
      context: initialContext({}),
      children: {
        'tools:a': { snapshot: { status: 'done', output: ['1 KB of results'] } },
        'tools:b': { snapshot: { status: 'error' } },
        'tools:c': { snapshot: { status: 'active' } },
      },
    } as PersistedAgentSnapshot;
    expect(Object.keys(upgradeSnapshot(saved).children ?? {})).toEqual(['tools:c']);
  });

  it('gives a snapshot saved before the cost budgets their defaults, and keeps its usage (cost unknown)', () => {
    const context = initialContext({ sessionId: 's3', limits: { maxIterations: 9 } });
    const { maxCostUsd: _m, maxSessionCostUsd: _s, ...limits } = context.limits;
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    const saved = {
      status: 'active',
      value: 'AwaitingInput',
      context: { ...context, limits, totalUsage: usage },
    } as unknown as PersistedAgentSnapshot;
    const upgraded = upgradeSnapshot(saved);
    expect(upgraded.context.limits).toEqual({ ...limits, maxCostUsd: null, maxSessionCostUsd: null });
    expect(upgraded.context.totalUsage).toEqual(usage);
    expect(checkPersistedSnapshot(saved)).toMatchObject({ ok: true });
  });

  it('leaves a current snapshot as it is', () => {
    const saved = { status: 'active', value: 'AwaitingInput', context: initialContext({}) };
    expect(upgradeSnapshot(saved)).toBe(saved);
  });
});

describe('interruptedSnapshot', () => {
  it('rests in Interrupted with no batch, no children, a new turn counted, and every field defined', () => {
    const context = {
      ...initialContext({ sessionId: 's2', limits: { maxIterations: 7 } }),
      turn: 1,
      iteration: 3,
      maxIterations: 12,
      warned: true,
      batch: { calls: [call], results: {}, pending: ['c1'], started: [], runners: {} },
      alwaysAllowed: ['lookup'],
    };
    const saved = {
      status: 'active',
      value: 'WaitingApproval',
      context,
      children: { x: {} },
    } as PersistedAgentSnapshot;
    const messages = [
      { role: 'user' as const, content: 'one' },
      { role: 'user' as const, content: 'two' },
    ];
    const snapshot = interruptedSnapshot(saved, {
      messages,
      newTurns: 1,
      iteration: 0,
      alwaysAllowed: ['deploy'],
    });
    expect(snapshot.value).toBe('Interrupted');
    expect(snapshot.children).toEqual({});
    const rebuilt = snapshot.context;
    expect(rebuilt.batch.calls).toEqual([]);
    expect(rebuilt.turn).toBe(2);
    expect(rebuilt.maxIterations).toBe(7);
    expect(rebuilt.warned).toBe(false);
    expect(rebuilt.terminateReason).toBe('interrupted');
    expect(rebuilt.lastState).toBe('Interrupted');
    expect(rebuilt.alwaysAllowed.sort()).toEqual(['deploy', 'lookup']);
    expect(rebuilt.messages).toBe(messages);
    for (const [key, value] of Object.entries(rebuilt)) expect(value, key).not.toBeUndefined();
    expect(Object.keys(rebuilt).sort()).toEqual(Object.keys(context).sort());
  });
});

describe('planRestore of a session saved in WaitingApproval', () => {
  it('answers the calls the batch had already answered from it, so a restarted runner does not run them again', () => {
    const calls = ['a', 'b', 'c'].map((id) => ({
      id,
      name: `t_${id}`,
      argsText: '{}',
      args: {},
      needsApproval: false,
    }));
    const context = {
      ...initialContext({ sessionId: 's3' }),
      turn: 1,
      iteration: 1,
      batch: {
        calls: [...calls, { ...call, id: 'd' }],
        results: { a: { toolCallId: 'a', name: 't_a', content: 'A done', isError: false, durationMs: 1 } },
        pending: ['d'],
        started: ['a', 'b', 'c'],
        runners: { 'tools:a': ['a', 'b', 'c'] },
      },
    };
    const saved = { status: 'active', value: 'WaitingApproval', context } as PersistedAgentSnapshot;
    const plan = planRestore(saved, [], () => false);
    expect(plan.decisions.get('a')).toMatchObject({
      action: 'use-recorded',
      result: 'A done',
      isError: false,
    });
    expect(plan.decisions.get('b')?.action).toBe('run');
  });
});
