import { describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { AGENT_STATES, agentMachine, bindAgentEffects } from '../src/index.js';
import { type AgentContext, initialContext } from '../src/machines/agent-context.js';
import { persistedSnapshotEnvelope } from '../src/machines/agent-context-schema.js';
import {
  checkPersistedSnapshot,
  interruptedSnapshot,
  type PersistedAgentSnapshot,
  persistedSnapshotWithoutMessages,
  sessionStartSnapshot,
  upgradeSnapshot,
  withAlwaysAllowed,
} from '../src/machines/agent-snapshot.js';
import { BUSY_STATES, isBusyState } from '../src/machines/agent-states.js';
import { isRestState, planRestore, REST_STATES } from '../src/unstable.js';
import { answerOutput } from './support/llm-outputs.js';

// What code outside the machine may do with a persisted snapshot goes through machines/agent-snapshot.ts:
// a saved 0.1 session upgrades, and a rebuilt context keeps every field.

const call = { id: 'c1', name: 'deploy', argsText: '{}', args: {}, needsApproval: true };

describe('the state names', () => {
  it('are the machine’s own top-level states, in one list', () => {
    expect(Object.keys(agentMachine.root.states).sort()).toEqual([...AGENT_STATES].sort());
    for (const state of REST_STATES) expect(AGENT_STATES).toContain(state);
  });

  it('tell rest states from busy ones, and anything that is not a state name from both', () => {
    for (const state of AGENT_STATES) {
      const rest = (REST_STATES as readonly string[]).includes(state);
      const busy = (BUSY_STATES as readonly string[]).includes(state);
      expect(isRestState(state), state).toBe(rest);
      expect(isBusyState(state), state).toBe(busy);
    }
    expect(isBusyState('WaitingApproval') && isRestState('WaitingApproval')).toBe(true);
    expect(isRestState('Thinking')).toBe(false);
    expect(isBusyState('Completed')).toBe(false);
    for (const other of ['', 'thinking', undefined, null, 3, { Thinking: {} }, ['Completed']]) {
      expect(isRestState(other)).toBe(false);
      expect(isBusyState(other)).toBe(false);
    }
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

  it('leaves it as it is with a runner still running among its children', () => {
    const saved = {
      status: 'active',
      value: 'WaitingApproval',
      context: initialContext({}),
      children: { 'tools:a': { snapshot: { status: 'active' }, src: 'runTools' } },
    };
    expect(upgradeSnapshot(saved)).toBe(saved);
  });

  it('keeps finished children that are not tool runners', () => {
    const saved = {
      status: 'active',
      value: 'AwaitingInput',
      context: initialContext({}),
      children: { other: { snapshot: { status: 'done' } }, 'tools:z': { snapshot: { status: 'done' } } },
    } as PersistedAgentSnapshot;
    expect(Object.keys(upgradeSnapshot(saved).children ?? {})).toEqual(['other']);
  });

  it('fills each field a snapshot of an earlier version lacks, one at a time', () => {
    const current = { ...initialContext({ sessionId: 'u' }), alwaysAllowed: ['lookup'] };
    const lacking = (field: keyof AgentContext) => {
      const { [field]: _dropped, ...context } = current;
      return upgradeSnapshot({ status: 'active', value: 'AwaitingInput', context } as PersistedAgentSnapshot)
        .context;
    };
    expect(lacking('batch').batch).toEqual({ calls: [], results: {}, pending: [], started: [], runners: {} });
    expect(lacking('alwaysAllowed').alwaysAllowed).toEqual([]);
    expect(lacking('plan').plan).toBeNull();
    expect(lacking('compaction').compaction).toBeNull();
    // Limits saved before any limit existed: the defaults.
    expect(lacking('limits').limits).toEqual(initialContext({}).limits);
    for (const field of ['batch', 'plan', 'compaction', 'limits'] as const) {
      expect(lacking(field).alwaysAllowed, field).toEqual(['lookup']);
    }
  });

  it('moves a 0.1 snapshot’s results, and takes its runners from its children when it listed none', () => {
    const { batch: _b, alwaysAllowed: _a, ...context } = initialContext({ sessionId: 's1' });
    const result = { toolCallId: 'c2', name: 'lookup', content: 'found', isError: false, durationMs: 3 };
    const old = {
      status: 'active',
      value: 'WaitingApproval',
      context: { ...context, calls: [call], results: { c2: result } },
      children: { 'tools:c2,c3': { snapshot: { status: 'active' } }, initialize: { snapshot: {} } },
    } as unknown as PersistedAgentSnapshot;
    const { batch } = upgradeSnapshot(old).context;
    expect(batch.results).toEqual({ c2: result });
    expect(batch.runners).toEqual({ 'tools:c2,c3': ['c2', 'c3'] });
    expect(batch.pending).toEqual([]);
    expect(batch.started).toEqual([]);
    // No batch fields and no children at all: an empty batch.
    const bare = upgradeSnapshot({
      status: 'active',
      value: 'AwaitingInput',
      context,
    } as PersistedAgentSnapshot);
    expect(bare.context.batch).toEqual({ calls: [], results: {}, pending: [], started: [], runners: {} });
  });
});

describe('checkPersistedSnapshot', () => {
  const saved = (fields: Record<string, unknown> = {}) => ({
    status: 'active',
    value: 'AwaitingInput',
    context: initialContext({ sessionId: 'chk' }),
    ...fields,
  });

  it('passes a snapshot that fits, upgraded', () => {
    const check = checkPersistedSnapshot(saved());
    expect(check).toMatchObject({ ok: true, snapshot: { value: 'AwaitingInput' } });
  });

  it('names an unknown state with the value found and the states it may be', () => {
    // The value last: the problem shows the value at the field, not the start of the snapshot.
    const check = checkPersistedSnapshot({
      status: 'active',
      context: initialContext({}),
      value: 'Pondering',
    });
    expect(check).toMatchObject({ ok: false, field: 'snapshot.value' });
    const problem = check.ok ? '' : check.problem;
    expect(problem).toContain('"Pondering"');
    for (const state of AGENT_STATES) expect(problem).toContain(`"${state}"`);
  });

  it('shows at most the start of a long value', () => {
    const check = checkPersistedSnapshot(saved({ value: `Renamed${'x'.repeat(500)}` }));
    const problem = check.ok ? '' : check.problem;
    expect(problem).toContain('"Renamedxxx');
    expect(problem.length).toBeLessThan(300);
  });

  it('names a missing field, and says how many more problems there are', () => {
    const { value: _v, ...noValue } = saved();
    const one = checkPersistedSnapshot(noValue);
    expect(one).toMatchObject({ ok: false, field: 'snapshot.value' });
    expect(one.ok ? '' : one.problem).toContain('undefined');
    // One problem that is not a wrong value: the schema's own words for it, nothing added.
    const noChildren = saved({ children: 'none' });
    const issue = persistedSnapshotEnvelope.safeParse(noChildren).error?.issues[0];
    expect(checkPersistedSnapshot(noChildren)).toEqual({
      ok: false,
      field: 'snapshot.children',
      problem: issue?.message,
    });
    const three = checkPersistedSnapshot({ context: {} });
    expect(three).toMatchObject({ ok: false, field: 'snapshot.status' });
    expect(three.ok ? '' : three.problem).toContain('; 1 more');
  });

  it('names the message where a conversation breaks the tool-call rules', () => {
    const context = {
      ...initialContext({}),
      messages: [
        { role: 'user', content: 'go' },
        { role: 'tool', tool_call_id: 'nobody', content: 'x' },
      ],
    };
    expect(checkPersistedSnapshot(saved({ context }))).toMatchObject({
      ok: false,
      field: 'snapshot.context.messages.1',
    });
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

describe('interruptedSnapshot, other endings', () => {
  const context = {
    ...initialContext({ sessionId: 's4', limits: { maxIterations: 7 } }),
    turn: 2,
    iteration: 4,
    maxIterations: 17,
    warned: true,
    response: 'the answer before',
    turnUsage: { promptTokens: 5, completionTokens: 5, totalTokens: 10, costUsd: 0.01 },
    initialized: true,
  };
  const saved = { status: 'active', value: 'Thinking', context } as PersistedAgentSnapshot;
  const messages = [{ role: 'user' as const, content: 'q' }];
  const tail = { messages, newTurns: 0, iteration: 5, alwaysAllowed: [] };

  it('with no new turn, keeps the saved turn’s limits and usage, and its answer is empty', () => {
    const rebuilt = interruptedSnapshot(saved, tail).context;
    expect(rebuilt).toMatchObject({ turn: 2, iteration: 5, maxIterations: 17, warned: true, response: '' });
    expect(rebuilt.turnUsage).toEqual(context.turnUsage);
    expect(rebuilt.terminateReason).toBe('interrupted');
  });

  it('a transcript ending in the final answer rests in Completed with that answer', () => {
    const snapshot = interruptedSnapshot(saved, { ...tail, finalResponse: 'all done' });
    expect(snapshot.value).toBe('Completed');
    expect(snapshot.context).toMatchObject({
      response: 'all done',
      terminateReason: 'completed',
      lastState: 'Completed',
      error: null,
    });
  });

  it('with an error, rests in Error with it, the final answer ignored, still initialized', () => {
    const error = { message: 'transcript unreadable', code: 'restore_failed' };
    const snapshot = interruptedSnapshot(saved, { ...tail, finalResponse: 'all done' }, error);
    expect(snapshot.value).toBe('Error');
    expect(snapshot.context).toMatchObject({
      error,
      response: '',
      terminateReason: 'error',
      lastState: 'Error',
      initialized: true,
    });
  });
});

describe('sessionStartSnapshot', () => {
  it('is the same agent at the start of another session: its limits, no message, the usage given', () => {
    const context = {
      ...initialContext({ sessionId: 'old', limits: { maxIterations: 4, timeoutMs: 9_000 } }),
      turn: 3,
      messages: [{ role: 'user' as const, content: 'old' }],
      plan: { steps: [{ step: 'x', status: 'pending' as const }] },
    };
    const saved = {
      status: 'active',
      value: 'Completed',
      context,
      children: { 'tools:a': {} },
      historyValue: {},
    } as PersistedAgentSnapshot;
    const totalUsage = { promptTokens: 1, completionTokens: 2, totalTokens: 3, costUsd: 0.5 };
    const start = sessionStartSnapshot(saved, { sessionId: 'fork', totalUsage });
    expect(start.value).toBe('AwaitingInput');
    expect(start.status).toBe('active');
    expect(start.historyValue).toEqual({});
    expect(start.children).toEqual({});
    expect(start.context).toEqual({
      ...initialContext({ sessionId: 'fork', limits: context.limits }),
      totalUsage,
      initialized: true,
      lastState: 'AwaitingInput',
    });
    expect(checkPersistedSnapshot(start)).toMatchObject({ ok: true });
  });
});

describe('withAlwaysAllowed', () => {
  const saved = {
    status: 'active',
    value: 'AwaitingInput',
    context: { ...initialContext({}), alwaysAllowed: ['lookup'] },
  } as PersistedAgentSnapshot;

  it('adds the tools not yet allowed, once each, after those that were', () => {
    const added = withAlwaysAllowed(saved, ['deploy', 'lookup']);
    expect(added.context.alwaysAllowed).toEqual(['lookup', 'deploy']);
    expect(saved.context.alwaysAllowed).toEqual(['lookup']);
  });

  it('returns the very same snapshot when nothing is new', () => {
    expect(withAlwaysAllowed(saved, ['lookup'])).toBe(saved);
    expect(withAlwaysAllowed(saved, [])).toBe(saved);
  });
});

describe('persistedSnapshotWithoutMessages', () => {
  it('is the persisted snapshot of a running agent with the conversation left out, the rest as it is', async () => {
    const actor = createActor(agentMachine, {
      input: { sessionId: 'p', messages: [{ role: 'system', content: 'Long system prompt.' }] },
    });
    bindAgentEffects(actor, {
      callLlm: async () => answerOutput('hi'),
      runTools: async () => [],
    });
    actor.start();
    await waitFor(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'hello', at: Date.now() });
    await waitFor(actor, (s) => s.matches('Completed'));
    const full = actor.getPersistedSnapshot() as unknown as PersistedAgentSnapshot;
    const light = persistedSnapshotWithoutMessages(actor);
    expect(full.context.messages).toHaveLength(3);
    expect(light.context.messages).toEqual([]);
    expect({ ...light, context: { ...light.context, messages: full.context.messages } }).toEqual(full);
    // The running actor keeps its conversation.
    expect(actor.getSnapshot().context.messages).toHaveLength(3);
    actor.stop();
  });
});
