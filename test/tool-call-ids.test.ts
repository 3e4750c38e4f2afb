/**
 * Every call keeps an id that is unique in the whole conversation, whatever ids the model sent: the
 * same id twice in one message, an id of an earlier message, an empty id, none at all. The model's
 * own id stays where it is unique; the ids made instead are deterministic (a retry and a second run
 * of the same conversation get the same ones) and are fixed before a call starts early.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../src/index.js';
import { callIdIndex, callIdsIn, settleCallId } from '../src/llm/tool-call-ids.js';
import type { ScriptedTurn } from '../src/testing/index.js';
import { agentOn, assertToolCallsAnswered } from './support/harness.js';
import { echoTool } from './support/recording-tools.js';

const echo = (text: string, id?: string | null) => ({
  ...(id === undefined ? {} : { id }),
  name: 'echo',
  arguments: { text },
});

/** The ids of every call of every assistant message, in order. */
function callIds(messages: readonly Message[]): string[] {
  return messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
}

async function run(turns: ScriptedTurn[], stream: boolean) {
  const executions: string[] = [];
  const { agent, server, events } = await agentOn({ turns }, { tools: [echoTool(executions)], stream });
  const result = await agent.send('go');
  return { agent, server, events, executions, result };
}

describe.each([true, false])('tool call ids (stream=%s)', (stream) => {
  it('gives the second of two calls with the same id an id of its own', async () => {
    const { agent, executions, result } = await run(
      [
        { toolCalls: [echo('a', 'dup'), echo('b', 'dup')] },
        { content: 'done' },
        { content: 'still talking' },
      ],
      stream,
    );
    expect(result.response).toBe('done');
    expect(executions.sort()).toEqual(['a', 'b']);
    const ids = callIds(result.messages);
    expect(ids[0]).toBe('dup');
    expect(new Set(ids).size).toBe(2);
    assertToolCallsAnswered(result.messages);
    // The session is not stuck: the next request is accepted.
    expect((await agent.send('and now?')).response).toBe('still talking');
  });

  it('replaces an id an earlier message of the conversation already used', async () => {
    const { executions, result } = await run(
      [{ toolCalls: [echo('a', 'call_x')] }, { toolCalls: [echo('b', 'call_x')] }, { content: 'done' }],
      stream,
    );
    expect(result.response).toBe('done');
    expect(executions).toEqual(['a', 'b']);
    const ids = callIds(result.messages);
    expect(ids[0]).toBe('call_x');
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    assertToolCallsAnswered(result.messages);
  });

  it.each([
    ['an empty id', ''],
    ['no id', null],
  ])('makes deterministic ids for calls with %s', async (_label, id) => {
    const turns: ScriptedTurn[] = [{ toolCalls: [echo('a', id), echo('b', id)] }, { content: 'done' }];
    const first = await run(turns, stream);
    expect(first.result.response).toBe('done');
    expect(first.executions.sort()).toEqual(['a', 'b']);
    const ids = callIds(first.result.messages);
    expect(ids).toHaveLength(2);
    expect(ids.every((i) => i.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(2);
    assertToolCallsAnswered(first.result.messages);
    // The tools started under the ids the conversation keeps (the first may have started early).
    const started = first.events.flatMap((e) => (e.type === 'tool_call_start' ? [e.toolCallId] : []));
    expect(started.sort()).toEqual([...ids].sort());
    // The same conversation again: the same ids.
    const second = await run(turns, stream);
    expect(callIds(second.result.messages)).toEqual(ids);
  });

  it('keeps the ids it made when a stream cut mid-call is retried', async () => {
    const clean = await run([{ toolCalls: [echo('a', null), echo('b', '')] }, { content: 'done' }], stream);
    const retried = await run(
      [
        { toolCalls: [echo('a', null), echo('b', '')], fault: 'cut-mid-tool-call', times: 1 },
        { content: 'done' },
      ],
      stream,
    );
    expect(retried.result.response).toBe('done');
    expect(retried.server.requestCount).toBe(3);
    expect(callIds(retried.result.messages)).toEqual(callIds(clean.result.messages));
  });
});

describe('settleCallId', () => {
  const conversation: Message[] = [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'call_m3_0', type: 'function', function: { name: 'f', arguments: '{}' } },
      ],
    },
  ];
  const used = callIdsIn(conversation);
  const taken = (earlier: string[]) => (id: string) => used.has(id) || earlier.includes(id);

  it("keeps the model's id when the conversation and the message have not used it", () => {
    expect(settleCallId('call_b', 0, 'call_m3', taken([]))).toBe('call_b');
  });

  it('makes an id from the stem and the call index for a missing, empty or used id', () => {
    expect(settleCallId(undefined, 1, 'call_m3', taken([]))).toBe('call_m3_1');
    expect(settleCallId('', 2, 'call_m3', taken([]))).toBe('call_m3_2');
    expect(settleCallId('call_a', 1, 'call_m3', taken([]))).toBe('call_m3_1');
    expect(settleCallId('dup', 1, 'call_m3', taken(['dup']))).toBe('call_m3_1');
  });

  it('skips made ids that are taken too, deterministically', () => {
    expect(settleCallId('call_a', 0, 'call_m3', taken([]))).toBe('call_m3_0_2');
    expect(settleCallId('', 0, 'call_m3', taken(['call_m3_0_2']))).toBe('call_m3_0_3');
  });
});

describe('callIdIndex', () => {
  const reply = (id: string): Message => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: '{}' } }],
  });
  /** A message that counts how often its role is read (a scan reads every message's role). */
  const counted = (message: Message, reads: { n: number }): Message => {
    const { role, ...rest } = message;
    const get = () => {
      reads.n++;
      return role;
    };
    return Object.defineProperty(rest, 'role', { enumerable: true, get }) as Message;
  };

  it('reads only the messages appended since its last lookup, and answers as a scan would', () => {
    const reads = { n: 0 };
    const index = callIdIndex();
    const first = [counted({ role: 'user', content: 'go' }, reads), counted(reply('a'), reads)];
    expect(index.lookup(first).has('a')).toBe(true);
    expect(reads.n).toBe(2);
    const second = first.concat(
      counted({ role: 'tool', tool_call_id: 'a', content: 'ok' }, reads),
      reply('b'),
    );
    const lookup = index.lookup(second);
    expect([lookup.has('a'), lookup.has('b'), lookup.has('c')]).toEqual([true, true, false]);
    expect(reads.n).toBe(3);
  });

  it("never changes an earlier lookup's answers, and indexes another conversation anew", () => {
    const index = callIdIndex();
    const start: Message[] = [{ role: 'user', content: 'go' }, reply('a')];
    const earlier = index.lookup(start);
    expect(earlier.has('b')).toBe(false);
    const longer = start.concat(reply('b'));
    expect(index.lookup(longer).has('b')).toBe(true);
    expect(earlier.has('b')).toBe(false);
    // A branch from `start` that appended something else: its own ids only.
    const branch = start.concat(reply('c'));
    const lookup = index.lookup(branch);
    expect([lookup.has('a'), lookup.has('b'), lookup.has('c')]).toEqual([true, false, true]);
    const other = index.lookup([{ role: 'user', content: 'hi' }, reply('z')]);
    expect([other.has('a'), other.has('z')]).toEqual([false, true]);
  });

  it('indexes anew a conversation whose first message changed, though later messages are the same', () => {
    const index = callIdIndex();
    const kept = reply('b');
    expect(index.lookup([reply('a'), kept]).has('a')).toBe(true);
    // The first message replaced (a compaction, a restore), the rest the same objects.
    const lookup = index.lookup([reply('x'), kept]);
    expect([lookup.has('a'), lookup.has('x'), lookup.has('b')]).toEqual([false, true, true]);
  });

  it('reads assistant answers without calls, and keeps where an id first appeared', () => {
    const index = callIdIndex();
    const start: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'hello' },
      reply('a'),
    ];
    const earlier = index.lookup(start);
    expect(earlier.has('a')).toBe(true);
    // A later message with the same id (a transcript from elsewhere) does not move it.
    expect(index.lookup(start.concat({ role: 'assistant', content: 'again' }, reply('a'))).has('a')).toBe(
      true,
    );
    expect(earlier.has('a')).toBe(true);
  });
});
