import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type Tool, type ToolContext } from '../src/tools/define-tool.js';
import {
  type ExecuteToolCallOptions,
  executeToolCall,
  fromSignal,
  type StopNotice,
} from '../src/tools/execute-tool-call.js';
import { planToolCall, type ToolCallRequest } from '../src/tools/tool-call.js';
import { ToolRegistry } from '../src/tools/tool-registry.js';

// executeToolCall on its own: every failure becomes an error result the model can read, and a call's
// timer and stop listener end with it. The agent tests reach it through whole turns; these name each
// answer. Written for the survivors of `npm run mutation -- src/tools` (docs/testing.md).

const never: StopNotice = { aborted: false, reason: undefined, onAbort: () => () => {} };

function options(more: Partial<ExecuteToolCallOptions> = {}): ExecuteToolCallOptions {
  return {
    stop: never,
    timeoutMs: 5_000,
    deadline: null,
    maxResultChars: 10_000,
    context: { sessionId: 's1' } as ExecuteToolCallOptions['context'],
    ...more,
  };
}

const echo = defineTool({
  name: 'echo',
  description: 'Echoes',
  parameters: z.object({
    text: z.string(),
    times: z.number().int().min(1).optional(),
    nested: z.object({ n: z.number() }).optional(),
  }),
  execute: ({ text }) => text,
});

function toolReturning(name: string, execute: (ctx: ToolContext) => unknown, more: Partial<Tool> = {}): Tool {
  return {
    ...defineTool({ name, description: name, parameters: z.object({}), execute: (_a, ctx) => execute(ctx) }),
    ...more,
  };
}

function call(
  name: string,
  argsText: string,
  registry: ToolRegistry,
  extra: Partial<ToolCallRequest> = {},
): ToolCallRequest {
  return { ...planToolCall({ id: `call-${name}`, name, argsText }, registry), ...extra };
}

const run = (registry: ToolRegistry, request: ToolCallRequest, more?: Partial<ExecuteToolCallOptions>) =>
  executeToolCall(registry, request, options(more));

describe('executeToolCall answers every failure as an error result', () => {
  const registry = new ToolRegistry([echo]);

  it('a call that cannot be run answers with its problem', async () => {
    const result = await run(
      registry,
      call('echo', '{}', registry, { problem: 'the call has no function name' }),
    );
    expect(result).toMatchObject({
      content: 'Error: the call has no function name.',
      isError: true,
      toolCallId: 'call-echo',
    });
  });

  it('an unknown tool names the tools there are, or says there are none', async () => {
    expect((await run(registry, call('nope', '{}', registry))).content).toBe(
      'Error: unknown tool "nope". Available tools: echo.',
    );
    const empty = new ToolRegistry();
    expect((await run(empty, call('nope', '{}', empty))).content).toBe(
      'Error: unknown tool "nope". Available tools: (none).',
    );
  });

  it('arguments that are not JSON are quoted (cut at 200 characters) with what to send instead', async () => {
    const short = await run(registry, call('echo', '{"text": ', registry));
    expect(short.content).toBe(
      'Error: the arguments of this "echo" call are not valid JSON: "{\\"text\\": ". Send a JSON object matching the tool schema.',
    );
    const long = await run(registry, call('echo', `{${'x'.repeat(300)}`, registry));
    expect(long.content).toContain(`"{${'x'.repeat(199)}…"`);
    expect(long.content).not.toContain('x'.repeat(200));
    const exactly = await run(registry, call('echo', `{${'y'.repeat(199)}`, registry));
    expect(exactly.content).toContain(`"{${'y'.repeat(199)}"`);
  });

  it('arguments against the schema name each field, joined by "; ", the root as (root)', async () => {
    const result = await run(registry, call('echo', '{"times": 0, "nested": {"n": "1"}}', registry));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /^Error: invalid arguments for "echo": text: [^;]+; times: [^;]+; nested\.n: [^;]+\.$/,
    );
    const root = await run(registry, call('echo', '[1]', registry));
    expect(root.content).toMatch(/^Error: invalid arguments for "echo": \(root\): /);
  });

  it('a call stopped before it starts does not run', async () => {
    let ran = 0;
    const tools = new ToolRegistry([toolReturning('t', () => ran++)]);
    const stopped: StopNotice = { aborted: true, reason: 'user', onAbort: () => () => {} };
    const result = await run(tools, call('t', '{}', tools), { stop: stopped });
    expect(result).toMatchObject({ content: 'Error: interrupted before the tool started.', isError: true });
    expect(ran).toBe(0);
  });

  it('a throw becomes its message, the error name when it has none, or the thrown value', async () => {
    const tools = new ToolRegistry([
      toolReturning('message', () => {
        throw new Error('disk on fire');
      }),
      toolReturning('nameless', () => {
        throw new TypeError('');
      }),
      toolReturning('value', () => {
        throw 42;
      }),
      toolReturning('rejects', () => Promise.reject(new Error('later'))),
    ]);
    const content = async (name: string) => (await run(tools, call(name, '{}', tools))).content;
    expect(await content('message')).toBe('Error: disk on fire');
    expect(await content('nameless')).toBe('Error: TypeError');
    expect(await content('value')).toBe('Error: 42');
    expect(await content('rejects')).toBe('Error: later');
  });
});

describe('executeToolCall turns what a tool returns into the result text', () => {
  it('text as it is, nothing as empty text, anything else as JSON, at once or later', async () => {
    const values: Record<string, unknown> = {
      text: 'plain',
      none: undefined,
      nil: null,
      zero: 0,
      object: { a: [1] },
      no: false,
    };
    const tools = new ToolRegistry(
      Object.entries(values).flatMap(([name, value]) => [
        toolReturning(name, () => value),
        toolReturning(`${name}-later`, () => Promise.resolve(value)),
      ]),
    );
    const expected: Record<string, string> = {
      text: 'plain',
      none: '',
      nil: '',
      zero: '0',
      object: '{"a":[1]}',
      no: 'false',
    };
    for (const [name, text] of Object.entries(expected)) {
      for (const tool of [name, `${name}-later`]) {
        const result = await run(tools, call(tool, '{}', tools));
        expect([tool, result.content, result.isError]).toEqual([tool, text, false]);
      }
    }
  });

  it('waits for a thenable function, and sends an object whose `then` is not a function as JSON', async () => {
    const thenableFunction = Object.assign(() => {}, {
      // biome-ignore lint/suspicious/noThenProperty: a thenable is what this case is about
      then: (resolve: (v: unknown) => void) => resolve('from then'),
    });
    const tools = new ToolRegistry([
      toolReturning('fn', () => thenableFunction),
      // biome-ignore lint/suspicious/noThenProperty: an object whose `then` is not a function
      toolReturning('obj', () => ({ then: 1 })),
    ]);
    expect((await run(tools, call('fn', '{}', tools))).content).toBe('from then');
    expect((await run(tools, call('obj', '{}', tools))).content).toBe('{"then":1}');
  });

  it('cuts a long result, saying how much was cut', async () => {
    const tools = new ToolRegistry([
      toolReturning('long', () => 'abcdefghij'),
      toolReturning('fits', () => 'abcde'),
    ]);
    expect((await run(tools, call('long', '{}', tools), { maxResultChars: 5 })).content).toBe(
      'abcde\n[truncated: 5 of 10 characters cut]',
    );
    expect((await run(tools, call('fits', '{}', tools), { maxResultChars: 5 })).content).toBe('abcde');
  });
});

describe('executeToolCall stops a running call', () => {
  const hang = () => new Promise<never>(() => {});

  it('at its time limit, aborting the signal the tool reads', async () => {
    let signal: AbortSignal | undefined;
    const tools = new ToolRegistry([
      toolReturning('slow', (ctx) => {
        signal = ctx.signal;
        return hang();
      }),
    ]);
    const result = await run(tools, call('slow', '{}', tools), { timeoutMs: 20 });
    expect(result).toMatchObject({
      content: 'Error: tool "slow" timed out after 20 ms; it was stopped.',
      isError: true,
    });
    expect(result.deadlineExceeded).toBeUndefined();
    expect(signal?.aborted).toBe(true);
  });

  it("at the turn's deadline when it comes first, marked as the deadline's", async () => {
    const tools = new ToolRegistry([toolReturning('slow', hang, { timeoutMs: 60_000 })]);
    const result = await run(tools, call('slow', '{}', tools), { deadline: Date.now() + 20 });
    expect(result).toMatchObject({
      content: `Error: tool "slow" the turn's deadline passed while it ran; it was stopped.`,
      deadlineExceeded: true,
    });
  });

  it('when the user interrupts; a signal first read after the stop is already aborted', async () => {
    const controller = new AbortController();
    let lateSignal: AbortSignal | undefined;
    const tools = new ToolRegistry([
      toolReturning('slow', (ctx) => {
        setTimeout(() => {
          lateSignal = ctx.signal;
        }, 30);
        return hang();
      }),
    ]);
    setTimeout(() => controller.abort('user'), 10);
    const result = await run(tools, call('slow', '{}', tools), { stop: fromSignal(controller.signal) });
    expect(result).toMatchObject({
      content: 'Error: interrupted by the user before the tool finished.',
      isError: true,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lateSignal?.aborted).toBe(true);
    expect(lateSignal?.reason).toBe('user');
  });

  it('stops listening and clears its timer once the call is over', async () => {
    let listening = 0;
    const counted: StopNotice = {
      aborted: false,
      reason: undefined,
      onAbort: () => {
        listening++;
        return () => listening--;
      },
    };
    let signal: AbortSignal | undefined;
    const tools = new ToolRegistry([
      toolReturning('quick', (ctx) => {
        signal = ctx.signal;
        return Promise.resolve('done');
      }),
    ]);
    const result = await run(tools, call('quick', '{}', tools), { stop: counted, timeoutMs: 20 });
    expect(result.content).toBe('done');
    expect(listening).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(signal?.aborted).toBe(false);
  });

  it('fromSignal reports the signal, calls a listener once, and can stop listening', () => {
    const controller = new AbortController();
    const notice = fromSignal(controller.signal);
    let heard = 0;
    let removedHeard = 0;
    notice.onAbort(() => heard++);
    notice.onAbort(() => removedHeard++)();
    expect([notice.aborted, notice.reason]).toEqual([false, undefined]);
    controller.abort('why');
    controller.signal.dispatchEvent(new Event('abort'));
    expect([notice.aborted, notice.reason, heard, removedHeard]).toEqual([true, 'why', 1, 0]);
  });
});

describe('ToolRegistry', () => {
  it('lists its tools in order and sends the list again after a removal', () => {
    const other = toolReturning('other', () => '');
    const registry = new ToolRegistry([echo, other]);
    expect(registry.tools.map((t) => t.name)).toEqual(['echo', 'other']);
    expect(registry.toJSON().map((t) => t.function.name)).toEqual(['echo', 'other']);
    expect(registry.remove('echo')).toBe(true);
    expect(registry.remove('echo')).toBe(false);
    expect(registry.toJSON().map((t) => t.function.name)).toEqual(['other']);
    expect(new ToolRegistry().size).toBe(0);
  });
});
