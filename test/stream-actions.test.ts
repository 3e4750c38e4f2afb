import { describe, expect, it } from 'vitest';
import type { LlmCallOutput } from '../src/machines/actors/call-llm.js';
import { actionProbe, batchOf, contextWith, toolCall, toolResult } from './support/action-probe.js';
import { answerOutput, callsOutput } from './support/llm-outputs.js';

// The actions of a model call (src/machines/actions/stream-actions.ts), each run on its own against a
// context the test sets: streamed text, retries, context reports, calls started early, the reply.

const system = { role: 'system' as const, content: 'Sys.' };
const deploy = (id: string) => toolCall(id, { name: 'deploy', needsApproval: true });
const usage = (costUsd: number) => ({ promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd });
const done = (output: LlmCallOutput) => ({ type: 'xstate.done.actor.llm', output });

describe('the stream', () => {
  it('streamDelta appends the text and passes it on, to those who listen', () => {
    const probe = actionProbe('streamDelta', contextWith({ partial: 'Hel', turn: 1, iteration: 1 }));
    expect(probe.send({ type: 'LLM.DELTA', delta: 'lo' }).partial).toBe('Hello');
    expect(probe.emitted).toEqual([
      { type: 'content_chunk', sessionId: 's1', turn: 1, iteration: 1, delta: 'lo' },
    ]);
    const chunks = actionProbe('streamDelta', contextWith(), { hears: (t) => t === 'content_chunk' });
    chunks.send({ type: 'LLM.DELTA', delta: 'x' });
    expect(chunks.emitted.map((e) => e.delta)).toEqual(['x']);
    const quiet = actionProbe('streamDelta', contextWith({ partial: 'a' }), { hears: () => false });
    expect(quiet.send({ type: 'LLM.DELTA', delta: 'b' }).partial).toBe('ab');
    expect(quiet.emitted).toEqual([]);
    expect(quiet.send({ type: 'LLM.RESET', delta: 'c' }).partial).toBe('ab');
  });

  it('streamReset drops the text and the calls started from it, and says why', () => {
    const context = contextWith({
      partial: 'half',
      batch: batchOf([toolCall('a')], { started: ['a'], runners: { 'tools:a': ['a'] } }),
    });
    const probe = actionProbe('streamReset', context);
    const next = probe.send({ type: 'LLM.RESET', reason: 'connection reset', attempt: 2 });
    expect(probe.stopped).toEqual(['tools:a']);
    expect(next.partial).toBe('');
    expect(next.batch).toEqual(batchOf([]));
    expect(probe.emitted).toEqual([
      expect.objectContaining({ type: 'stream_reset', reason: 'connection reset', attempt: 2 }),
    ]);
    const other = actionProbe('streamReset', context);
    expect(other.send({ type: 'LLM.DELTA', delta: 'x' })).toEqual(context);
    expect(other.stopped).toEqual([]);
  });

  it('retryNotice passes the retry on without the event’s type', () => {
    const probe = actionProbe('retryNotice', contextWith({ turn: 3 }));
    const retry = {
      attempt: 1,
      maxAttempts: 4,
      delayMs: 500,
      kind: 'rate_limit',
      status: 429,
      message: 'slow down',
    };
    probe.send({ type: 'LLM.RETRY', ...retry });
    probe.send({ type: 'LLM.DELTA', delta: 'x' });
    expect(probe.emitted).toEqual([{ type: 'retry', sessionId: 's1', turn: 3, iteration: 0, ...retry }]);
  });

  it('contextReport: a warning names the tokens used and the most; a prune is passed on', () => {
    const probe = actionProbe('contextReport', contextWith());
    const pruned = { removedTokens: 100, prunedMessages: 2, tokensBefore: 900, tokensAfter: 800 };
    probe.send({ type: 'LLM.CONTEXT', warning: { used: 900, max: 1000 }, pruned });
    expect(probe.emitted).toEqual([
      expect.objectContaining({ type: 'limit_warning', limit: 'context_window', used: 900, max: 1000 }),
      expect.objectContaining({ type: 'context_pruned', ...pruned }),
    ]);
    expect(probe.emitted[0]!.message).toMatch(/900 of 1000/);
    probe.emitted.length = 0;
    probe.send({ type: 'LLM.CONTEXT' });
    probe.send({ type: 'LLM.DELTA', warning: { used: 1, max: 2 }, pruned });
    expect(probe.emitted).toEqual([]);
  });
});

describe('startEarly', () => {
  const ready = (call = toolCall('a')) => ({ type: 'LLM.TOOL_CALL_READY', call });

  it('starts a call whose arguments are complete in a runner of its own, kept in the batch', () => {
    const context = contextWith({ turn: 1, iteration: 2, deadline: 9_000 });
    const probe = actionProbe('startEarly', context);
    const next = probe.send(ready());
    expect(probe.spawned).toEqual([
      {
        id: 'tools:0',
        input: { sessionId: 's1', turn: 1, iteration: 2, calls: [toolCall('a')], deadline: 9_000 },
      },
    ]);
    expect(next.batch).toEqual(batchOf([toolCall('a')], { started: ['a'], runners: { 'tools:0': ['a'] } }));
    expect(probe.emitted).toEqual([
      {
        type: 'tool_call_start',
        sessionId: 's1',
        turn: 1,
        iteration: 2,
        toolCallId: 'a',
        name: 'lookup',
        args: { id: 'a' },
      },
    ]);
  });

  it('leaves a call that ends the turn, waits for approval, or started already; starts none in a final call', () => {
    const skipped: [string, object, ReturnType<typeof ready>][] = [
      ['final call', { finalReason: 'timeout' }, ready()],
      ['loop-breaking', {}, ready(toolCall('q', { loopBreaking: 'question' }))],
      ['needs approval', {}, ready(deploy('d'))],
      ['started', { batch: batchOf([toolCall('a')], { started: ['a'] }) }, ready()],
      ['another event', {}, { ...ready(), type: 'LLM.DELTA' }],
    ];
    for (const [why, fields, ev] of skipped) {
      const context = contextWith(fields);
      const probe = actionProbe('startEarly', context);
      expect(probe.send(ev), why).toEqual(context);
      expect(probe.spawned, why).toEqual([]);
      expect(probe.emitted, why).toEqual([]);
    }
    const allowed = actionProbe('startEarly', contextWith({ alwaysAllowed: ['deploy'] }));
    allowed.send(ready(deploy('d')));
    expect(allowed.spawned.map((s) => s.id)).toEqual(['tools:0']);
  });

  it('names the runner with the smallest number no running runner holds, whatever the call id', () => {
    const running = batchOf([toolCall('a'), toolCall('c')], {
      started: ['a', 'c'],
      runners: { 'tools:0': ['a'], 'tools:2': ['c'] },
    });
    const probe = actionProbe('startEarly', contextWith({ batch: running }));
    const next = probe.send(ready(toolCall('call_9f3k2')));
    expect(probe.spawned.map((s) => s.id)).toEqual(['tools:1']);
    expect(next.batch.runners).toEqual({ 'tools:0': ['a'], 'tools:2': ['c'], 'tools:1': ['call_9f3k2'] });
    expect(probe.children().sort()).toEqual(['tools:0', 'tools:1', 'tools:2']);
  });
});

describe('recordAssistant', () => {
  it('appends the reply, takes its calls as the batch, counts its usage and reports it', () => {
    const context = contextWith(
      { messages: [system], partial: 'streamed', turn: 1, iteration: 1, alwaysAllowed: [] },
      { limits: { maxCostUsd: 1 } },
    );
    const output = callsOutput([toolCall('a'), deploy('b')], {
      usage: usage(0.85),
      reasoning: 'Let me look.',
      record: { wire: 'chat', attempt: 1 } as never,
    });
    const probe = actionProbe('recordAssistant', context);
    const next = probe.send(done(output));
    expect(next.messages).toEqual([system, output.message]);
    expect(next.batch).toEqual(batchOf(output.calls, { pending: ['b'] }));
    expect(next).toMatchObject({ response: '', partial: '' });
    expect(next.turnUsage).toEqual(usage(0.85));
    expect(next.totalUsage).toEqual(usage(0.85));
    expect(probe.spawned).toEqual([]);
    expect(probe.emitted.map((e) => e.type)).toEqual(['model_call', 'thinking', 'limit_warning', 'usage']);
    expect(probe.emitted[0]).toMatchObject({
      wire: 'chat',
      attempt: 1,
      finishReason: 'tool_calls',
      usage: usage(0.85),
    });
    expect(probe.emitted[1]).toMatchObject({ content: 'Let me look.' });
    expect(probe.emitted[2]).toMatchObject({ limit: 'cost_budget', used: 0.85, max: 1 });
    expect(probe.emitted[3]).toMatchObject({
      usage: usage(0.85),
      turnUsage: usage(0.85),
      totalUsage: usage(0.85),
    });
  });

  it('reports no model_call, usage or thinking it has none of, or nobody listens to', () => {
    const plain = actionProbe('recordAssistant', contextWith());
    const next = plain.send(done(answerOutput('Hi.')));
    expect(next.response).toBe('Hi.');
    expect(plain.emitted).toEqual([]);
    const quiet = actionProbe('recordAssistant', contextWith(), { hears: (t) => t === 'thinking' });
    quiet.send(
      done({ ...answerOutput('Hi.'), usage: usage(0), record: { wire: 'chat' } as never, reasoning: 'hm' }),
    );
    expect(quiet.emitted.map((e) => e.type)).toEqual(['thinking']);
    const counted = actionProbe('recordAssistant', contextWith(), {
      hears: (t) => t === 'model_call' || t === 'usage',
    });
    counted.send(done({ ...answerOutput('Hi.'), usage: usage(0), record: { wire: 'chat' } as never }));
    expect(counted.emitted.map((e) => e.type)).toEqual(['model_call', 'usage']);
  });

  it('the final no-tools call keeps the reply’s text only, and no calls', () => {
    const output = callsOutput([toolCall('a')]);
    const final = actionProbe(
      'recordAssistant',
      contextWith({ messages: [system], finalReason: 'max_iterations' }),
    );
    const next = final.send(done(output));
    expect(next.messages).toEqual([system, { role: 'assistant', content: '' }]);
    expect(next.batch.calls).toEqual([]);
    const text = actionProbe('recordAssistant', contextWith({ finalReason: 'timeout' })).send(
      done({ ...output, message: { ...output.message, content: 'What I have.' } }),
    );
    expect(text.messages).toEqual([{ role: 'assistant', content: 'What I have.' }]);
    expect(text.response).toBe('What I have.');
  });
});

describe('receiveReply', () => {
  it('hands the calls that need no approval to one runner, in the same update', () => {
    const context = contextWith({ messages: [system], turn: 1, iteration: 1, deadline: 5_000 });
    const output = callsOutput([toolCall('a'), deploy('b'), toolCall('c')]);
    const probe = actionProbe('receiveReply', context);
    const next = probe.send(done(output));
    expect(probe.spawned).toEqual([
      {
        id: 'tools:0',
        input: {
          sessionId: 's1',
          turn: 1,
          iteration: 1,
          calls: [toolCall('a'), toolCall('c')],
          deadline: 5_000,
        },
      },
    ]);
    expect(next.batch).toEqual(
      batchOf(output.calls, { pending: ['b'], started: ['a', 'c'], runners: { 'tools:0': ['a', 'c'] } }),
    );
    expect(next.messages).toEqual([system, output.message]);
    expect(next.lastState).toBe(context.lastState);
    expect(probe.emitted.map((e) => [e.type, e.toolCallId])).toEqual([
      ['tool_call_start', 'a'],
      ['tool_call_start', 'c'],
    ]);
  });

  it('with enters: records the state entered in the same update, and announces it first', () => {
    const context = contextWith({
      lastState: 'Thinking',
      batch: batchOf([toolCall('a')], { started: ['a'], results: { a: toolResult('a') }, runners: {} }),
    });
    const output = callsOutput([toolCall('a'), toolCall('b')], { usage: usage(0) });
    const probe = actionProbe('receiveReply', context, { params: { enters: 'ExecutingTool' } });
    const next = probe.send(done(output));
    // The call started early keeps its result and is not started again.
    expect(probe.spawned.map((s) => s.input.calls.map((c) => c.id))).toEqual([['b']]);
    expect(next.batch.results).toEqual({ a: toolResult('a') });
    expect(next.lastState).toBe('ExecutingTool');
    expect(probe.emitted.map((e) => e.type)).toEqual(['state_change', 'usage', 'tool_call_start']);
    expect(probe.emitted[0]).toMatchObject({ state: 'ExecutingTool', previous: 'Thinking' });
  });

  it('starts no runner when every call waits for approval or started already', () => {
    const context = contextWith({
      batch: batchOf([toolCall('a')], { started: ['a'], runners: { 'tools:a': ['a'] } }),
    });
    const probe = actionProbe('receiveReply', context);
    const next = probe.send(done(callsOutput([toolCall('a'), deploy('b')])));
    expect(probe.spawned).toEqual([]);
    expect(next.batch.runners).toEqual({ 'tools:a': ['a'] });
    expect(next.batch.pending).toEqual(['b']);
    expect(probe.emitted).toEqual([]);
  });
});
