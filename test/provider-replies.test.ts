/**
 * The shapes real OpenAI-compatible servers send, as their documentation describes them, replayed
 * raw to an agent through the real `openai` SDK: what the user gets must be what the server meant,
 * and what cannot be used ends the turn with an error that says what was sent. Never silence.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentEvent, createAgent, defineTool } from '../src/index.js';
import { chunk, completion, type RawReply, startRawModelServer } from './support/raw-model-server.js';

const ran: string[] = [];
const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => {
    ran.push(text);
    return `echo: ${text}`;
  },
});

/** One turn of an agent over the raw replies; its result, events, debug lines and the requests. */
async function turnOver(replies: RawReply[], options: { stream?: boolean } = {}) {
  ran.length = 0;
  const server = await startRawModelServer(replies);
  const debug: string[] = [];
  const agent = createAgent({
    baseURL: server.url,
    apiKey: 'k',
    tools: [echo],
    stream: options.stream ?? replies.some((r) => 'sse' in r),
    retry: { maxAttempts: 1 },
    debug: (line) => debug.push(line),
  });
  const events: AgentEvent[] = [];
  agent.on('*', (e) => events.push(e));
  try {
    const result = await agent.send('go');
    return { result, events, debug, requests: server.requests, agent };
  } finally {
    agent.stop();
  }
}

const thinking = (events: AgentEvent[]) =>
  events.filter((e) => e.type === 'thinking').map((e) => (e as { content: string }).content);

describe('tool calls as servers send them', () => {
  it('runs a non-streamed call that has no `type` (Mistral)', async () => {
    const { result } = await turnOver([
      {
        json: completion(
          {
            content: '',
            tool_calls: [{ id: 'abc123XYZ', function: { name: 'echo', arguments: '{"text":"hi"}' } }],
          },
          'tool_calls',
        ),
      },
      { json: completion({ content: 'done' }) },
    ]);
    expect(ran).toEqual(['hi']);
    expect(result.response).toBe('done');
    expect(result.terminateReason).toBe('completed');
  });

  it('runs a non-streamed call whose arguments come as an object, as their JSON', async () => {
    const { result } = await turnOver([
      {
        json: completion(
          {
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'echo', arguments: { text: 'obj' } } },
            ],
          },
          'tool_calls',
        ),
      },
      { json: completion({ content: 'ok' }) },
    ]);
    expect(ran).toEqual(['obj']);
    expect(result.response).toBe('ok');
  });

  const twoCalls = (first: Record<string, unknown>, second: Record<string, unknown>): RawReply => ({
    sse: [
      chunk({ role: 'assistant', content: null }),
      chunk({ tool_calls: [{ ...first, function: { name: 'echo', arguments: '{"text":' } }] }),
      chunk({
        tool_calls: [
          { ...(first.index === undefined ? {} : { index: first.index }), function: { arguments: '"a"}' } },
        ],
      }),
      chunk({ tool_calls: [{ ...second, function: { name: 'echo', arguments: '{"text":"b"}' } }] }),
      chunk({}, 'tool_calls'),
    ],
  });
  it.each([
    ['without an index (ids tell the calls apart)', { id: 'x1' }, { id: 'x2' }],
    ['with an index gap (0, then 2)', { index: 0, id: 'x1' }, { index: 2, id: 'x2' }],
    ['with the first call at index 1', { index: 1, id: 'x1' }, { index: 2, id: 'x2' }],
    ['without an index or an id (a name begins a call)', {}, {}],
  ])('runs streamed calls %s, in order', async (_name, first, second) => {
    const { result } = await turnOver([
      twoCalls(first, second),
      { sse: [chunk({ content: 'both' }, 'stop')] },
    ]);
    expect(ran).toEqual(['a', 'b']);
    expect(result.response).toBe('both');
    const calls = result.messages.find((m) => m.role === 'assistant' && m.tool_calls)!;
    expect((calls as { tool_calls: unknown[] }).tool_calls).toHaveLength(2);
  });

  it.each([true, false])(
    'runs calls that end with `finish_reason: "stop"` (vLLM, Ollama; stream=%s)',
    async (stream) => {
      const call = { id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"text":"s"}' } };
      const { result } = await turnOver(
        stream
          ? [
              { sse: [chunk({ tool_calls: [{ index: 0, ...call }] }), chunk({}, 'stop')] },
              { sse: [chunk({ content: 'ok' }, 'stop')] },
            ]
          : [
              { json: completion({ content: null, tool_calls: [call] }, 'stop') },
              { json: completion({ content: 'ok' }) },
            ],
        { stream },
      );
      expect(ran).toEqual(['s']);
      expect(result.response).toBe('ok');
    },
  );

  it.each([true, false])(
    'answers a call without a function name with an error result, and goes on (stream=%s)',
    async (stream) => {
      const good = { id: 'c2', type: 'function', function: { name: 'echo', arguments: '{"text":"ok"}' } };
      const replies: RawReply[] = stream
        ? [
            {
              sse: [
                chunk({
                  tool_calls: [
                    { index: 0, id: 'c1', type: 'function', function: { arguments: '{"text":"lost"}' } },
                  ],
                }),
                chunk({ tool_calls: [{ index: 1, ...good }] }),
                chunk({}, 'tool_calls'),
              ],
            },
            { sse: [chunk({ content: 'went on' }, 'stop')] },
          ]
        : [
            {
              json: completion(
                { content: null, tool_calls: [{ id: 'c1', name: 'echo', arguments: '{}' }, good] },
                'tool_calls',
              ),
            },
            { json: completion({ content: 'went on' }) },
          ];
      const { result, requests } = await turnOver(replies, { stream });
      expect(ran).toEqual(['ok']);
      expect(result.response).toBe('went on');
      const tools = result.messages.filter((m) => m.role === 'tool');
      expect(tools[0]).toMatchObject({
        tool_call_id: 'c1',
        content: expect.stringMatching(/^Error: the model server sent a tool call without a function name/),
      });
      // The next request holds the call under a name the API accepts, with its answer.
      const sent = requests[1]!.messages as Array<{
        role: string;
        tool_calls?: Array<{ function: { name: string } }>;
      }>;
      expect(sent.find((m) => m.role === 'assistant')?.tool_calls?.[0]?.function.name).toBe('unnamed_call');
    },
  );

  it('keeps call ids unique when a server reuses them across messages', async () => {
    const call = (text: string) => ({
      id: 'call_0',
      type: 'function',
      function: { name: 'echo', arguments: JSON.stringify({ text }) },
    });
    const { result, requests } = await turnOver([
      { json: completion({ content: null, tool_calls: [call('one')] }, 'tool_calls') },
      { json: completion({ content: null, tool_calls: [call('two')] }, 'tool_calls') },
      { json: completion({ content: 'fine' }) },
    ]);
    expect(ran).toEqual(['one', 'two']);
    const ids = result.messages.flatMap((m) =>
      m.role === 'assistant' && m.tool_calls ? m.tool_calls.map((c) => c.id) : [],
    );
    expect(new Set(ids).size).toBe(2);
    const last = requests[2]!.messages as Array<{ role: string; tool_call_id?: string }>;
    expect(last.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(ids);
  });
});

describe('content, reasoning and refusals as servers send them', () => {
  const parts = [
    { type: 'thinking', thinking: [{ type: 'text', text: 'Let me think.' }] },
    { type: 'text', text: 'Hello ' },
    { type: 'reference', reference_ids: [1] },
    { type: 'text', text: 'there.' },
  ];
  it.each([true, false])(
    'joins typed content parts into the answer, thinking as reasoning (Mistral; stream=%s)',
    async (stream) => {
      const replies: RawReply[] = stream
        ? [
            {
              sse: [
                chunk({ role: 'assistant', content: parts.slice(0, 2) }),
                chunk({ content: parts.slice(2) }),
                chunk({}, 'stop'),
              ],
            },
          ]
        : [{ json: completion({ content: parts }) }];
      const { result, events, debug } = await turnOver(replies, { stream });
      expect(result.response).toBe('Hello there.');
      expect(JSON.stringify(result.messages)).not.toContain('[object Object]');
      expect(thinking(events)).toEqual(['Let me think.']);
      expect(debug.filter((line) => line.includes('"reference"'))).toHaveLength(1);
    },
  );

  it('tells an unknown part type once in the debug log, however many replies hold it', async () => {
    const reply = {
      json: completion({
        content: [
          { type: 'audio', data: 'x' },
          { type: 'text', text: 'a' },
        ],
      }),
    };
    const server = await startRawModelServer([reply, reply]);
    const debug: string[] = [];
    const agent = createAgent({
      baseURL: server.url,
      apiKey: 'k',
      stream: false,
      debug: (l) => debug.push(l),
    });
    expect((await agent.send('1')).response).toBe('a');
    expect((await agent.send('2')).response).toBe('a');
    agent.stop();
    expect(debug.filter((line) => line.includes('"audio"'))).toHaveLength(1);
  });

  it.each([
    ['reasoning_content (DeepSeek)', 'reasoning_content'],
    ['reasoning (vLLM, Ollama, Groq)', 'reasoning'],
  ])('shows streamed reasoning in %s as the thinking event', async (_name, field) => {
    const { result, events } = await turnOver([
      {
        sse: [
          chunk({ role: 'assistant', [field]: 'Step 1. ' }),
          chunk({ [field]: 'Step 2.' }),
          chunk({ content: 'Answer' }),
          chunk({}, 'stop'),
        ],
      },
    ]);
    expect(result.response).toBe('Answer');
    expect(thinking(events)).toEqual(['Step 1. Step 2.']);
  });

  it('shows non-streamed reasoning in `reasoning` as the thinking event', async () => {
    const { events } = await turnOver([{ json: completion({ content: 'A', reasoning: 'Because.' }) }]);
    expect(thinking(events)).toEqual(['Because.']);
  });

  it.each([true, false])(
    'answers with the refusal when the model refuses (OpenAI; stream=%s)',
    async (stream) => {
      const replies: RawReply[] = stream
        ? [
            {
              sse: [
                chunk({ role: 'assistant', content: null, refusal: '' }),
                chunk({ refusal: "I can't " }),
                chunk({ refusal: 'help.' }),
                chunk({}, 'stop'),
              ],
            },
          ]
        : [{ json: completion({ content: null, refusal: "I can't help." }) }];
      const { result } = await turnOver(replies, { stream });
      expect(result.response).toBe("I can't help.");
      expect(result.messages.at(-1)).toMatchObject({
        role: 'assistant',
        content: "I can't help.",
        refusal: "I can't help.",
      });
    },
  );
});

describe('how streams end', () => {
  it('reads usage from a last chunk with empty `choices`, and an Azure prompt-filter chunk first', async () => {
    const usage = { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 };
    const { result, events } = await turnOver([
      {
        sse: [
          chunk(null, null, { prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] }),
          chunk({ role: 'assistant', content: 'Hi' }),
          chunk({}, 'stop'),
          chunk(null, null, { usage }),
        ],
      },
    ]);
    expect(result.response).toBe('Hi');
    expect(events.find((e) => e.type === 'usage')).toMatchObject({
      usage: { promptTokens: 11, completionTokens: 3, totalTokens: 14 },
    });
  });

  it('completes a stream that ends without `data: [DONE]` after its finish reason', async () => {
    const { result } = await turnOver([
      { sse: [chunk({ content: 'no done' }), chunk({}, 'stop')], done: false },
    ]);
    expect(result.response).toBe('no done');
    expect(result.terminateReason).toBe('completed');
  });

  it.each([true, false])(
    'ends the turn as content_filter when the server filters the answer (stream=%s)',
    async (stream) => {
      const replies: RawReply[] = stream
        ? [
            { sse: [chunk({ content: 'Part' }), chunk({}, 'content_filter')] },
            { sse: [chunk({ content: 'x' }, 'stop')] },
          ]
        : [
            { json: completion({ content: 'Part' }, 'content_filter') },
            { json: completion({ content: 'x' }) },
          ];
      const { result } = await turnOver(replies, { stream });
      expect(result.terminateReason).toBe('content_filter');
    },
  );
});

describe('fields of an unexpected type end the turn with an error that says what was sent', () => {
  it.each<[string, RawReply, RegExp]>([
    [
      'content as a number',
      { json: completion({ content: 42 }) },
      /`choices\[0\]\.message\.content` as a number \(42\)/,
    ],
    [
      'content as an object',
      { json: completion({ content: { text: 'x' } }) },
      /`choices\[0\]\.message\.content` as an object \(\{"text":"x"\}\)/,
    ],
    [
      'a content part without a type',
      { json: completion({ content: [{ text: 'x' }] }) },
      /content\[0\]` as an object/,
    ],
    [
      'tool_calls as an object',
      { json: completion({ content: null, tool_calls: { id: 'x' } }) },
      /tool_calls` as an object/,
    ],
    ['choices as a string', { json: { id: 'x', choices: 'none' } }, /`choices` as a string \("none"\)/],
    [
      'usage tokens as strings',
      { json: completion({ content: 'a' }, 'stop', { usage: { prompt_tokens: '1' } }) },
      /`usage\.prompt_tokens` as a string/,
    ],
    [
      'a streamed content object',
      { sse: [chunk({ content: { a: 1 } }), chunk({}, 'stop')] },
      /`choices\[0\]\.delta\.content` as an object/,
    ],
    [
      'a streamed finish_reason number',
      { sse: [chunk({ content: 'a' }, 3 as unknown as string)] },
      /finish_reason` as a number \(3\)/,
    ],
    [
      'a streamed reasoning object',
      { sse: [chunk({ reasoning: { text: 'r' } }), chunk({}, 'stop')] },
      /`choices\[0\]\.delta\.reasoning` as an object/,
    ],
  ])('%s', async (_name, reply, message) => {
    const { result, events } = await turnOver([reply]);
    expect(result.success).toBe(false);
    expect(result.terminateReason).toBe('error');
    const error = events.find((e) => e.type === 'error') as { message: string } | undefined;
    expect(error?.message).toMatch(message);
    expect(JSON.stringify(result.messages)).not.toContain('[object Object]');
  });
});
