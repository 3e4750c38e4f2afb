import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/defaults.js';
import { actionProbe, batchOf, contextWith, toolCall, toolResult } from './support/action-probe.js';

// The actions of tool calls (src/machines/actions/tool-actions.ts), each run on its own against a
// context the test sets: approvals, results as they arrive, runners that end, the batch appended.

const system = { role: 'system' as const, content: 'Sys.' };
const deploy = (id: string) => toolCall(id, { name: 'deploy', needsApproval: true });

/** A batch waiting for approval: `a` running, `b` and `c` (deploy) and `d` (publish) pending. */
function waiting() {
  const publish = toolCall('d', { name: 'publish', needsApproval: true });
  return contextWith(
    {
      turn: 2,
      iteration: 3,
      deadline: 50_000,
      pausedAt: 10_000,
      lastState: 'WaitingApproval',
      batch: batchOf([toolCall('a'), deploy('b'), deploy('c'), publish], {
        pending: ['b', 'c', 'd'],
        started: ['a'],
        runners: { 'tools:a': ['a'] },
      }),
    },
    { limits: { timeoutMs: 60_000 } },
  );
}

describe('requestApproval', () => {
  it('stops the clock at the reply’s time, enters WaitingApproval and asks for the pending calls', () => {
    const context = contextWith({
      lastState: 'Thinking',
      batch: batchOf([toolCall('a'), deploy('b')], { pending: ['b'], started: ['a'] }),
    });
    const probe = actionProbe('requestApproval', context);
    const next = probe.send({ type: 'xstate.done.actor.llm', output: { at: 1_234 } });
    expect(next).toMatchObject({ pausedAt: 1_234, lastState: 'WaitingApproval' });
    expect(probe.emitted).toEqual([
      expect.objectContaining({ type: 'state_change', state: 'WaitingApproval', previous: 'Thinking' }),
      expect.objectContaining({
        type: 'approval_requested',
        pending: [{ toolCallId: 'b', name: 'deploy', args: { id: 'b' } }],
      }),
    ]);
    // Entered without the reply's time (a restored wait): no time to stop the clock at.
    const restored = actionProbe('requestApproval', { ...context, pausedAt: 5 }).send({ type: 'OTHER' });
    expect(restored).toMatchObject({ pausedAt: null, lastState: 'WaitingApproval' });
  });
});

describe('approveCall', () => {
  it('starts the approved call in a runner of its own; the others keep waiting, the clock stays stopped', () => {
    const context = waiting();
    const probe = actionProbe('approveCall', context);
    const next = probe.send({ type: 'APPROVE', toolCallId: 'c', at: 12_000 });
    // `tools:a` (as an earlier version named runners) holds no number: the new runner is `tools:0`.
    expect(probe.spawned).toEqual([
      {
        id: 'tools:0',
        input: { sessionId: 's1', turn: 2, iteration: 3, calls: [deploy('c')], deadline: 50_000 },
      },
    ]);
    expect(probe.children().sort()).toEqual(['tools:0', 'tools:a']);
    expect(next.batch.pending).toEqual(['b', 'd']);
    expect(next.batch.started).toEqual(['a', 'c']);
    expect(next.batch.runners).toEqual({ 'tools:a': ['a'], 'tools:0': ['c'] });
    expect(next).toMatchObject({ alwaysAllowed: [], deadline: 50_000, pausedAt: 10_000 });
    expect(probe.emitted).toEqual([
      expect.objectContaining({ type: 'approval_resolved', toolCallId: 'c', approved: true }),
      expect.objectContaining({
        type: 'tool_call_start',
        toolCallId: 'c',
        name: 'deploy',
        args: { id: 'c' },
      }),
    ]);
  });

  it('with always: every pending call of that tool starts, the tool is allowed for the session', () => {
    const context = { ...waiting(), alwaysAllowed: ['other'] };
    const probe = actionProbe('approveCall', context);
    const next = probe.send({ type: 'APPROVE', toolCallId: 'b', always: true, at: 12_000 });
    expect(probe.spawned.map((s) => [s.id, s.input.calls.map((c) => c.id)])).toEqual([
      ['tools:0', ['b', 'c']],
    ]);
    expect(next.batch.pending).toEqual(['d']);
    expect(next.alwaysAllowed).toEqual(['other', 'deploy']);
    expect(probe.emitted.map((e) => [e.type, e.toolCallId])).toEqual([
      ['approval_resolved', 'b'],
      ['approval_resolved', 'c'],
      ['tool_call_start', 'b'],
      ['tool_call_start', 'c'],
    ]);
    // Allowed already: not listed twice.
    const again = actionProbe('approveCall', { ...context, alwaysAllowed: ['deploy'] }).send({
      type: 'APPROVE',
      toolCallId: 'b',
      always: true,
      at: 12_000,
    });
    expect(again.alwaysAllowed).toEqual(['deploy']);
  });

  it('the last answer moves the deadline by the time the user took (never back), and restarts the clock', () => {
    const last = (fields: object) =>
      contextWith({
        deadline: 50_000,
        pausedAt: 10_000,
        batch: batchOf([deploy('b')], { pending: ['b'] }),
        ...fields,
      });
    const moved = actionProbe('approveCall', last({})).send({ type: 'APPROVE', toolCallId: 'b', at: 12_500 });
    expect(moved).toMatchObject({ deadline: 52_500, pausedAt: null });
    const early = actionProbe('approveCall', last({})).send({ type: 'APPROVE', toolCallId: 'b', at: 9_000 });
    expect(early).toMatchObject({ deadline: 50_000, pausedAt: null });
    const none = actionProbe('approveCall', last({ deadline: null })).send({
      type: 'APPROVE',
      toolCallId: 'b',
      at: 12_500,
    });
    expect(none).toMatchObject({ deadline: null, pausedAt: null });
    // Not paused (a restored snapshot without pausedAt): the deadline stays.
    const unpaused = actionProbe('approveCall', last({ pausedAt: null })).send({
      type: 'APPROVE',
      toolCallId: 'b',
      at: 12_500,
    });
    expect(unpaused.deadline).toBe(50_000);
  });

  it('does nothing on another event', () => {
    const context = waiting();
    const probe = actionProbe('approveCall', context);
    expect(probe.send({ type: 'REJECT', toolCallId: 'b', at: 1 })).toEqual(context);
    expect(probe.spawned).toEqual([]);
  });
});

describe('rejectCall', () => {
  it('answers the call with the user’s refusal and reason, and reports it ended', () => {
    const context = waiting();
    const probe = actionProbe('rejectCall', context);
    const next = probe.send({ type: 'REJECT', toolCallId: 'c', reason: 'not today', at: 20_000 });
    const result = next.batch.results.c!;
    expect(result).toMatchObject({ toolCallId: 'c', name: 'deploy', isError: false, durationMs: 0 });
    expect(result.content).toContain('deploy');
    expect(result.content).toContain('not today');
    expect(next.batch.pending).toEqual(['b', 'd']);
    expect(next.batch.started).toEqual(['a']);
    expect(probe.spawned).toEqual([]);
    expect(next).toMatchObject({ deadline: 50_000, pausedAt: 10_000 });
    expect(probe.emitted).toEqual([
      expect.objectContaining({
        type: 'approval_resolved',
        toolCallId: 'c',
        approved: false,
        reason: 'not today',
      }),
      expect.objectContaining({
        type: 'tool_call_end',
        toolCallId: 'c',
        name: 'deploy',
        args: { id: 'c' },
        result: result.content,
        durationMs: 0,
      }),
    ]);
  });

  it('without a reason says none; the last answer restarts the clock', () => {
    const context = contextWith({
      deadline: 50_000,
      pausedAt: 10_000,
      batch: batchOf([deploy('b')], { pending: ['b'] }),
    });
    const probe = actionProbe('rejectCall', context);
    const next = probe.send({ type: 'REJECT', toolCallId: 'b', at: 11_000 });
    // The reason is the one difference between a refusal with and without one.
    const withReason = actionProbe('rejectCall', context).send({
      type: 'REJECT',
      toolCallId: 'b',
      reason: 'no',
      at: 1,
    });
    expect(withReason.batch.results.b!.content.replace(' Reason: no', '')).toBe(
      next.batch.results.b!.content,
    );
    expect(next).toMatchObject({ deadline: 51_000, pausedAt: null });
    expect(probe.emitted[0]).not.toHaveProperty('reason');
    expect(actionProbe('rejectCall', context).send({ type: 'APPROVE', toolCallId: 'b', at: 1 })).toEqual(
      context,
    );
  });
});

describe('results as they arrive', () => {
  const running = (extra: object = {}) =>
    contextWith({
      turn: 1,
      iteration: 2,
      batch: batchOf(
        [
          toolCall('a'),
          toolCall('p', {
            name: 'update_plan',
            updatesPlan: true,
            args: { steps: [{ step: 'Read', status: 'in_progress' }] },
          }),
        ],
        { started: ['a', 'p'], runners: { 'tools:a': ['a', 'p'] } },
      ),
      ...extra,
    });

  it('toolFinished records a result and reports it; a plan it sets is taken and announced', () => {
    const probe = actionProbe('toolFinished', running());
    let next = probe.send({
      type: 'TOOL.FINISHED',
      result: toolResult('a', 'A!', { isError: true, durationMs: 3 }),
    });
    expect(next.batch.results.a).toMatchObject({ content: 'A!', isError: true });
    expect(next.batch.runners).toEqual({ 'tools:a': ['a', 'p'] });
    next = probe.send({
      type: 'TOOL.FINISHED',
      result: toolResult('p', 'Plan updated.', { name: 'update_plan' }),
    });
    const plan = { steps: [{ step: 'Read', status: 'in_progress' }] };
    expect(next.plan).toEqual(plan);
    expect(probe.emitted).toEqual([
      {
        type: 'tool_call_end',
        sessionId: 's1',
        turn: 1,
        iteration: 2,
        toolCallId: 'a',
        name: 'lookup',
        args: { id: 'a' },
        durationMs: 3,
        error: 'A!',
      },
      {
        type: 'tool_call_end',
        sessionId: 's1',
        turn: 1,
        iteration: 2,
        toolCallId: 'p',
        name: 'update_plan',
        args: plan,
        durationMs: 7,
        result: 'Plan updated.',
      },
      { type: 'plan_updated', sessionId: 's1', turn: 1, iteration: 2, plan },
    ]);
  });

  it('toolFinished drops a result of a call not started, or answered already, and ignores other events', () => {
    const context = running({ batch: { ...running().batch, results: { a: toolResult('a') } } });
    const probe = actionProbe('toolFinished', context);
    expect(probe.send({ type: 'TOOL.FINISHED', result: toolResult('zz') })).toEqual(context);
    expect(probe.send({ type: 'TOOL.FINISHED', result: toolResult('a', 'again') })).toEqual(context);
    expect(probe.send({ type: 'OTHER', result: toolResult('p') })).toEqual(context);
    expect(probe.emitted).toEqual([]);
    // No update at all: every context update is a new snapshot (the machine's largest per-step cost).
    const before = probe.actor.getSnapshot().context;
    probe.send({ type: 'TOOL.FINISHED', result: toolResult('zz') });
    expect(probe.actor.getSnapshot().context).toBe(before);
  });

  it('builds no tool_call_end nobody listens to, but records the result', () => {
    const probe = actionProbe('toolFinished', running(), { hears: (t) => t !== 'tool_call_end' });
    expect(probe.send({ type: 'TOOL.FINISHED', result: toolResult('a') }).batch.results.a).toBeDefined();
    expect(probe.emitted).toEqual([]);
  });

  it('a result for a started call no longer among the calls is reported under its own name', () => {
    const context = contextWith({ batch: batchOf([], { started: ['x'] }) });
    const probe = actionProbe('toolFinished', context);
    probe.send({ type: 'TOOL.FINISHED', result: toolResult('x', 'late', { name: 'gone' }) });
    expect(probe.emitted).toEqual([
      expect.objectContaining({
        type: 'tool_call_end',
        toolCallId: 'x',
        name: 'gone',
        args: undefined,
        result: 'late',
      }),
    ]);
  });

  it('runnerDone records the runner’s results not yet recorded, stops it and lets it leave the batch', () => {
    const context = running({ batch: { ...running().batch, results: { a: toolResult('a') } } });
    const probe = actionProbe('runnerDone', context);
    const next = probe.send({
      type: 'xstate.done.actor.tools:a',
      actorId: 'tools:a',
      output: [toolResult('a', 'second'), toolResult('p', 'Plan updated.', { name: 'update_plan' })],
    });
    expect(probe.stopped).toEqual(['tools:a']);
    expect(next.batch.runners).toEqual({});
    expect(next.batch.results.a!.content).toBe('a ok');
    expect(next.batch.results.p!.content).toBe('Plan updated.');
    expect(next.plan).toEqual({ steps: [{ step: 'Read', status: 'in_progress' }] });
    expect(probe.emitted.map((e) => [e.type, e.toolCallId])).toEqual([
      ['tool_call_end', 'p'],
      ['plan_updated', undefined],
    ]);
    expect(probe.emitted[1]!.plan).toEqual({ steps: [{ step: 'Read', status: 'in_progress' }] });
  });

  it('runnerDone of a failed runner answers its calls with the failure; of an unknown runner, nothing', () => {
    const probe = actionProbe('runnerDone', running());
    const next = probe.send({
      type: 'xstate.error.actor.tools:a',
      actorId: 'tools:a',
      error: new Error('crashed'),
    });
    expect(next.batch.results.a).toMatchObject({
      isError: true,
      content: 'Error: the tool runner failed: crashed',
    });
    expect(next.batch.results.p).toMatchObject({ isError: true });
    expect(next.plan).toBeNull();
    expect(probe.emitted.map((e) => e.type)).toEqual(['tool_call_end', 'tool_call_end']);
    const context = running();
    const unknown = actionProbe('runnerDone', context);
    expect(
      unknown.send({ type: 'xstate.done.actor.tools:zz', actorId: 'tools:zz', output: [toolResult('a')] }),
    ).toEqual(context);
    expect(unknown.stopped).toEqual([]);
  });
});

describe('a complete batch', () => {
  it('appendResults: the results join in call order, the batch ends, the counts go on', () => {
    const context = contextWith({
      messages: [system],
      iteration: 1,
      deadline: 8_000,
      consecutiveErrors: 1,
      batch: batchOf([toolCall('b'), toolCall('a')], {
        results: { a: toolResult('a'), b: toolResult('b', 'bad', { isError: true }) },
        started: ['a', 'b'],
      }),
    });
    const probe = actionProbe('appendResults', context);
    const next = probe.send({ type: 'GO' });
    expect(next.messages).toEqual([
      system,
      { role: 'tool', tool_call_id: 'b', content: 'bad' },
      { role: 'tool', tool_call_id: 'a', content: 'a ok' },
    ]);
    expect(next.batch.calls).toEqual([]);
    expect(next).toMatchObject({
      repeatedCalls: { 'lookup {"id":"b"}': 1, 'lookup {"id":"a"}': 1 },
      consecutiveErrors: 0,
      finalReason: null,
      deadline: 8_000,
    });
    expect(probe.emitted).toEqual([]);
  });

  it('appendResults: a limit near is a note to the model and a limit_warning', () => {
    const context = contextWith(
      {
        messages: [system],
        iteration: 1,
        batch: batchOf([toolCall('a')], {
          results: { a: toolResult('a', 'bad', { isError: true }) },
          started: ['a'],
        }),
      },
      { limits: { maxConsecutiveErrors: 2 } },
    );
    const probe = actionProbe('appendResults', context);
    const next = probe.send({ type: 'GO' });
    expect(next.messages).toHaveLength(3);
    expect(next.messages[2]!.role).toBe('system');
    expect(probe.emitted).toEqual([
      expect.objectContaining({ type: 'limit_warning', limit: 'consecutive_errors', used: 1, max: 2 }),
    ]);
    expect(next.messages[2]!.content).toBe(probe.emitted[0]!.message);
  });

  it('appendResults: a tool past the deadline gives the final call a grace period (none without a deadline)', () => {
    const late = (deadline: number | null) =>
      contextWith({
        deadline,
        batch: batchOf([toolCall('a')], {
          results: { a: toolResult('a', 'slow', { deadlineExceeded: true }) },
          started: ['a'],
        }),
      });
    expect(actionProbe('appendResults', late(8_000)).send({ type: 'GO' })).toMatchObject({
      finalReason: 'timeout',
      deadline: 8_000 + DEFAULTS.finalAnswerGraceMs,
    });
    expect(actionProbe('appendResults', late(null)).send({ type: 'GO' })).toMatchObject({
      finalReason: 'timeout',
      deadline: null,
    });
  });

  it('closeBatchWithRunner: the runner’s results complete and close the batch in one update', () => {
    const plan = { steps: [{ step: 'Ship', status: 'pending' }] };
    const context = contextWith(
      {
        messages: [system],
        iteration: 1,
        batch: batchOf(
          [
            toolCall('a'),
            toolCall('p', { name: 'update_plan', updatesPlan: true, args: plan }),
            toolCall('c'),
          ],
          { results: { a: toolResult('a') }, started: ['a', 'p', 'c'], runners: { 'tools:p': ['p', 'c'] } },
        ),
      },
      { limits: { maxConsecutiveErrors: 2 } },
    );
    const probe = actionProbe('closeBatchWithRunner', context);
    const next = probe.send({
      type: 'xstate.done.actor.tools:p',
      actorId: 'tools:p',
      output: [
        toolResult('c', 'c failed', { isError: true }),
        toolResult('p', 'Plan updated.', { name: 'update_plan' }),
      ],
    });
    expect(probe.stopped).toEqual(['tools:p']);
    expect(next.messages.slice(1, 4)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'a ok' },
      { role: 'tool', tool_call_id: 'p', content: 'Plan updated.' },
      { role: 'tool', tool_call_id: 'c', content: 'c failed' },
    ]);
    expect(next.messages[4]!.role).toBe('system');
    expect(next.batch.calls).toEqual([]);
    expect(next.plan).toEqual(plan);
    expect(next.consecutiveErrors).toBe(1);
    expect(probe.emitted.map((e) => [e.type, e.toolCallId ?? e.limit])).toEqual([
      ['tool_call_end', 'c'],
      ['tool_call_end', 'p'],
      ['plan_updated', undefined],
      ['limit_warning', 'consecutive_errors'],
      // The same update enters Thinking (no entry action of its own: one context copy fewer a call).
      ['state_change', undefined],
      ['iteration', undefined],
    ]);
    expect(probe.emitted[2]!.plan).toEqual(plan);
  });

  it('closeBatchWithRunner: no plan_updated when no result sets a plan', () => {
    const context = contextWith({
      batch: batchOf([toolCall('a')], { started: ['a'], runners: { 'tools:a': ['a'] } }),
    });
    const probe = actionProbe('closeBatchWithRunner', context);
    const next = probe.send({
      type: 'xstate.done.actor.tools:a',
      actorId: 'tools:a',
      output: [toolResult('a')],
    });
    expect(next.messages).toEqual([{ role: 'tool', tool_call_id: 'a', content: 'a ok' }]);
    expect(next.plan).toBeNull();
    expect(probe.emitted.map((e) => e.type)).toEqual(['tool_call_end', 'state_change', 'iteration']);
    expect(probe.emitted[1]!.state).toBe('Thinking');
  });
});

describe('stopRunners', () => {
  it('stops every runner of the batch', () => {
    const context = contextWith({
      batch: batchOf([toolCall('a'), toolCall('b')], {
        started: ['a', 'b'],
        runners: { 'tools:a': ['a'], 'tools:b': ['b'] },
      }),
    });
    const probe = actionProbe('stopRunners', context);
    expect(probe.children().sort()).toEqual(['tools:a', 'tools:b']);
    probe.send({ type: 'INTERRUPT' });
    expect(probe.stopped.sort()).toEqual(['tools:a', 'tools:b']);
    expect(probe.children()).toEqual([]);
  });
});
