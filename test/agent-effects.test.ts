import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { z } from 'zod';
import {
  type AgentEffects,
  agentMachine,
  bindAgentEffects,
  defineTool,
  runToolsEffect,
  ToolRegistry,
} from '../src/index.js';
import type { LlmCallInput, LlmCallOutput } from '../src/machines/actors/call-llm.js';
import { watchCrashes } from './support/crash-watch.js';
import { deferred } from './support/harness.js';
import { answerOutput, callsOutput } from './support/llm-outputs.js';
import { until } from './support/until.js';

// The effects bound to an agent actor and the `EffectIO` each run gets: start-up, the abort signal
// and listeners an interrupt fires, events sent after a stop, and what a late answer does.

import type { EffectIO } from '../src/machines/effect-io.js';

const crashes = watchCrashes();

const answer = answerOutput;

function agent(effects: Partial<AgentEffects>, messages = [{ role: 'system' as const, content: 'Test.' }]) {
  const actor = createActor(agentMachine, { input: { sessionId: 'fx', messages } });
  bindAgentEffects(actor, { callLlm: async () => answer('ok'), runTools: async () => [], ...effects });
  const errors: { message: string; code?: string }[] = [];
  actor.on('error', (e) => errors.push({ message: e.message, ...(e.code ? { code: e.code } : {}) }));
  actor.start();
  return { actor, errors };
}

describe('initialize', () => {
  it('adds the messages it returns after the input’s, before the first turn', async () => {
    let input: unknown;
    const { actor } = agent({
      initialize: async (i) => {
        input = i;
        return { messages: [{ role: 'system', content: 'Context.' }] };
      },
    });
    const ready = await until(actor, (s) => s.matches('AwaitingInput'));
    expect(input).toEqual({ sessionId: 'fx' });
    expect(ready.context.messages.map((m) => m.content)).toEqual(['Test.', 'Context.']);
    expect(ready.context.initialized).toBe(true);
    actor.stop();
  });

  it('adds nothing when it returns no messages, or when the effects have none', async () => {
    for (const initialize of [async () => ({}), undefined]) {
      const { actor } = agent(initialize ? { initialize } : {});
      const ready = await until(actor, (s) => s.matches('AwaitingInput'));
      expect(ready.context.messages).toHaveLength(1);
      expect(ready.context.initialized).toBe(true);
      actor.stop();
    }
  });

  it('a failed start-up rests in Error with its reason, and refuses a message (not initialized)', async () => {
    const failures: [string, () => Promise<never>][] = [
      ['rejected', async () => Promise.reject(new Error('no bundle here'))],
      [
        'thrown before its promise',
        () => {
          throw new Error('no bundle here');
        },
      ],
      ['a non-Error', async () => Promise.reject('no bundle here')],
    ];
    for (const [how, initialize] of failures) {
      const { actor, errors } = agent({ initialize });
      const failed = await until(actor, (s) => s.matches('Error'));
      expect(failed.context.error, how).toEqual({ message: 'no bundle here', code: 'init_failed' });
      expect(failed.context.terminateReason).toBe('error');
      expect(failed.context.initialized).toBe(false);
      expect(errors).toEqual([{ message: 'no bundle here', code: 'init_failed' }]);
      actor.send({ type: 'USER_MESSAGE', text: 'hi', at: Date.now() });
      expect(actor.getSnapshot().value).toBe('Error');
      actor.stop();
    }
  });

  it('without effects bound, the machine starts and the first model call says what is missing', async () => {
    const actor = createActor(agentMachine, { input: {} });
    actor.start();
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'hi', at: Date.now() });
    const failed = await until(actor, (s) => s.matches('Error'));
    expect(failed.context.error?.message).toContain('callLlm');
    expect(failed.context.error?.message).toContain('bindAgentEffects');
    actor.stop();
  });
});

describe('the EffectIO of a model call', () => {
  it('is not stopped while the call runs; sees the conversation as it stands', async () => {
    const seen: { aborted: boolean; reason: unknown; signal: boolean; conversation: unknown[] }[] = [];
    const { actor } = agent({
      callLlm: async (_input, io) => {
        seen.push({
          aborted: io.aborted,
          reason: io.reason,
          signal: io.signal.aborted,
          conversation: io.conversation?.().map((m) => m.content) ?? [],
        });
        return answer('done');
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'question', at: Date.now() });
    await until(actor, (s) => s.matches('Completed'));
    expect(seen).toEqual([
      { aborted: false, reason: undefined, signal: false, conversation: ['Test.', 'question'] },
    ]);
    actor.stop();
  });

  it('an interrupt aborts the signal and calls each listener once with the same reason; a removed listener is not called', async () => {
    const started = deferred<EffectIO>();
    const heard: string[] = [];
    const { actor } = agent({
      callLlm: (_input, io) => {
        const signal = io.signal;
        io.onAbort(() => heard.push(`first:${io.aborted}:${signal.aborted}:${io.reason === signal.reason}`));
        const remove = io.onAbort(() => heard.push('removed'));
        io.onAbort(() => heard.push('second'));
        remove();
        started.resolve(io);
        return new Promise<never>(() => {});
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    const io = await started.promise;
    expect(io.aborted).toBe(false);
    actor.send({ type: 'INTERRUPT' });
    expect(actor.getSnapshot().value).toBe('Interrupted');
    expect(heard).toEqual(['first:true:true:true', 'second']);
    expect(io.aborted).toBe(true);
    expect(io.signal.aborted).toBe(true);
    expect(io.signal.reason).toBe(io.reason);
    expect((io.reason as Error).name).toBe('AbortError');
    actor.stop();
    // Stopped once: listeners are not called again.
    expect(heard).toEqual(['first:true:true:true', 'second']);
  });

  it('the listeners and signal of a call that finished are never fired, not even when the agent stops', async () => {
    const heard: string[] = [];
    const signals: AbortSignal[] = [];
    const { actor } = agent({
      callLlm: async (_input, io) => {
        signals.push(io.signal);
        io.onAbort(() => heard.push('aborted'));
        return answer('done');
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    await until(actor, (s) => s.matches('Completed'));
    actor.send({ type: 'USER_MESSAGE', text: 'again', at: Date.now() });
    await until(actor, (s) => s.matches('Completed') && s.context.turn === 2);
    actor.stop();
    expect(heard).toEqual([]);
    expect(signals.map((s) => s.aborted)).toEqual([false, false]);
  });

  it('hands out one signal per run, however often it is read', async () => {
    const signals: AbortSignal[] = [];
    const { actor } = agent({
      callLlm: async (_input, io) => {
        signals.push(io.signal, io.signal);
        return answer('done');
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    await until(actor, (s) => s.matches('Completed'));
    expect(signals).toHaveLength(2);
    expect(signals[0]).toBe(signals[1]);
    actor.stop();
  });

  it('a stop calls the listeners of a run that never read its signal, and a run with neither stops cleanly', async () => {
    const started = deferred<EffectIO>();
    const heard: boolean[] = [];
    let runs = 0;
    const { actor } = agent({
      callLlm: (_input, io) => {
        // The first run listens without a signal; the second has neither.
        if (runs++ === 0) io.onAbort(() => heard.push(io.aborted));
        started.resolve(io);
        return new Promise<never>(() => {});
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    await started.promise;
    actor.send({ type: 'INTERRUPT' });
    expect(heard).toEqual([true]);
    actor.send({ type: 'USER_MESSAGE', text: 'again', at: Date.now() });
    await until(actor, () => runs === 2);
    actor.send({ type: 'INTERRUPT' });
    await new Promise((r) => setTimeout(r, 20));
    expect(crashes).toEqual([]);
    expect(actor.getSnapshot().value).toBe('Interrupted');
    actor.stop();
  });

  it('a stopped call’s actor ends with the status `stopped`, as a promise actor does', async () => {
    const statuses: string[] = [];
    const actor = createActor(agentMachine, {
      input: { sessionId: 'fx' },
      inspect: (e) => {
        if (e.type === '@xstate.snapshot' && (e.actorRef as { id?: string }).id === 'callLlm')
          statuses.push((e.snapshot as { status: string }).status);
      },
    });
    bindAgentEffects(actor, { callLlm: () => new Promise<never>(() => {}), runTools: async () => [] });
    actor.start();
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    actor.send({ type: 'INTERRUPT' });
    expect(statuses.at(-1)).toBe('stopped');
    actor.stop();
  });

  it('a running call persists as a promise actor does (status, output, error, input: nothing of its run), and restores to a run of its own', async () => {
    const first = agent({ callLlm: () => new Promise<never>(() => {}) });
    await until(first.actor, (s) => s.matches('AwaitingInput'));
    first.actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    const persisted = first.actor.getPersistedSnapshot() as unknown as {
      children: Record<string, { snapshot: object }>;
    };
    first.actor.stop();
    const call = persisted.children.callLlm!.snapshot;
    expect(Reflect.ownKeys(call).sort()).toEqual(['error', 'input', 'output', 'status']);
    expect(call).toMatchObject({ status: 'active', input: { turn: 1, iteration: 1 } });
    // XState starts a call restored while active again: it runs, with the signal of a run of its own.
    const restored = createActor(agentMachine, { snapshot: persisted as never, input: {} });
    const signals: AbortSignal[] = [];
    bindAgentEffects(restored, {
      callLlm: async (_input, io) => {
        signals.push(io.signal);
        return answer('again');
      },
      runTools: async () => [],
    });
    restored.start();
    const done = await until(restored, (s) => s.matches('Completed'));
    expect(done.context.response).toBe('again');
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
    restored.stop();
  });

  it('events a stopped call sends reach nothing, not even the next turn’s call', async () => {
    const runs: EffectIO[] = [];
    const { actor } = agent({
      callLlm: (_input, io) => {
        runs.push(io);
        return new Promise<never>(() => {});
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'first', at: Date.now() });
    await until(actor, () => runs.length === 1);
    actor.send({ type: 'INTERRUPT' });
    actor.send({ type: 'USER_MESSAGE', text: 'second', at: Date.now() });
    await until(actor, () => runs.length === 2);
    runs[0]!.send({ type: 'LLM.DELTA', delta: 'stale text' });
    runs[1]!.send({ type: 'LLM.DELTA', delta: 'fresh' });
    expect(actor.getSnapshot().context.partial).toBe('fresh');
    actor.stop();
  });

  it('a tool’s signal aborts with the agent’s reason when the turn is interrupted', async () => {
    const reached = deferred<AbortSignal>();
    const registry = new ToolRegistry([
      defineTool({
        name: 'wait',
        description: 'waits until stopped',
        parameters: z.object({}),
        execute: (_args, ctx) => {
          reached.resolve(ctx.signal);
          return new Promise(() => {});
        },
      }),
    ]);
    let runnerIo: EffectIO | undefined;
    const call = { id: 'w1', name: 'wait', argsText: '{}', args: {}, needsApproval: false };
    let replies = 0;
    const { actor } = agent({
      callLlm: async () => (replies++ === 0 ? callsOutput([call]) : answer('done')),
      runTools: (input, io) => {
        runnerIo = io;
        return runToolsEffect({ registry })(input, io);
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    const signal = await reached.promise;
    actor.send({ type: 'INTERRUPT' });
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(runnerIo?.reason);
    actor.stop();
  });

  it('a signal first read after the stop is already aborted, with the stop’s reason', async () => {
    const started = deferred<EffectIO>();
    const { actor } = agent({
      callLlm: (_input, io) => {
        started.resolve(io);
        return new Promise<never>(() => {});
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    const io = await started.promise;
    actor.send({ type: 'INTERRUPT' });
    expect(io.signal.aborted).toBe(true);
    expect(io.signal.reason).toBe(io.reason);
    expect(io.reason).toBeInstanceOf(DOMException);
    actor.stop();
  });

  it('events sent after the stop are dropped, and a late answer or failure changes nothing', async () => {
    for (const settle of ['resolve', 'reject'] as const) {
      const started = deferred<EffectIO>();
      const result = deferred<LlmCallOutput>();
      const { actor, errors } = agent({
        callLlm: (_input, io) => {
          io.send({ type: 'LLM.DELTA', delta: 'Partial' });
          started.resolve(io);
          return result.promise;
        },
      });
      await until(actor, (s) => s.matches('AwaitingInput'));
      actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
      const io = await started.promise;
      expect(actor.getSnapshot().context.partial).toBe('Partial');
      actor.send({ type: 'INTERRUPT' });
      const interrupted = actor.getSnapshot();
      io.send({ type: 'LLM.DELTA', delta: ' more' });
      if (settle === 'resolve') result.resolve(answer('too late'));
      else result.reject(new Error('too late'));
      await new Promise((r) => setTimeout(r, 20));
      const after = actor.getSnapshot();
      expect(after.value, settle).toBe('Interrupted');
      expect(after.context).toEqual(interrupted.context);
      expect(after.context.response).toBe('Partial');
      expect(errors).toEqual([]);
      actor.stop();
    }
  });

  it('a call that throws before returning its promise ends the turn in Error with its message', async () => {
    const { actor, errors } = agent({
      callLlm: () => {
        throw Object.assign(new Error('bad request'), { code: 'invalid_request' });
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'go', at: Date.now() });
    const failed = await until(actor, (s) => s.matches('Error'));
    expect(failed.context.error).toEqual({ message: 'bad request', code: 'invalid_request' });
    expect(errors).toEqual([{ message: 'bad request', code: 'invalid_request' }]);
    actor.stop();
  });

  it('the model call gets the turn’s input: session, turn, iteration, conversation, tools on, the deadline', async () => {
    const inputs: LlmCallInput[] = [];
    const { actor } = agent({
      callLlm: async (input) => {
        inputs.push(input);
        return answer('fine');
      },
    });
    await until(actor, (s) => s.matches('AwaitingInput'));
    actor.send({ type: 'USER_MESSAGE', text: 'hello', at: 1_000 });
    await until(actor, (s) => s.matches('Completed'));
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({
      sessionId: 'fx',
      turn: 1,
      iteration: 1,
      plan: null,
      compaction: null,
      mayCompact: true,
      toolsEnabled: true,
      deadline: null,
    });
    expect(inputs[0]!.messages.map((m) => m.content)).toEqual(['Test.', 'hello']);
    actor.stop();
  });
});
