import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { agentMachine, bindAgentEffects } from '../src/index.js';
import type { Usage } from '../src/llm/message.js';
import { type AgentContext, initialContext } from '../src/machines/agent-context.js';
import { EMPTY_BATCH, startRun } from '../src/machines/tool-batch.js';
import {
  addUsage,
  event,
  hears,
  meta,
  runInput,
  startEvents,
  unfinishedStream,
} from '../src/machines/turn-messages.js';
import type { ToolCallRequest } from '../src/tools/tool-call.js';

// The helpers the machine's actions build events and messages with: what an event carries, who hears
// it, what a model call cut short leaves in the conversation, and how usage adds up.

const call = (id: string): ToolCallRequest => ({
  id,
  name: 'lookup',
  argsText: `{"id":"${id}"}`,
  args: { id },
  needsApproval: false,
});

function context(fields: Partial<AgentContext> = {}): AgentContext {
  return { ...initialContext({ sessionId: 'sess-1' }), turn: 3, iteration: 2, ...fields };
}

describe('meta and event', () => {
  it('stamp every event with the session, turn, iteration and the time it was built', () => {
    const before = Date.now();
    const m = meta(context());
    expect(m).toMatchObject({ sessionId: 'sess-1', turn: 3, iteration: 2 });
    expect(m.timestamp).toBeGreaterThanOrEqual(before);
    expect(m.timestamp).toBeLessThanOrEqual(Date.now());
    expect(event(context(), 'content_chunk', { delta: 'hi' })).toMatchObject({
      type: 'content_chunk',
      sessionId: 'sess-1',
      turn: 3,
      iteration: 2,
      delta: 'hi',
    });
  });
});

describe('hears', () => {
  it('asks the bound effects; an actor without them, or effects without `hears`, hears everything', () => {
    const unbound = createActor(agentMachine, { input: {} });
    expect(hears(unbound, 'tool_call_start')).toBe(true);
    const plain = createActor(agentMachine, { input: {} });
    bindAgentEffects(plain, { callLlm: async () => never(), runTools: async () => [] });
    expect(hears(plain, 'tool_call_start')).toBe(true);
    const picky = createActor(agentMachine, { input: {} });
    bindAgentEffects(picky, {
      callLlm: async () => never(),
      runTools: async () => [],
      hears: (type) => type === 'turn_end',
    });
    expect(hears(picky, 'turn_end')).toBe(true);
    expect(hears(picky, 'tool_call_start')).toBe(false);
    // Nobody hears tool_call_start: none is built.
    expect(startEvents(picky, context(), [call('a')])).toEqual([]);
    const starts = createActor(agentMachine, { input: {} });
    bindAgentEffects(starts, {
      callLlm: async () => never(),
      runTools: async () => [],
      hears: (type) => type === 'tool_call_start',
    });
    expect(startEvents(starts, context(), [call('a')])).toHaveLength(1);
    expect(startEvents(unbound, context(), [call('a'), call('b')])).toEqual([
      expect.objectContaining({
        type: 'tool_call_start',
        toolCallId: 'a',
        name: 'lookup',
        args: { id: 'a' },
      }),
      expect.objectContaining({ type: 'tool_call_start', toolCallId: 'b', turn: 3 }),
    ]);
  });
});

function never(): never {
  throw new Error('not called');
}

describe('unfinishedStream', () => {
  it('keeps the text streamed so far, marked, as an assistant message', () => {
    const messages = unfinishedStream(context({ lastState: 'Thinking', partial: 'Half an' }), '[cut]');
    expect(messages).toEqual([{ role: 'assistant', content: 'Half an [cut]' }]);
  });

  it('keeps the calls started from the stream with their raw arguments, with or without text', () => {
    const batch = startRun(EMPTY_BATCH, [call('a'), call('b')], 'tools:a');
    const [message] = unfinishedStream(context({ lastState: 'Thinking', batch }), '[cut]');
    expect(message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'lookup', arguments: '{"id":"a"}' } },
        { id: 'b', type: 'function', function: { name: 'lookup', arguments: '{"id":"b"}' } },
      ],
    });
    const [withText] = unfinishedStream(context({ lastState: 'Thinking', batch, partial: 'Let me' }), '…');
    expect(withText).toMatchObject({ content: 'Let me …', tool_calls: [{ id: 'a' }, { id: 'b' }] });
  });

  it('is empty outside Thinking, and when nothing was streamed', () => {
    const batch = startRun(EMPTY_BATCH, [call('a')], 'tools:a');
    expect(unfinishedStream(context({ lastState: 'ExecutingTool', partial: 'x', batch }), 'm')).toEqual([]);
    expect(unfinishedStream(context({ lastState: 'Thinking' }), 'm')).toEqual([]);
  });
});

describe('runInput', () => {
  it('hands a runner the session, turn, iteration, its calls and the turn’s deadline', () => {
    expect(runInput(context({ deadline: 12345 }), [call('a')])).toEqual({
      sessionId: 'sess-1',
      turn: 3,
      iteration: 2,
      calls: [call('a')],
      deadline: 12345,
    });
  });
});

describe('addUsage', () => {
  const u = (p: number, c: number, extra: Partial<Usage> = {}): Usage => ({
    promptTokens: p,
    completionTokens: c,
    totalTokens: p + c,
    ...extra,
  });

  it('adds tokens, cached tokens and costs', () => {
    expect(
      addUsage(
        u(10, 5, { cachedPromptTokens: 4, costUsd: 0.5 }),
        u(1, 2, { cachedPromptTokens: 1, costUsd: 0.25 }),
      ),
    ).toEqual({
      promptTokens: 11,
      completionTokens: 7,
      totalTokens: 18,
      cachedPromptTokens: 5,
      costUsd: 0.75,
    });
    expect(addUsage(u(1, 1, { cachedPromptTokens: 3 }), u(1, 1))).toMatchObject({ cachedPromptTokens: 3 });
    expect(addUsage(u(1, 1), u(1, 1, { cachedPromptTokens: 2 }))).toMatchObject({ cachedPromptTokens: 2 });
  });

  it('leaves cached tokens out when there are none, and the cost unknown when either is unknown', () => {
    expect(addUsage(u(1, 1, { costUsd: 1 }), u(1, 1, { costUsd: 2 }))).not.toHaveProperty(
      'cachedPromptTokens',
    );
    expect(addUsage(u(1, 1, { costUsd: 1 }), u(1, 1))).not.toHaveProperty('costUsd');
    expect(addUsage(u(1, 1), u(1, 1, { costUsd: 1 }))).not.toHaveProperty('costUsd');
    expect(addUsage(u(1, 1, { costUsd: 0 }), u(1, 1, { costUsd: 0 }))).toMatchObject({ costUsd: 0 });
  });
});
