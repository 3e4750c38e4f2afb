import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/defaults.js';
import { actionProbe, batchOf, contextWith, toolCall, toolResult } from './support/action-probe.js';
import { callsOutput } from './support/llm-outputs.js';

// The actions that start, continue and end a turn (src/machines/actions/turn-actions.ts), each run on
// its own against a context the test sets: what the context holds after it and what it emits.

const system = { role: 'system' as const, content: 'Sys.' };

describe('startTurn', () => {
  it('appends the user message, starts the next turn with its deadline and announces it', () => {
    const context = contextWith(
      { messages: [system], turn: 2, iteration: 4, response: 'old', terminateReason: 'completed' },
      { limits: { timeoutMs: 5_000 } },
    );
    const probe = actionProbe('startTurn', context);
    const next = probe.send({ type: 'USER_MESSAGE', text: 'hello', at: 1_000 });
    expect(next.messages).toEqual([system, { role: 'user', content: 'hello' }]);
    expect(next).toMatchObject({
      turn: 3,
      iteration: 0,
      deadline: 6_000,
      response: '',
      terminateReason: null,
    });
    expect(probe.emitted).toEqual([
      { type: 'turn_start', sessionId: 's1', turn: 3, iteration: 0, input: 'hello' },
    ]);
  });

  it('does nothing on another event', () => {
    const context = contextWith({ turn: 2 });
    const probe = actionProbe('startTurn', context);
    expect(probe.send({ type: 'RESUME', at: 1 })).toEqual(context);
    expect(probe.emitted).toEqual([]);
  });
});

describe('continueTurn', () => {
  it('clears the end of the turn and starts the deadline again from the event, or keeps it', () => {
    const ended = contextWith(
      {
        terminateReason: 'error',
        error: { message: 'x' },
        finalReason: 'timeout',
        response: 'r',
        deadline: 9,
      },
      { limits: { timeoutMs: 100 } },
    );
    const resumed = actionProbe('continueTurn', ended).send({ type: 'RESUME', at: 1_000 });
    expect(resumed).toMatchObject({
      terminateReason: null,
      error: null,
      finalReason: null,
      response: '',
      deadline: 1_100,
    });
    const kept = actionProbe('continueTurn', ended).send({ type: 'INTERRUPT' });
    expect(kept.deadline).toBe(9);
  });
});

describe('enterThinking', () => {
  it('counts the model call, records the state and announces both', () => {
    const context = contextWith({
      messages: [system],
      turn: 1,
      iteration: 0,
      lastState: 'AwaitingInput',
      partial: 'x',
    });
    const probe = actionProbe('enterThinking', context);
    const next = probe.send({ type: 'GO' });
    expect(next).toMatchObject({ iteration: 1, lastState: 'Thinking', partial: '', warned: false });
    // No note: the same array, not a copy.
    expect(next.messages).toBe(context.messages);
    expect(probe.emitted).toEqual([
      {
        type: 'state_change',
        sessionId: 's1',
        turn: 1,
        iteration: 0,
        state: 'Thinking',
        previous: 'AwaitingInput',
      },
      { type: 'iteration', sessionId: 's1', turn: 1, iteration: 1, maxIterations: context.maxIterations },
    ]);
  });

  it('builds no state_change or iteration event nobody listens to', () => {
    const probe = actionProbe('enterThinking', contextWith({ iteration: 2 }), { hears: () => false });
    expect(probe.send({ type: 'GO' })).toMatchObject({ iteration: 3, lastState: 'Thinking' });
    expect(probe.emitted).toEqual([]);
    const counting = actionProbe('enterThinking', contextWith({ iteration: 2 }), {
      hears: (t) => t === 'iteration',
    });
    counting.send({ type: 'GO' });
    expect(counting.emitted.map((e) => [e.type, e.iteration])).toEqual([['iteration', 3]]);
  });

  it('near the iteration limit, warns the model once with a note and a limit_warning', () => {
    const context = contextWith({ messages: [system], iteration: 8, maxIterations: 10 });
    const probe = actionProbe('enterThinking', context, { hears: (t) => t === 'limit_warning' });
    const next = probe.send({ type: 'GO' });
    expect(next.warned).toBe(true);
    expect(next.iteration).toBe(9);
    expect(next.messages).toHaveLength(2);
    expect(next.messages[1]).toMatchObject({ role: 'system' });
    expect(String(next.messages[1]!.content)).toContain('8 of 10');
    expect(probe.emitted).toEqual([
      expect.objectContaining({
        type: 'limit_warning',
        limit: 'max_iterations',
        used: 8,
        max: 10,
        iteration: 8,
      }),
    ]);
    // Warned already: no second warning, and `warned` stays set.
    const again = actionProbe('enterThinking', { ...next }, { hears: (t) => t === 'limit_warning' });
    const after = again.send({ type: 'GO' });
    expect(after.warned).toBe(true);
    expect(after.messages).toHaveLength(2);
    expect(again.emitted).toEqual([]);
  });

  it('tells the final call why tools are off', () => {
    const context = contextWith({ messages: [system], iteration: 3, finalReason: 'token_budget' });
    const next = actionProbe('enterThinking', context).send({ type: 'GO' });
    expect(next.messages).toHaveLength(2);
    expect(next.messages[1]!.role).toBe('system');
    expect(String(next.messages[1]!.content)).toContain('token budget');
    expect(next.warned).toBe(false);
  });

  it('back from Compacting: the call was counted, only the state and the stream are reset', () => {
    const context = contextWith({
      messages: [system],
      iteration: 8,
      maxIterations: 10,
      lastState: 'Compacting',
      partial: 'p',
    });
    const probe = actionProbe('enterThinking', context);
    const next = probe.send({ type: 'GO' });
    expect(next).toMatchObject({ iteration: 8, lastState: 'Thinking', partial: '', warned: false });
    expect(next.messages).toBe(context.messages);
    expect(probe.emitted.map((e) => e.type)).toEqual(['state_change']);
  });
});

describe('the end of a turn', () => {
  const breakerBatch = (loopBreaking: 'question' | 'completed') =>
    batchOf([toolCall('a'), toolCall('q', { name: 'ask', loopBreaking })], {
      results: { q: toolResult('q', 'Which file?'), a: toolResult('a') },
      started: ['a', 'q'],
    });

  it('finishWithBreaker: the results join in call order, the breaker’s result is the answer', () => {
    for (const [loopBreaking, reason] of [
      ['question', 'question'],
      ['completed', 'completed'],
    ] as const) {
      const next = actionProbe(
        'finishWithBreaker',
        contextWith({ messages: [system], batch: breakerBatch(loopBreaking) }),
      ).send({ type: 'GO' });
      expect(next.messages).toEqual([
        system,
        { role: 'tool', tool_call_id: 'a', content: 'a ok' },
        { role: 'tool', tool_call_id: 'q', content: 'Which file?' },
      ]);
      expect(next).toMatchObject({ response: 'Which file?', terminateReason: reason });
      expect(next.batch.calls).toEqual([]);
    }
  });

  it('finishWithAnswer: the final call’s reason, else completed', () => {
    expect(actionProbe('finishWithAnswer', contextWith()).send({ type: 'GO' }).terminateReason).toBe(
      'completed',
    );
    expect(
      actionProbe('finishWithAnswer', contextWith({ finalReason: 'timeout' })).send({ type: 'GO' })
        .terminateReason,
    ).toBe('timeout');
  });

  it('finishCutOff: every call answered without running (a result kept), the reason recorded', () => {
    const batch = batchOf([toolCall('a'), toolCall('b')], {
      results: { a: toolResult('a') },
      started: ['a'],
    });
    for (const finishReason of ['length', 'content_filter'] as const) {
      const output = callsOutput(batch.calls, { finishReason });
      const next = actionProbe(
        'finishCutOff',
        contextWith({ messages: [system], batch, partial: 'x', pausedAt: 5 }),
      ).send({
        type: 'xstate.done.actor.llm',
        output,
      });
      expect(next.messages.slice(0, 2)).toEqual([
        system,
        { role: 'tool', tool_call_id: 'a', content: 'a ok' },
      ]);
      expect(next.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'b' });
      expect(String(next.messages[2]!.content)).toContain(finishReason);
      expect(next).toMatchObject({
        terminateReason: finishReason,
        partial: '',
        pausedAt: null,
        finalReason: null,
      });
      expect(next.batch.calls).toEqual([]);
    }
    const budget = actionProbe('finishCutOff', contextWith({ batch })).send({
      type: 'xstate.done.actor.llm',
      output: callsOutput(batch.calls),
    });
    expect(budget.terminateReason).toBe('cost_budget');
    expect(String(budget.messages[1]!.content)).toContain('maxCostUsd');
    expect(String(budget.messages[1]!.content)).not.toContain('finish_reason');
  });

  const unfinished = () =>
    contextWith({
      messages: [system],
      lastState: 'Thinking',
      partial: 'Half an answer',
      batch: batchOf([toolCall('a'), toolCall('b')], {
        results: { a: toolResult('a') },
        started: ['a', 'b'],
        runners: {},
      }),
      finalReason: 'timeout',
      pausedAt: 3,
    });

  it('recordInterrupt: the streamed text marked, every call answered, the text kept as the response', () => {
    const next = actionProbe('recordInterrupt', unfinished()).send({ type: 'INTERRUPT' });
    expect(next.messages[1]).toMatchObject({ role: 'assistant', content: 'Half an answer [interrupted]' });
    expect(next.messages[1]).toMatchObject({
      tool_calls: [
        { id: 'a', function: { name: 'lookup' } },
        { id: 'b', function: { name: 'lookup' } },
      ],
    });
    expect(next.messages[2]).toEqual({ role: 'tool', tool_call_id: 'a', content: 'a ok' });
    expect(next.messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'b' });
    expect(String(next.messages[3]!.content)).toMatch(/^Error: interrupted/);
    expect(next.messages).toHaveLength(4);
    expect(next).toMatchObject({
      terminateReason: 'interrupted',
      response: 'Half an answer',
      partial: '',
      finalReason: null,
      pausedAt: null,
    });
    expect(next.batch.calls).toEqual([]);
  });

  it('recordError: the error’s message and string code, and the calls answered with it', () => {
    const coded = Object.assign(new Error('server down'), { code: 'server_error' });
    const next = actionProbe('recordError', unfinished()).send({
      type: 'xstate.error.actor.llm',
      error: coded,
    });
    expect(next.error).toEqual({ message: 'server down', code: 'server_error' });
    expect(next.terminateReason).toBe('error');
    expect(next.messages[1]).toMatchObject({ content: 'Half an answer [cut short by an error]' });
    expect(next.messages[3]).toMatchObject({ tool_call_id: 'b', content: 'Error: not run: server down' });
    expect(next.batch.calls).toEqual([]);
    const numbered = Object.assign(new Error('odd'), { code: 42 });
    expect(actionProbe('recordError', contextWith()).send({ type: 'E', error: numbered }).error).toEqual({
      message: 'odd',
    });
    expect(actionProbe('recordError', contextWith()).send({ type: 'E', error: 'plain text' }).error).toEqual({
      message: 'plain text',
    });
    expect(actionProbe('recordError', contextWith()).send({ type: 'E', error: null }).error).toEqual({
      message: 'null',
    });
  });

  it('recordWriteFailure: the write named as the error, the unanswered calls told they may have run', () => {
    const next = actionProbe('recordWriteFailure', unfinished()).send({
      type: 'WRITE_FAILED',
      message: 'disk full',
    });
    expect(next.error).toEqual({ message: 'disk full', code: 'session_store' });
    expect(next.terminateReason).toBe('error');
    expect(next.messages[1]).toMatchObject({
      content: 'Half an answer [cut short: the session could not be written]',
    });
    expect(String(next.messages[3]!.content)).toContain('(disk full)');
    expect(String(next.messages[3]!.content)).toContain('may or may not have taken effect');
    const other = actionProbe('recordWriteFailure', contextWith()).send({ type: 'OTHER' });
    expect(other.error).toEqual({ message: 'the session could not be written', code: 'session_store' });
  });

  it('emitTurnEnd and emitError report the context’s end', () => {
    const done = actionProbe(
      'emitTurnEnd',
      contextWith({ turn: 2, iteration: 3, terminateReason: 'question', response: 'Which?' }),
    );
    done.send({ type: 'GO' });
    expect(done.emitted).toEqual([
      {
        type: 'turn_end',
        sessionId: 's1',
        turn: 2,
        iteration: 3,
        terminateReason: 'question',
        response: 'Which?',
        iterations: 3,
      },
    ]);
    const unset = actionProbe('emitTurnEnd', contextWith());
    unset.send({ type: 'GO' });
    expect(unset.emitted[0]!.terminateReason).toBe('completed');
    const failed = actionProbe('emitError', contextWith({ error: { message: 'boom', code: 'x' } }));
    failed.send({ type: 'GO' });
    expect(failed.emitted).toEqual([
      { type: 'error', sessionId: 's1', turn: 0, iteration: 0, message: 'boom', code: 'x' },
    ]);
    const none = actionProbe('emitError', contextWith());
    none.send({ type: 'GO' });
    expect(none.emitted[0]).toMatchObject({ type: 'error', message: 'unknown error' });
  });
});

describe('extendLimit', () => {
  it('adds whole iterations, at least one, the default when unsaid, and clears the warning', () => {
    const context = contextWith({ maxIterations: 10, warned: true });
    const cases: [number | undefined, number][] = [
      [5, 15],
      [2.9, 12],
      [0, 11],
      [-3, 11],
      [undefined, 10 + DEFAULTS.extendIterationsBy],
    ];
    for (const [by, max] of cases) {
      const next = actionProbe('extendLimit', context).send({
        type: 'EXTEND_LIMIT',
        ...(by === undefined ? {} : { by }),
        at: 1,
      });
      expect(next, String(by)).toMatchObject({ maxIterations: max, warned: false });
    }
    expect(actionProbe('extendLimit', context).send({ type: 'RESUME', at: 1 })).toEqual(context);
  });
});

describe('timeoutFinalCall', () => {
  it('stops the runners, answers the cut stream’s calls and asks for a final answer past the deadline', () => {
    const context = contextWith(
      {
        messages: [system],
        lastState: 'Thinking',
        partial: 'Part',
        deadline: 10_000,
        batch: batchOf([toolCall('a')], { started: ['a'], runners: { r1: ['a'] } }),
      },
      { limits: { timeoutMs: 4_000 } },
    );
    const probe = actionProbe('timeoutFinalCall', context);
    expect(probe.children()).toEqual(['r1']);
    const next = probe.send({ type: 'xstate.error.actor.llm' });
    expect(probe.stopped).toEqual(['r1']);
    expect(probe.children()).toEqual([]);
    expect(next.messages[1]).toMatchObject({
      role: 'assistant',
      content: 'Part [cut short by the deadline]',
    });
    expect(next.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'a' });
    expect(String(next.messages[2]!.content)).toMatch(/^Error: stopped/);
    expect(next).toMatchObject({
      finalReason: 'timeout',
      deadline: 10_000 + DEFAULTS.finalAnswerGraceMs,
      partial: '',
    });
    expect(next.batch.calls).toEqual([]);
    // Thinking is entered again in the same update: the final call is counted and told why.
    expect(next.iteration).toBe(context.iteration + 1);
    expect(next.messages[3]).toMatchObject({ role: 'system', content: expect.stringMatching(/time limit/) });
    expect(next.messages).toHaveLength(4);
    expect(probe.emitted).toEqual([
      expect.objectContaining({ type: 'limit_warning', limit: 'timeout', used: 4_000, max: 4_000 }),
      expect.objectContaining({ type: 'state_change', state: 'Thinking', previous: 'Thinking' }),
      expect.objectContaining({ type: 'iteration', iteration: context.iteration + 1 }),
    ]);
    // The warning says what happened: a UI shows it as it is.
    expect(probe.emitted[0]!.message).toMatch(/deadline/);
  });

  it('without a deadline or time limit: no deadline after, and 0 in the warning', () => {
    const probe = actionProbe('timeoutFinalCall', contextWith({ deadline: null }));
    const next = probe.send({ type: 'GO' });
    expect(next.deadline).toBeNull();
    expect(probe.emitted[0]).toMatchObject({ used: 0, max: 0 });
    // Nothing cut short: only the final call's note.
    expect(next.messages).toEqual([expect.objectContaining({ role: 'system' })]);
  });
});
