/**
 * The `runTools` effect on its own (no machine), with real tools: what it tells the machine as calls
 * finish, the results it resolves with, the hooks around each call (a result recorded before a crash,
 * a failing transcript write), what a tool is given, and how a stop reaches the tools.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolRegistry } from '../src/index.js';
import type { Message } from '../src/llm/message.js';
import {
  type RunToolsInput,
  runToolsEffect,
  type ToolRunnerOptions,
} from '../src/machines/actors/run-tools.js';
import type { AgentActorEvent } from '../src/machines/agent-events.js';
import type { TelemetryScope } from '../src/telemetry/telemetry-scope.js';
import type { ToolContext } from '../src/tools/define-tool.js';
import type { ToolCallRequest, ToolResult } from '../src/tools/tool-call.js';
import { effectRun } from './support/effect-io.js';
import { deferred } from './support/harness.js';

const contexts: ToolContext[] = [];
/** Resolves after `ms` with the text. */
const echo = defineTool({
  name: 'echo',
  description: 'echoes after a while',
  parameters: z.object({ text: z.string(), ms: z.number().default(0) }),
  execute: async ({ text, ms }, ctx) => {
    contexts.push(ctx);
    await new Promise((r) => setTimeout(r, ms));
    return text;
  },
});
const stopReasons: unknown[] = [];
/** Runs until its signal aborts, then fails with the abort's reason (noted in `stopReasons`). */
const wait = defineTool({
  name: 'wait',
  description: 'waits to be stopped',
  parameters: z.object({}),
  execute: (_args, ctx) =>
    new Promise((_, reject) =>
      ctx.signal.addEventListener('abort', () => {
        stopReasons.push(ctx.signal.reason);
        reject(ctx.signal.reason);
      }),
    ),
});
const registry = new ToolRegistry([echo, wait]);

const call = (id: string, name: string, args: object = {}): ToolCallRequest => ({
  id,
  name,
  argsText: JSON.stringify(args),
  args,
  needsApproval: false,
});

function input(calls: ToolCallRequest[], over: Partial<RunToolsInput> = {}): RunToolsInput {
  return { sessionId: 's', turn: 2, iteration: 3, calls, deadline: null, ...over };
}

const finishedIds = (sent: AgentActorEvent[]) =>
  sent.flatMap((e) => (e.type === 'TOOL.FINISHED' ? [e.result.toolCallId] : []));

// A mutant that stalls a call fails here in 5 s, before the mutation run's own time-out.
describe('the runTools effect', { timeout: 5_000 }, () => {
  it('runs the calls in parallel, sends TOOL.FINISHED as each ends except the last, and resolves with every result in order', async () => {
    const effect = runToolsEffect({ registry });
    const run = effectRun();
    const calls = [
      call('slow', 'echo', { text: 'S', ms: 60 }),
      call('fast', 'echo', { text: 'F', ms: 0 }),
      call('mid', 'echo', { text: 'M', ms: 30 }),
    ];
    const started = Date.now();
    const results = await effect(input(calls), run.io);
    expect(Date.now() - started).toBeLessThan(150);
    expect(results.map((r) => [r.toolCallId, r.name, r.content, r.isError])).toEqual([
      ['slow', 'echo', 'S', false],
      ['fast', 'echo', 'F', false],
      ['mid', 'echo', 'M', false],
    ]);
    // The one that ended last (slow) is the done event's to report.
    expect(finishedIds(run.sent)).toEqual(['fast', 'mid']);
    expect(run.sent.every((e) => e.type === 'TOOL.FINISHED')).toBe(true);
    const finished = run.sent.map((e) => (e as { result: ToolResult }).result);
    expect(finished).toEqual([results[1], results[2]]);
  });

  it('sends nothing for a one-call batch, and resolves with no results for none', async () => {
    const effect = runToolsEffect({ registry });
    const run = effectRun();
    expect(await effect(input([call('a', 'echo', { text: 'x' })]), run.io)).toMatchObject([{ content: 'x' }]);
    expect(run.sent).toEqual([]);
    expect(await effect(input([]), run.io)).toEqual([]);
  });

  it('gives each tool the session, turn, iteration and the conversation as it stands', async () => {
    const conversation: Message[] = [{ role: 'user', content: 'hi' }];
    contexts.length = 0;
    await runToolsEffect({ registry })(input([call('a', 'echo', { text: 'x' })]), effectRun(conversation).io);
    expect(contexts[0]).toMatchObject({ sessionId: 's', turn: 2, iteration: 3, toolCallId: 'a' });
    expect(contexts[0]!.messages).toBe(conversation);
    // A run without a conversation (no machine around it) gives an empty one.
    await runToolsEffect({ registry })(input([call('b', 'echo', { text: 'x' })]), effectRun().io);
    expect(contexts[1]!.messages).toEqual([]);
  });

  it('cuts a call at its time-out, and a long result at maxResultChars', async () => {
    const [timedOut] = await runToolsEffect({ registry, toolTimeoutMs: 40 })(
      input([call('w', 'wait')]),
      effectRun().io,
    );
    expect(timedOut).toMatchObject({ toolCallId: 'w', isError: true });
    expect(timedOut!.content).toMatch(/timed out after 40 ms/);
    const [long] = await runToolsEffect({ registry, maxResultChars: 5 })(
      input([call('l', 'echo', { text: '0123456789' })]),
      effectRun().io,
    );
    expect(long!.content).toBe('01234\n[truncated: 5 of 10 characters cut]');
  });

  it('cuts the calls at the turn’s deadline', async () => {
    const effect = runToolsEffect({ registry });
    const [result] = await effect(input([call('w', 'wait')], { deadline: Date.now() + 40 }), effectRun().io);
    expect(result).toMatchObject({ toolCallId: 'w', isError: true, deadlineExceeded: true });
  });

  it('stops the running tools when the run is stopped, with its reason', async () => {
    const effect = runToolsEffect({ registry });
    const run = effectRun();
    const pending = effect(input([call('w1', 'wait'), call('w2', 'wait')]), run.io);
    await new Promise((r) => setTimeout(r, 20));
    stopReasons.length = 0;
    const reason = new Error('user interrupt');
    run.stop(reason);
    const results = await pending;
    expect(results.map((r) => [r.toolCallId, r.content])).toEqual([
      ['w1', 'Error: interrupted by the user before the tool finished.'],
      ['w2', 'Error: interrupted by the user before the tool finished.'],
    ]);
    expect(stopReasons).toEqual([reason, reason]);
    // Nothing reaches the machine after the stop.
    expect(run.sent).toEqual([]);
  });

  describe('hooks', () => {
    it('beforeRun and afterRun see each call with the input, in that order around the run', async () => {
      const order: string[] = [];
      const given = input([call('a', 'echo', { text: 'x' })]);
      const effect = runToolsEffect({
        registry,
        beforeRun: async (c, i) => {
          expect(i).toBe(given);
          order.push(`before ${c.id}`);
          return undefined;
        },
        afterRun: async (result, c, i) => {
          expect(i).toBe(given);
          order.push(`after ${c.id} ${result.content}`);
        },
      });
      const results = await effect(given, effectRun().io);
      expect(order).toEqual(['before a', 'after a x']);
      expect(results[0]!.content).toBe('x');
    });

    it('a result beforeRun returns (recorded before a crash) is used without a run or afterRun, and told to telemetry', async () => {
      const recorded: ToolResult = {
        toolCallId: 'a',
        name: 'echo',
        content: 'from the ledger',
        isError: false,
        durationMs: 5,
      };
      const heard: string[] = [];
      const telemetry: TelemetryScope = {
        modelCallStart: () => undefined,
        modelCallEnd: () => {},
        toolStart: (info) => {
          heard.push(`start ${info.toolCallId}${info.fromLedger ? ' ledger' : ''}`);
          return info.toolCallId;
        },
        toolRun: (_, execute) => execute(),
        toolEnd: (handle, info) => heard.push(`end ${String(handle)} ${info.result}`),
      };
      let afters = 0;
      contexts.length = 0;
      const effect = runToolsEffect({
        registry,
        telemetry,
        beforeRun: async (c) => (c.id === 'a' ? recorded : undefined),
        afterRun: () => void afters++,
      });
      const run = effectRun();
      const results = await effect(
        input([call('a', 'echo', { text: 'x' }), call('b', 'echo', { text: 'y', ms: 20 })]),
        run.io,
      );
      expect(results[0]).toBe(recorded);
      expect(results[1]!.content).toBe('y');
      expect(contexts.map((c) => c.toolCallId)).toEqual(['b']);
      expect(afters).toBe(1);
      expect(heard).toEqual(['start a ledger', 'end a from the ledger', 'start b', 'end b y']);
      // The recorded one finished first: the machine hears of it.
      expect(run.sent).toEqual([{ type: 'TOOL.FINISHED', result: recorded }]);
    });

    it('a failing hook gives the call an error result naming the failure, and the batch goes on', async () => {
      const cases: [string, Partial<ToolRunnerOptions>, string][] = [
        [
          'beforeRun throws',
          {
            beforeRun: async (c) => {
              if (c.id === 'a') throw new Error('transcript write failed');
              return undefined;
            },
          },
          'transcript write failed',
        ],
        [
          'afterRun throws a non-Error',
          {
            afterRun: (_, c) => {
              if (c.id === 'a') throw 'disk full';
            },
          },
          'disk full',
        ],
      ];
      for (const [how, hooks, cause] of cases) {
        const run = effectRun();
        const results = await runToolsEffect({ registry, ...hooks })(
          input([call('a', 'echo', { text: 'x' }), call('b', 'echo', { text: 'y', ms: 30 })]),
          run.io,
        );
        expect(results[0], how).toEqual({
          toolCallId: 'a',
          name: 'echo',
          content: `Error: the call could not be run: ${cause}`,
          isError: true,
          durationMs: 0,
        });
        expect(results[1]!.content, how).toBe('y');
        // The failed call counts as finished: the machine hears of it, the last call is the done event's.
        expect(run.sent, how).toEqual([{ type: 'TOOL.FINISHED', result: results[0] }]);
      }
    });

    it('a call stopped while beforeRun wrote does not run', async () => {
      const writing = deferred();
      const run = effectRun();
      contexts.length = 0;
      const effect = runToolsEffect({ registry, beforeRun: () => writing.promise.then(() => undefined) });
      const pending = effect(input([call('a', 'echo', { text: 'x' })]), run.io);
      run.stop(new Error('user interrupt'));
      writing.resolve();
      const [result] = await pending;
      expect(contexts).toEqual([]);
      expect(result).toMatchObject({ toolCallId: 'a', isError: true });
      expect(result!.content).toContain('user interrupt');
    });
  });
});
