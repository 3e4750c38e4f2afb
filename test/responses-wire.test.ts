/**
 * The Responses API wire through the real `openai` SDK: to the scripted server (which answers
 * `/v1/responses` from the same scenarios) and, for shapes it never sends, to a raw SSE/JSON server.
 * The core scenarios run on both wires in their own files (eachWire); this file holds what only this
 * wire has: reasoning items kept and sent back, incomplete responses, its error events, the stateless
 * fallback for models without reasoning.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentEvent, createAgent, defineTool, FileSessionStore, type Message } from '../src/index.js';
import { tokenCounterFor } from '../src/prompt/token-counter.js';
import { agentAt, agentOn, assertToolCallsAnswered, serve, testDir } from './support/harness.js';
import { type RawReply, startRawModelServer } from './support/raw-model-server.js';
import { readRecordFile } from './support/record-file.js';

const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

const thinking = (events: AgentEvent[]) =>
  events.filter((e) => e.type === 'thinking').map((e) => (e as { content: string }).content);

const reasoningTurn = {
  turns: [
    { reasoning: 'I should echo.', toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] },
    { content: 'done' },
    { content: 'second' },
  ],
};

describe('reasoning items', () => {
  it.each([true, false])('are kept on the assistant message and sent back (stream=%s)', async (stream) => {
    const { agent, server, events } = await agentOn(reasoningTurn, {
      tools: [echo],
      stream,
      api: 'responses',
    });
    const result = await agent.send('go');
    expect(result.response).toBe('done');
    expect(thinking(events)).toEqual(['I should echo.']);
    const assistant = result.messages.find((m) => m.role === 'assistant')!;
    expect(assistant).toMatchObject({
      reasoning_items: [
        { type: 'reasoning', summary: [{ text: 'I should echo.' }], encrypted_content: expect.any(String) },
      ],
    });
    // Stateless: the server keeps nothing, the next request brings the item back whole.
    expect(server.requests[1]).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    expect(server.requests[1]!.messages.find((m) => m.role === 'assistant')).toMatchObject({
      reasoning_items: (assistant as { reasoning_items: unknown[] }).reasoning_items,
    });
  });

  it('survive a fresh agent on the same file store', async () => {
    const server = await serve(reasoningTurn);
    const dir = await testDir('responses-store-');
    const options = { api: 'responses' as const, tools: [echo], session: 'kept' };
    const first = agentAt(server, { ...options, store: new FileSessionStore({ dir }) });
    expect((await first.send('go')).response).toBe('done');
    first.stop();
    const second = agentAt(server, { ...options, store: new FileSessionStore({ dir }) });
    await second.ready();
    expect((await second.send('again')).response).toBe('second');
    const sent = server.requests.at(-1)!.messages.find((m) => m.role === 'assistant');
    expect(sent).toMatchObject({
      reasoning_items: [
        { summary: [{ text: 'I should echo.' }], encrypted_content: expect.stringMatching(/^enc_/) },
      ],
    });
  });

  it('survive a fresh agent when the saved record refers to the transcript (a long session)', async () => {
    // Ten tool turns are 40 messages: past DEFAULTS.recordMessagesInline, so the record holds a
    // reference and the restore rebuilds every assistant message, reasoning items included, from the
    // transcript lines.
    const rounds = 10;
    const turns = Array.from({ length: rounds }, (_, i) => [
      { reasoning: `thought ${i}`, toolCalls: [{ name: 'echo', arguments: { text: `t${i}` } }] },
      { content: `answer ${i}` },
    ]).flat();
    const server = await serve({ turns: [...turns, { content: 'after restore' }] });
    const dir = await testDir('responses-long-');
    const options = { api: 'responses' as const, tools: [echo], session: 'long' };
    const first = agentAt(server, { ...options, store: new FileSessionStore({ dir }) });
    for (let i = 0; i < rounds; i++) expect((await first.send(`go ${i}`)).response).toBe(`answer ${i}`);
    const kept = first.messages.flatMap((m) => (m as { reasoning_items?: unknown[] }).reasoning_items ?? []);
    expect(kept).toHaveLength(rounds);
    await first.flush();
    first.stop();
    const { record } = await readRecordFile(path.join(dir, 'long'));
    expect(record.snapshot.context.messages).toMatchObject({ fromTranscript: rounds * 4 });
    const second = agentAt(server, { ...options, store: new FileSessionStore({ dir }) });
    await second.ready();
    expect((await second.send('again')).response).toBe('after restore');
    const sent = server.requests
      .at(-1)!
      .messages.flatMap((m) => (m as { reasoning_items?: unknown[] }).reasoning_items ?? []);
    expect(sent).toEqual(kept);
  });

  it('are never sent on the Chat Completions wire', async () => {
    const { agent, server } = await agentOn(reasoningTurn, { tools: [echo], api: 'responses' });
    await agent.send('go');
    const messages = agent.messages;
    const chat = agentAt(server, {
      tools: [echo],
      api: 'chat-completions',
      snapshot: agent.getPersistedSnapshot(),
    });
    await chat.ready();
    await chat.send('again');
    expect(JSON.stringify(server.requests.at(-1))).not.toContain('reasoning_items');
    expect(messages.some((m) => m.role === 'assistant' && m.reasoning_items)).toBe(true);
  });

  it('count in the context window, and pruning keeps each call with its output', async () => {
    const big = 'x'.repeat(4000);
    const turns = Array.from({ length: 8 }, (_, n) => ({
      reasoning: `step ${n} `.repeat(50),
      toolCalls: [{ name: 'echo', arguments: { text: `${n}${big}` } }],
    }));
    const { agent, server, events } = await agentOn(
      { turns: [...turns, { content: 'read them all' }] },
      { tools: [echo], api: 'responses', model: 'gpt-4o-mini', contextWindow: { contextWindow: 6000 } },
    );
    const result = await agent.send('go');
    expect(result.response).toBe('read them all');
    expect(events.some((e) => e.type === 'context_pruned')).toBe(true);
    assertToolCallsAnswered(result.messages);
    // Every pruned request was accepted: no call without its output, no reasoning item without its content.
    for (const request of server.requests) assertToolCallsAnswered(request.messages as Message[]);
    const counter = tokenCounterFor('o200k_base');
    const withItems = result.messages.find((m) => m.role === 'assistant')!;
    const { reasoning_items: _items, ...without } = withItems as Message & { reasoning_items?: unknown };
    expect(counter.countMessage(withItems)).toBeGreaterThan(counter.countMessage(without as Message) + 50);
  });
});

describe('how responses end', () => {
  it.each([
    ['length', 'length'],
    ['content_filter', 'content_filter'],
  ] as const)('an incomplete response (%s) ends the turn as %s, calls not run', async (finish, reason) => {
    for (const stream of [true, false]) {
      const { agent } = await agentOn(
        { turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], finishReason: finish }] },
        { tools: [echo], stream, api: 'responses', eagerToolStart: false },
      );
      const result = await agent.send('go');
      expect(result.terminateReason).toBe(reason);
      expect(result.messages.at(-1)).toMatchObject({
        role: 'tool',
        content: expect.stringMatching(/^Not run/),
      });
    }
  });

  const faults = [
    ['a 500', { error: { status: 500 } }, 'server'],
    [
      'a 429 with retry-after-ms',
      { error: { status: 429, headers: { 'retry-after-ms': '5' } } },
      'rate_limit',
    ],
    ['a connection reset', { fault: 'reset' }, 'connection'],
    ['a body cut in the text', { fault: 'cut-mid-text' }, 'stream_cut'],
    ['a body cut in a call', { fault: 'cut-mid-tool-call' }, 'stream_cut'],
  ] as const;
  it.each(
    faults.flatMap(([name, fault, kind]) =>
      [true, false].map((stream) => [name, fault, kind, stream] as const),
    ),
  )('retries %s as on the other wire (%#)', async (_name, fault, kind, stream) => {
    const { agent, events } = await agentOn(
      {
        turns: [
          {
            ...fault,
            times: 1,
            content: 'a text long enough to be cut',
            toolCalls: [{ name: 'echo', arguments: { text: 'x' } }],
          },
          { content: 'done' },
        ],
      },
      { tools: [echo], stream, api: 'responses', retry: { baseDelayMs: 1, maxDelayMs: 2 } },
    );
    const result = await agent.send('go');
    expect(result.response).toBe('done');
    expect(events.filter((e) => e.type === 'retry').map((e) => (e as { kind: string }).kind)).toEqual([kind]);
    assertToolCallsAnswered(result.messages);
  });
});

/** An agent on raw Responses replies; its result, events and the requests. */
async function rawTurn(replies: RawReply[], stream = true) {
  const server = await startRawModelServer(replies);
  const agent = createAgent({
    baseURL: server.url,
    apiKey: 'k',
    api: 'responses',
    tools: [echo],
    stream,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
  });
  const events: AgentEvent[] = [];
  agent.on('*', (e) => events.push(e));
  try {
    return { result: await agent.send('go'), events, requests: server.requests };
  } finally {
    agent.stop();
  }
}

const ev = (type: string, fields: Record<string, unknown> = {}) => ({
  event: type,
  data: { type, ...fields },
});
/** A finished response object with this output. */
const response = (output: unknown[], status = 'completed') => ({
  id: 'r',
  object: 'response',
  status,
  output,
  usage: { input_tokens: 9, output_tokens: 4, total_tokens: 13 },
});
const done = (output: unknown[]) => ev('response.completed', { response: response(output) });

describe('Responses shapes the scripted server never sends', () => {
  it('answers with a streamed refusal', async () => {
    const { result } = await rawTurn([
      {
        sse: [
          ev('response.refusal.delta', { output_index: 0, delta: "I can't " }),
          ev('response.refusal.delta', { output_index: 0, delta: 'do that.' }),
          done([]),
        ],
        done: false,
      },
    ]);
    expect(result.response).toBe("I can't do that.");
    expect(result.messages.at(-1)).toMatchObject({ refusal: "I can't do that." });
  });

  it('reads a non-streamed refusal and usage', async () => {
    const refusal = { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] };
    const { result, events } = await rawTurn([{ json: response([refusal]) }], false);
    expect(result.response).toBe('No.');
    expect(events.find((e) => e.type === 'usage')).toMatchObject({
      usage: { promptTokens: 9, completionTokens: 4 },
    });
  });

  it('retries a stream `error` event that says server_error, and stops on one that does not', async () => {
    const text = ev('response.output_text.delta', { output_index: 0, delta: 'ok' });
    const retried = await rawTurn([
      { sse: [ev('error', { code: 'server_error', message: 'The server had an error' })], done: false },
      { sse: [text, done([])], done: false },
    ]);
    expect(retried.result.response).toBe('ok');
    expect(retried.events.filter((e) => e.type === 'retry')).toHaveLength(1);
    const failed = await rawTurn([
      {
        sse: [
          ev('response.failed', {
            response: { status: 'failed', error: { code: 'invalid_prompt', message: 'Bad prompt' } },
          }),
        ],
        done: false,
      },
    ]);
    expect(failed.result.terminateReason).toBe('error');
    expect(failed.events.find((e) => e.type === 'error')).toMatchObject({
      message: expect.stringMatching(/Bad prompt/),
    });
  });

  it('asks again without encrypted reasoning when the model has none, and from then on', async () => {
    const refused = {
      status: 400,
      json: {
        error: {
          message: 'Encrypted content is not supported with this model.',
          type: 'invalid_request_error',
          param: 'include',
          code: null,
        },
      },
    };
    const call = { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '{"text":"a"}' };
    const answer = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'fine' }] };
    const { result, requests } = await rawTurn(
      [refused, { json: response([call]) }, { json: response([answer]) }],
      false,
    );
    expect(result.response).toBe('fine');
    expect(requests.map((r) => r.include)).toEqual([['reasoning.encrypted_content'], undefined, undefined]);
    expect(requests[2]!.store).toBe(false);
  });

  it('starts a call when its arguments are done, before the response ends', async () => {
    const added = ev('response.output_item.added', {
      output_index: 0,
      item: { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '' },
    });
    const argsDone = ev('response.function_call_arguments.done', {
      output_index: 0,
      arguments: '{"text":"early"}',
    });
    const call = { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '{"text":"early"}' };
    const answer = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'after' }] };
    const { result, events } = await rawTurn([
      { sse: [added, argsDone, { pauseMs: 100 }, done([call])], done: false },
      {
        sse: [ev('response.output_text.delta', { output_index: 0, delta: 'after' }), done([answer])],
        done: false,
      },
    ]);
    expect(result.response).toBe('after');
    const order = events.map((e) => e.type).filter((t) => t === 'tool_call_start' || t === 'usage');
    // The call started in the stream: before the reply's usage was known.
    expect(order.slice(0, 2)).toEqual(['tool_call_start', 'usage']);
  });

  it('keeps encrypted reasoning byte for byte in a saved session, even where it looks like a key', async () => {
    // Ciphertext in URL-safe base64 can hold `sk-` and 20 more characters: not a secret, and the
    // server refuses the item if a single byte changes.
    const encrypted = `gAAAAABo${'x'.repeat(40)}sk-${'Ab0_'.repeat(10)}==`;
    const reasoning = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: encrypted };
    const answer = (text: string) => ({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text }],
    });
    const server = await startRawModelServer([
      { json: response([reasoning, answer('one')]) },
      { json: response([answer('two')]) },
    ]);
    const dir = await testDir('responses-redact-');
    const make = () =>
      createAgent({
        baseURL: server.url,
        apiKey: 'k',
        api: 'responses',
        stream: false,
        store: new FileSessionStore({ dir }),
        session: 's',
      });
    const first = make();
    expect((await first.send('1')).response).toBe('one');
    await first.flush();
    first.stop();
    const second = make();
    await second.ready();
    expect((await second.send('2')).response).toBe('two');
    second.stop();
    const input = server.requests[1]!.input as Array<{ type?: string; encrypted_content?: string }>;
    expect(input.find((item) => item.type === 'reasoning')?.encrypted_content).toBe(encrypted);
    // The transcript (written redacted; a crash between rest points rebuilds from it) keeps it too.
    expect(await readFile(path.join(dir, 's', 'transcript.jsonl'), 'utf8')).toContain(encrypted);
  });
});
