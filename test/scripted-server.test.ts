import OpenAI, { APIConnectionError, APIUserAbortError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../src/testing/index.js';

const tools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
  {
    type: 'function',
    function: { name: 'search', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
  },
];

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(scenario: Scenario, extra: { latencyMs?: number } = {}) {
  server = await startScriptedServer({ scenario, ...extra });
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 }) };
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const user = (content: string): ChatCompletionMessageParam => ({ role: 'user', content });

describe('streaming', () => {
  it('streams text deltas that reassemble to the scripted content', async () => {
    const content = 'Hello there, this reply is split into several deltas. 👋 done';
    const { client } = await start({ turns: [{ content }] });
    const stream = await client.chat.completions.create({ model: 'm', messages: [user('hi')], stream: true });
    const chunks = await collect(stream);

    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const texts = chunks.map((c) => c.choices[0]?.delta.content ?? '').filter((t) => t !== '');
    expect(texts.length).toBeGreaterThan(3);
    expect(texts.every((t) => t.length <= 9)).toBe(true);
    expect(texts.join('')).toBe(content);
    const last = chunks.at(-1)!;
    expect(last.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((c) => c.choices[0]?.finish_reason === null)).toBe(true);
    expect(last.object).toBe('chat.completion.chunk');
  });

  it('honours chunkSize', async () => {
    const { client } = await start({ turns: [{ content: 'abcdefghij', chunkSize: 3 }] });
    const chunks = await collect(
      await client.chat.completions.create({ model: 'm', messages: [user('hi')], stream: true }),
    );
    const texts = chunks.map((c) => c.choices[0]?.delta.content ?? '').filter((t) => t !== '');
    expect(texts).toEqual(['abc', 'def', 'ghi', 'j']);
  });

  it('splits tool-call arguments across several chunks, reassembling to valid JSON per index', async () => {
    const args0 = { path: 'docs/some/long/path/to/a/file.md' };
    const { client } = await start({
      turns: [
        {
          content: 'Let me look.',
          toolCalls: [
            { name: 'read_file', arguments: args0 },
            { id: 'call_custom', name: 'search', arguments: '{"query":"agent loop"}' },
          ],
        },
      ],
    });
    const chunks = await collect(
      await client.chat.completions.create({ model: 'm', messages: [user('go')], tools, stream: true }),
    );

    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const byIndex = new Map<number, { id?: string; name?: string; args: string; fragments: number }>();
    for (const d of deltas) {
      const entry = byIndex.get(d.index) ?? { args: '', fragments: 0 };
      if (d.id) {
        // The first chunk of a call carries id, type and name.
        expect(entry.id).toBeUndefined();
        expect(d.type).toBe('function');
        entry.id = d.id;
        entry.name = d.function?.name;
      } else {
        // Later chunks carry only the index and an arguments fragment.
        expect(Object.keys(d).sort()).toEqual(['function', 'index']);
        expect(Object.keys(d.function ?? {})).toEqual(['arguments']);
        entry.fragments++;
      }
      entry.args += d.function?.arguments ?? '';
      byIndex.set(d.index, entry);
    }
    expect([...byIndex.keys()]).toEqual([0, 1]);
    const first = byIndex.get(0)!;
    expect(first).toMatchObject({ id: 'call_0_0', name: 'read_file' });
    expect(first.fragments).toBeGreaterThan(2);
    expect(JSON.parse(first.args)).toEqual(args0);
    const second = byIndex.get(1)!;
    expect(second).toMatchObject({ id: 'call_custom', name: 'search' });
    expect(second.fragments).toBeGreaterThan(1);
    expect(JSON.parse(second.args)).toEqual({ query: 'agent loop' });
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('sends the ids a scenario gives, even repeated, empty or absent ones (stream and not)', async () => {
    const toolCalls = [
      { id: 'dup', name: 'search', arguments: {} },
      { id: 'dup', name: 'search', arguments: {} },
      { id: '', name: 'search', arguments: {} },
      { id: null, name: 'search', arguments: {} },
    ];
    const { client } = await start({ turns: [{ toolCalls }] });
    const chunks = await collect(
      await client.chat.completions.create({ model: 'm', messages: [user('go')], tools, stream: true }),
    );
    const firsts = chunks
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .filter((d) => d.function?.name !== undefined);
    expect(firsts.map((d) => d.id)).toEqual(['dup', 'dup', '', undefined]);
    expect('id' in firsts[3]!).toBe(false);
    const completion = await client.chat.completions.create({ model: 'm', messages: [user('go')], tools });
    const calls = completion.choices[0]!.message.tool_calls!;
    expect(calls.map((c) => c.id)).toEqual(['dup', 'dup', '', undefined]);
    expect('id' in calls[3]!).toBe(false);
  });

  it("satisfies the SDK's own stream accumulator", async () => {
    const { client } = await start({
      turns: [{ content: 'ok', toolCalls: [{ name: 'search', arguments: { query: 'x' } }] }],
    });
    const runner = client.chat.completions.stream({ model: 'm', messages: [user('go')], tools });
    const final = await runner.finalChatCompletion();
    const message = final.choices[0]!.message;
    expect(message.content).toBe('ok');
    expect(message.tool_calls?.[0]).toMatchObject({
      id: 'call_0_0',
      type: 'function',
      function: { name: 'search', arguments: '{"query":"x"}' },
    });
  });

  it('sends a usage chunk with empty choices when include_usage is set', async () => {
    const { client } = await start({ turns: [{ content: 'counted', usage: { prompt_tokens: 11 } }] });
    const chunks = await collect(
      await client.chat.completions.create({
        model: 'm',
        messages: [user('hi')],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');

    const without = await collect(
      await client.chat.completions.create({ model: 'm', messages: [user('hi')], stream: true }),
    );
    expect(without.every((c) => c.choices.length === 1 && !c.usage)).toBe(true);
  });

  it('answers with Content-Type text/event-stream and [DONE]', async () => {
    const { server } = await start({ turns: [{ content: 'hi' }] });
    const res = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [user('x')], stream: true }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text.split('\n\n').every((event) => event === '' || event.startsWith('data: '))).toBe(true);
  });
});

describe('non-streaming', () => {
  it('returns a chat.completion with message, tool_calls, finish_reason and usage', async () => {
    const { client } = await start({
      model: 'scripted-4',
      turns: [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
        { content: 'The file says hi.' },
      ],
    });
    const first = await client.chat.completions.create({
      model: 'gpt-x',
      messages: [user('read a.txt')],
      tools,
    });
    expect(first.object).toBe('chat.completion');
    expect(first.model).toBe('scripted-4');
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.role).toBe('assistant');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: 'call_0_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
    ]);
    expect(first.usage!.prompt_tokens).toBeGreaterThan(10);
    expect(first.usage!.total_tokens).toBe(first.usage!.prompt_tokens + first.usage!.completion_tokens);

    const second = await client.chat.completions.create({
      model: 'gpt-x',
      tools,
      messages: [
        user('read a.txt'),
        choice.message as ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: 'call_0_0', content: 'hi' },
      ],
    });
    expect(second.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { role: 'assistant', content: 'The file says hi.' },
    });
    expect(second.choices[0]!.message.tool_calls).toBeUndefined();
    expect(second.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens);
  });

  it('sends string arguments verbatim, even malformed JSON, and honours finishReason', async () => {
    const { client } = await start({
      turns: [
        { toolCalls: [{ name: 'search', arguments: '{"query": "unterminated' }], finishReason: 'length' },
      ],
    });
    const res = await client.chat.completions.create({ model: 'm', messages: [user('x')], tools });
    expect(res.choices[0]!.message.tool_calls?.[0]).toMatchObject({
      function: { arguments: '{"query": "unterminated' },
    });
    expect(res.choices[0]!.finish_reason).toBe('length');
  });
});

describe('request validation', () => {
  it('refuses an unanswered tool call with a 400 naming the id', async () => {
    const { client, server } = await start({ turns: [{ content: 'a' }, { content: 'b' }] });
    const messages: ChatCompletionMessageParam[] = [
      user('go'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'search', arguments: '{}' } },
          { id: 'call_b', type: 'function', function: { name: 'search', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'done' },
      user('and?'),
    ];
    const error = await client.chat.completions.create({ model: 'm', messages, tools }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.message).toContain("must be followed by tool messages responding to each 'tool_call_id'");
    expect(error.message).toContain('call_b');
    expect(error.message).not.toContain('call_a,');
    expect(error.error).toMatchObject({ type: 'invalid_request_error', param: 'messages.[1].role' });

    // Also when the unanswered call is the last message.
    const trailing = await client.chat.completions
      .create({ model: 'm', messages: messages.slice(0, 2), tools })
      .catch((e) => e);
    expect(trailing.status).toBe(400);
    expect(trailing.message).toContain('call_a, call_b');
    expect(server.requestCount).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it('refuses an empty tool call id, as OpenAI does', async () => {
    const { client } = await start({ turns: [{ content: 'unused' }] });
    const error = await client.chat.completions
      .create({
        model: 'm',
        messages: [
          user('go'),
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: '', type: 'function', function: { name: 'search', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: '', content: 'x' },
        ],
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'empty_string', param: 'messages[1].tool_calls[0].id' });
  });

  it('refuses a tool message that answers no preceding call', async () => {
    const { client } = await start({ turns: [{ content: 'a' }] });
    const stray = await client.chat.completions
      .create({ model: 'm', messages: [user('go'), { role: 'tool', tool_call_id: 'call_zz', content: 'x' }] })
      .catch((e) => e);
    expect(stray.status).toBe(400);
    expect(stray.message).toContain(
      "role 'tool' must be a response to a preceding message with 'tool_calls'",
    );

    const duplicate = await client.chat.completions
      .create({
        model: 'm',
        messages: [
          user('go'),
          {
            role: 'assistant',
            tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'search', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'call_a', content: 'x' },
          { role: 'tool', tool_call_id: 'call_a', content: 'again' },
        ],
      })
      .catch((e) => e);
    expect(duplicate.status).toBe(400);
    expect(duplicate.message).toContain("'call_a'");
  });

  it('refuses malformed JSON and missing model or messages with OpenAI error JSON', async () => {
    const { server } = await start({ turns: [{ content: 'a' }] });
    const post = (body: string) =>
      fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    const malformed = await post('{"model": "m", "messages": [');
    expect(malformed.status).toBe(400);
    const malformedBody = await malformed.json();
    expect(malformedBody.error.message).toContain('could not parse the JSON body');
    expect(Object.keys(malformedBody.error).sort()).toEqual(['code', 'message', 'param', 'type']);

    const noModel = await post(JSON.stringify({ messages: [user('x')] }));
    expect(noModel.status).toBe(400);
    expect((await noModel.json()).error.message).toBe('you must provide a model parameter');

    const noMessages = await post(JSON.stringify({ model: 'm' }));
    expect(noMessages.status).toBe(400);
    expect((await noMessages.json()).error).toEqual({
      message: "Missing required parameter: 'messages'.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'missing_required_parameter',
    });
    expect(server.requestCount).toBe(3);
    expect(server.requests).toHaveLength(2); // The malformed body could not be recorded.
  });
});

describe('errors and faults', () => {
  it('serves a 429 with retry-after-ms once, then the turn (SDK retries)', async () => {
    server = await startScriptedServer({
      scenario: {
        turns: [
          {
            content: 'after retry',
            error: { status: 429, message: 'Slow down', headers: { 'retry-after-ms': '20' } },
            times: 1,
          },
        ],
      },
    });
    const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 1 });
    const started = Date.now();
    const res = await client.chat.completions.create({ model: 'm', messages: [user('x')] });
    expect(res.choices[0]!.message.content).toBe('after retry');
    expect(server.requestCount).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);

    // times is per server instance until reset(): the counter is spent now.
    const again = await client.chat.completions.create({ model: 'm', messages: [user('x')] });
    expect(again.choices[0]!.message.content).toBe('after retry');
    expect(server.requestCount).toBe(3);

    server.reset();
    expect(server.requestCount).toBe(0);
    expect(server.requests).toHaveLength(0);
    const noRetry = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
    const error = await noRetry.chat.completions
      .create({ model: 'm', messages: [user('x')] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.message).toContain('Slow down');
    expect(error.headers.get('retry-after-ms')).toBe('20');
    expect(error.error).toMatchObject({ code: 'rate_limit_exceeded' });
  });

  it('serves an error every time without times', async () => {
    const { client, server } = await start({ turns: [{ error: { status: 503, code: 'overloaded' } }] });
    for (let i = 0; i < 2; i++) {
      const error = await client.chat.completions
        .create({ model: 'm', messages: [user('x')] })
        .catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error.status).toBe(503);
      expect(error.error).toMatchObject({ type: 'server_error', code: 'overloaded' });
    }
    expect(server.requestCount).toBe(2);
  });

  it('resets the connection: the SDK throws APIConnectionError and the server keeps serving', async () => {
    const { client } = await start({ turns: [{ content: 'fine', fault: 'reset', times: 1 }] });
    const error = await client.chat.completions.create({ model: 'm', messages: [user('x')] }).catch((e) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    const res = await client.chat.completions.create({ model: 'm', messages: [user('x')] });
    expect(res.choices[0]!.message.content).toBe('fine');
  });

  it('cuts a stream in the middle of the text', async () => {
    const content = 'This text will never arrive in full because the socket dies.';
    const { client } = await start({ turns: [{ content, fault: 'cut-mid-text' }] });
    const stream = await client.chat.completions.create({ model: 'm', messages: [user('x')], stream: true });
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e) => e);
    expect(error).toBeInstanceOf(TypeError); // undici: the body was cut off
    expect(error.message).toBe('terminated');
    expect(text.length).toBeGreaterThan(0);
    expect(content.startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(content.length);
  });

  it('cuts a stream in the middle of a tool call', async () => {
    const { client } = await start({
      turns: [
        {
          toolCalls: [{ name: 'search', arguments: { query: 'a fairly long query string' } }],
          fault: 'cut-mid-tool-call',
        },
      ],
    });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [user('x')],
      tools,
      stream: true,
    });
    let args = '';
    let finish: string | null = null;
    const error = await (async () => {
      for await (const chunk of stream) {
        args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
    })().catch((e) => e);
    expect(error).toBeInstanceOf(TypeError); // undici: the body was cut off
    expect(error.message).toBe('terminated');
    expect(finish).toBeNull();
    expect(args.length).toBeGreaterThan(0);
    expect(() => JSON.parse(args)).toThrow();
  });

  it('cuts a non-streaming body: the SDK throws and the server survives', async () => {
    const { client } = await start({ turns: [{ content: 'complete', fault: 'cut-mid-text', times: 1 }] });
    const error = await client.chat.completions.create({ model: 'm', messages: [user('x')] }).catch((e) => e);
    expect(error).toBeInstanceOf(TypeError); // undici: the body was cut off
    expect(error.message).toBe('terminated');
    const res = await client.chat.completions.create({ model: 'm', messages: [user('x')] });
    expect(res.choices[0]!.message.content).toBe('complete');
  });

  it('hangs until the client aborts', async () => {
    const { client, server } = await start({ turns: [{ content: 'never', fault: 'hang' }] });
    const controller = new AbortController();
    const pending = client.chat.completions.create(
      { model: 'm', messages: [user('x')], stream: true },
      { signal: controller.signal },
    );
    const settled = pending.then(
      () => 'resolved',
      (e) => e,
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(server.requestCount).toBe(1);
    controller.abort();
    expect(await settled).toBeInstanceOf(APIUserAbortError);
  });

  it('paces chunks with chunkDelayMs and survives a client that aborts mid-stream', async () => {
    const { client, server } = await start({
      turns: [{ content: 'abcdefghijkl', chunkSize: 3, chunkDelayMs: 25 }],
    });
    const arrivals: number[] = [];
    const stream = await client.chat.completions.create({ model: 'm', messages: [user('x')], stream: true });
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) arrivals.push(Date.now());
    expect(arrivals).toHaveLength(4);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(60);

    const controller = new AbortController();
    const aborted = await client.chat.completions.create(
      { model: 'm', messages: [user('x')], stream: true },
      { signal: controller.signal },
    );
    let seen = '';
    const error = await (async () => {
      for await (const chunk of aborted) {
        seen += chunk.choices[0]?.delta.content ?? '';
        if (seen.length >= 3) controller.abort();
      }
    })().catch((e) => e);
    expect(error).toBeUndefined(); // The SDK ends a stream quietly when its own signal aborts it.
    expect(seen).toBe('abc');
    await new Promise((r) => setTimeout(r, 120)); // The server's remaining chunk timers fire into a closed socket.
    const res = await client.chat.completions.create({ model: 'm', messages: [user('x')] });
    expect(res.choices[0]!.message.content).toBe('abcdefghijkl');
    expect(server.requestCount).toBe(3);
  });

  it('close() resolves while a request hangs, and the client sees the connection end', async () => {
    const { client, server } = await start({ turns: [{ fault: 'hang' }] });
    const settled = client.chat.completions.create({ model: 'm', messages: [user('x')] }).then(
      () => 'resolved',
      (e) => e,
    );
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await settled).toBeInstanceOf(APIConnectionError);
  });

  it('close() ends idle keep-alive connections and pending delays', async () => {
    const { client, server } = await start({
      turns: [{ content: 'slow', delayMs: 60_000 }, { content: 'x' }],
    });
    await client.models.list(); // Leaves a keep-alive socket open.
    const settled = client.chat.completions.create({ model: 'm', messages: [user('x')] }).catch((e) => e);
    await new Promise((r) => setTimeout(r, 30));
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await settled).toBeInstanceOf(APIConnectionError);
  });

  it('answers 500 past the end of the script', async () => {
    const { client } = await start({ turns: [{ content: 'only one' }] });
    const error = await client.chat.completions
      .create({
        model: 'm',
        messages: [user('a'), { role: 'assistant', content: 'only one' }, user('b')],
      })
      .catch((e) => e);
    expect(error.status).toBe(500);
    expect(error.message).toContain('scenario has no turn 1 (it has 1)');
  });
});

describe('turn selection', () => {
  it('picks the turn by assistant count, so interleaved conversations share one server', async () => {
    const { client, server } = await start({
      turns: [{ content: 'first answer' }, { content: 'second answer' }, { content: 'third answer' }],
    });
    const a: ChatCompletionMessageParam[] = [user('A1')];
    const b: ChatCompletionMessageParam[] = [user('B1')];
    const ask = async (messages: ChatCompletionMessageParam[]) => {
      const res = await client.chat.completions.create({ model: 'm', messages });
      const content = res.choices[0]!.message.content!;
      messages.push({ role: 'assistant', content }, user('next'));
      return content;
    };
    expect(await ask(a)).toBe('first answer');
    expect(await ask(b)).toBe('first answer');
    expect(await ask(a)).toBe('second answer');
    const [a3, b2] = await Promise.all([ask(a), ask(b)]);
    expect(a3).toBe('third answer');
    expect(b2).toBe('second answer');
    expect(server.requestCount).toBe(5);
    expect(server.requests.map((r) => r.messages.length)).toEqual([
      1,
      1,
      3,
      expect.any(Number),
      expect.any(Number),
    ]);
    expect((server.requests[0]!.messages[0] as { content: string }).content).toBe('A1');
  });

  it('calls turn functions and the respond option with the request', async () => {
    const { client } = await start({
      turns: [
        (request) => ({ content: `you said ${(request.messages.at(-1) as { content: string }).content}` }),
      ],
    });
    const res = await client.chat.completions.create({ model: 'm', messages: [user('ping')] });
    expect(res.choices[0]!.message.content).toBe('you said ping');

    server = await startScriptedServer({
      respond: async (request, index) => ({ content: `turn ${index} of ${request.model}` }),
    });
    const other = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
    const answer = await other.chat.completions.create({
      model: 'mini',
      messages: [user('a'), { role: 'assistant', content: 'b' }, user('c')],
    });
    expect(answer.choices[0]!.message.content).toBe('turn 1 of mini');
    await server.close();
  });

  it('withholds tool calls when tool_choice is none or no tools are offered', async () => {
    const { client } = await start({
      turns: [
        { content: 'I would call a tool.', toolCalls: [{ name: 'search', arguments: { query: 'q' } }] },
      ],
    });
    const none = await client.chat.completions.create({
      model: 'm',
      messages: [user('x')],
      tools,
      tool_choice: 'none',
    });
    expect(none.choices[0]!.message.tool_calls).toBeUndefined();
    expect(none.choices[0]!.message.content).toBe('I would call a tool.');
    expect(none.choices[0]!.finish_reason).toBe('stop');

    const chunks = await collect(
      await client.chat.completions.create({ model: 'm', messages: [user('x')], stream: true }),
    );
    expect(chunks.some((c) => c.choices[0]?.delta.tool_calls)).toBe(false);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');

    const allowed = await client.chat.completions.create({ model: 'm', messages: [user('x')], tools });
    expect(allowed.choices[0]!.message.tool_calls).toHaveLength(1);
    expect(allowed.choices[0]!.finish_reason).toBe('tool_calls');
  });
});

describe('other endpoints', () => {
  it('lists the model and answers unknown paths with a 404 in OpenAI error shape', async () => {
    const { client, server } = await start({ model: 'demo-model', turns: [] });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['demo-model']);
    const res = await fetch(`${server.url}/embeddings`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: {
        message: 'Invalid URL (POST /v1/embeddings)',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('adds latencyMs before every response', async () => {
    const { client } = await start({ turns: [{ content: 'late' }] }, { latencyMs: 80 });
    const started = Date.now();
    await client.chat.completions.create({ model: 'm', messages: [user('x')] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
  });
});
