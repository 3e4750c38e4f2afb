import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agentOn, assertToolCallsAnswered } from './support/harness.js';

const div = defineTool({
  name: 'divide',
  description: 'divides',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => {
    if (b === 0) throw new Error('division by zero');
    return { quotient: a / b };
  },
});

describe('tool failures become results the model reads', () => {
  it('turns a throw, bad JSON, a schema violation and an unknown tool into error results', async () => {
    const { agent, server, events } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'divide', arguments: { a: 1, b: 0 } },
              { name: 'divide', arguments: '{"a": 1, "b": ' },
              { name: 'divide', arguments: { a: 'one', b: 2 } },
              { name: 'multiply', arguments: { a: 1 } },
              { name: 'divide', arguments: { a: 9, b: 3 } },
            ],
          },
          { content: 'recovered' },
        ],
      },
      { tools: [div] },
    );
    const result = await agent.send('compute');
    expect(result.terminateReason).toBe('completed');
    const contents = server.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) =>
      String(m.content),
    );
    expect(contents[0]).toBe('Error: division by zero');
    expect(contents[1]).toMatch(/not valid JSON: "\{\\"a\\": 1, \\"b\\": "/);
    expect(contents[2]).toMatch(/invalid arguments for "divide": a: .*number/i);
    expect(contents[3]).toMatch(/unknown tool "multiply". Available tools: divide, task_completion/);
    expect(contents[4]).toBe('{"quotient":3}');
    const ends = events.filter((e) => e.type === 'tool_call_end');
    expect(ends.filter((e) => e.error !== undefined)).toHaveLength(4);
    assertToolCallsAnswered(result.messages);
  });

  it('times a tool out through its signal', async () => {
    let sawAbort = false;
    const stuck = defineTool({
      name: 'stuck',
      description: 'never returns',
      parameters: z.object({}),
      timeoutMs: 50,
      execute: (_a, { signal }) =>
        new Promise(() => {
          signal.addEventListener('abort', () => {
            sawAbort = true;
          });
        }),
    });
    const { agent, server } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'stuck', arguments: {} }] }, { content: 'moved on' }] },
      { tools: [stuck] },
    );
    const result = await agent.send('go');
    expect(result.response).toBe('moved on');
    expect(sawAbort).toBe(true);
    expect(String(server.requests[1]!.messages.at(-1)!.content)).toMatch(/timed out after 50 ms/);
  });

  it('gives a tool that reads its signal only after a timeout a signal already aborted', async () => {
    let seen: { aborted: boolean; reason: unknown } | undefined;
    const late = defineTool({
      name: 'late',
      description: 'looks at its signal once its time is up',
      parameters: z.object({}),
      timeoutMs: 30,
      execute: (_a, ctx) =>
        new Promise((resolve) =>
          setTimeout(() => {
            seen = { aborted: ctx.signal.aborted, reason: ctx.signal.reason };
            resolve('too late');
          }, 80),
        ),
    });
    const { agent, server } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'late', arguments: {} }] }, { content: 'moved on' }] },
      { tools: [late] },
    );
    const result = await agent.send('go');
    expect(result.response).toBe('moved on');
    expect(String(server.requests[1]!.messages.at(-1)!.content)).toMatch(/timed out after 30 ms/);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen?.aborted).toBe(true);
    expect(String((seen?.reason as Error | undefined)?.message)).toMatch(/timed out after 30 ms/);
  });

  it('truncates huge results with a note saying how much was cut', async () => {
    const big = defineTool({
      name: 'big',
      description: 'huge output',
      parameters: z.object({}),
      execute: () => 'x'.repeat(5_000),
    });
    const { agent, server } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'big', arguments: {} }] }, { content: 'ok' }] },
      { tools: [big], limits: { maxToolResultChars: 1_000 } },
    );
    await agent.send('go');
    const content = String(server.requests[1]!.messages.at(-1)!.content);
    expect(content).toMatch(/\[truncated: 4000 of 5000 characters cut\]$/);
    expect(content.startsWith('x'.repeat(1_000))).toBe(true);
  });

  it('notes, then ends a turn of identical repeated calls', async () => {
    const ping = defineTool({
      name: 'ping',
      description: 'p',
      parameters: z.object({}),
      execute: () => 'pong',
    });
    const { agent, server, events } = await agentOn(
      {
        turns: [
          ...Array.from({ length: 3 }, () => ({ toolCalls: [{ name: 'ping', arguments: {} }] })),
          { content: 'I kept pinging' },
        ],
      },
      { tools: [ping], limits: { maxRepeatedCalls: 3 } },
    );
    const result = await agent.send('go');
    expect(result.terminateReason).toBe('repeated_calls');
    expect(events.some((e) => e.type === 'limit_warning' && e.limit === 'repeated_calls')).toBe(true);
    expect(String(server.requests[2]!.messages.at(-1)!.content)).toMatch(/same ping call .* 2 times/);
    expect(server.requests[3]!.tool_choice).toBe('none');
  });

  it('ends a turn after a streak of failing calls', async () => {
    const { agent } = await agentOn(
      {
        turns: [
          { toolCalls: [{ name: 'divide', arguments: { a: 1, b: 0 } }] },
          { toolCalls: [{ name: 'divide', arguments: { a: 2, b: 0 } }] },
          { content: 'giving up' },
        ],
      },
      { tools: [div], limits: { maxConsecutiveErrors: 2 } },
    );
    const result = await agent.send('go');
    expect(result.terminateReason).toBe('consecutive_errors');
    expect(result.response).toBe('giving up');
  });
});

describe('loop-breaking tools', () => {
  it.each([
    ['task_completion', { result: 'All done: 3 files.' }, 'completed'],
    ['ask_question', { question: 'Which folder?' }, 'question'],
    ['converse', { message: 'Hello there!' }, 'completed'],
  ] as const)('%s ends the turn at once with its text', async (name, args, reason) => {
    const other = defineTool({
      name: 'note',
      description: 'n',
      parameters: z.object({}),
      execute: () => 'noted',
    });
    const { agent, server } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'note', arguments: {} },
              { name, arguments: args },
            ],
          },
          { content: 'never asked' },
        ],
      },
      { tools: [other] },
    );
    const result = await agent.send('go');
    expect(result.terminateReason).toBe(reason);
    expect(result.success).toBe(true);
    expect(result.response).toBe(Object.values(args)[0]);
    expect(server.requests).toHaveLength(1);
    assertToolCallsAnswered(result.messages);
    expect(result.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
  });
});

describe('finish reasons', () => {
  it.each(['length', 'content_filter'] as const)(
    'ends the turn on %s without running tools',
    async (finishReason) => {
      let ran = false;
      const t = defineTool({
        name: 't',
        description: 't',
        parameters: z.object({}),
        execute: () => {
          ran = true;
          return 'x';
        },
      });
      const { agent } = await agentOn(
        { turns: [{ content: 'partial', toolCalls: [{ name: 't', arguments: {} }], finishReason }] },
        { tools: [t], eagerToolStart: false },
      );
      const result = await agent.send('go');
      expect(result.terminateReason).toBe(finishReason);
      expect(ran).toBe(false);
      assertToolCallsAnswered(result.messages);
      expect(String(result.messages.at(-1)!.content)).toMatch(/cut off/);
    },
  );
});

describe('model errors', () => {
  it('ends the turn in Error with the message, keeps the conversation, and recovers on the next message', async () => {
    const { agent } = await agentOn({
      turns: [{ error: { status: 401, message: 'bad key' }, times: 1 }, { content: 'unused' }],
    });
    const result = await agent.send('hi');
    expect(result.terminateReason).toBe('error');
    expect(result.error).toMatch(/bad key/);
    expect(agent.state).toBe('Error');
    expect(result.messages.at(-1)).toMatchObject({ role: 'user', content: 'hi' });
    const again = await agent.send('hi again');
    expect(again.terminateReason).toBe('completed');
  });
});
