/**
 * The context a tool's `execute` gets (`executeToolCall`): the caller's fields and the call's, in the
 * order a spread gave them, and `signal` an enumerable getter that makes the signal when first read.
 * It is made without an object literal that adds keys after a spread (Node 20's slow path, about 5 us
 * a tool call; bench/README.md, llm36): these pin that nothing a tool can see changed.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../src/tools/define-tool.js';
import {
  type ExecuteToolCallOptions,
  executeToolCall,
  type StopNotice,
} from '../src/tools/execute-tool-call.js';
import { planToolCall } from '../src/tools/tool-call.js';
import { ToolRegistry } from '../src/tools/tool-registry.js';
import { countingAbortControllers } from './support/abort-controller-count.js';

const never: StopNotice = { aborted: false, reason: undefined, onAbort: () => () => {} };

function registryOf(execute: (ctx: ToolContext) => unknown): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: 'look',
      description: 'look',
      parameters: z.object({}),
      execute: (_a, ctx) => execute(ctx),
    }),
  ]);
}

const run = (registry: ToolRegistry, context: ExecuteToolCallOptions['context']) =>
  executeToolCall(registry, planToolCall({ id: 'call-look', name: 'look', argsText: '{}' }, registry), {
    stop: never,
    timeoutMs: 5_000,
    deadline: null,
    maxResultChars: 10_000,
    context,
  });

describe("the tool's context", () => {
  it("holds the caller's fields, the call's, and a signal read as a plain field, made when first read", async () => {
    let seen: ToolContext | undefined;
    const tools = registryOf((ctx) => {
      seen = ctx;
      return 'ok';
    });
    await countingAbortControllers(async (made) => {
      await run(tools, { sessionId: 's1', turn: 2, iteration: 3, messages: [] });
      expect(made()).toBe(0);
      const ctx = seen!;
      // The keys a spread of the caller's context followed by the call's fields gave, in that order.
      expect(Object.keys(ctx)).toEqual([
        'sessionId',
        'turn',
        'iteration',
        'messages',
        'toolCallId',
        'idempotencyKey',
        'progress',
        'signal',
      ]);
      expect(ctx).toMatchObject({ sessionId: 's1', turn: 2, iteration: 3, toolCallId: 'call-look' });
      expect(ctx.idempotencyKey).toBe('s1:call-look');
      expect(Object.getOwnPropertyDescriptor(ctx, 'signal')).toMatchObject({ enumerable: true });
      expect(made()).toBe(0);
      // A spread reads the signal (made then, once) and copies it as a value; JSON leaves nothing hidden.
      const copy = { ...ctx };
      expect(made()).toBe(1);
      expect(copy.signal).toBe(ctx.signal);
      expect(copy.signal.aborted).toBe(false);
      expect(Object.keys(JSON.parse(JSON.stringify(ctx)))).toEqual([
        'sessionId',
        'turn',
        'iteration',
        'messages',
        'toolCallId',
        'idempotencyKey',
        'signal',
      ]);
    });
  });

  it("two calls' contexts have signals of their own", async () => {
    const signals: AbortSignal[] = [];
    const tools = registryOf((ctx) => {
      signals.push(ctx.signal);
      return 'ok';
    });
    await run(tools, { sessionId: 's1', turn: 1, iteration: 1 });
    await run(tools, { sessionId: 's1', turn: 1, iteration: 1 });
    expect(signals).toHaveLength(2);
    expect(signals[0]).not.toBe(signals[1]);
  });
});
