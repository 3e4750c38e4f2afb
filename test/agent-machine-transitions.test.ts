import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { type AgentEffects, agentMachine, bindAgentEffects } from '../src/index.js';
import type { LlmCallInput, LlmCallOutput } from '../src/machines/actors/call-llm.js';
import type { AgentMachineInput } from '../src/machines/agent-context.js';
import type { ToolCallRequest, ToolResult } from '../src/tools/tool-call.js';
import { answerOutput, callsOutput } from './support/llm-outputs.js';
import { until } from './support/until.js';

// The statechart's transitions and guards, driven through its effects: which reply runs its calls,
// waits for approval or ends the turn; what the final call after a limit or a deadline gets; which
// events a state ignores. The model is a list of replies; the tools answer from a table.

const call = (id: string, extra: Partial<ToolCallRequest> = {}): ToolCallRequest => ({
  id,
  name: 'lookup',
  argsText: `{"id":"${id}"}`,
  args: { id },
  needsApproval: false,
  ...extra,
});

const withCalls = callsOutput;
const answer = answerOutput;

type Reply = LlmCallOutput | Error | ((input: LlmCallInput) => LlmCallOutput | Promise<LlmCallOutput>);

/** An agent actor whose model answers with `replies` in order and whose tools answer `result(call)`. */
function scripted(
  replies: Reply[],
  options: { input?: AgentMachineInput; effects?: Partial<AgentEffects> } = {},
) {
  const inputs: LlmCallInput[] = [];
  const ran: string[] = [];
  const actor = createActor(agentMachine, {
    input: { sessionId: 'm', messages: [{ role: 'system', content: 'Test.' }], ...options.input },
  });
  const events: { type: string; [key: string]: unknown }[] = [];
  actor.on('*', (e) => events.push(e as never));
  bindAgentEffects(actor, {
    callLlm: async (input) => {
      inputs.push(input);
      const next = replies.shift();
      if (next === undefined) return answer('no more replies');
      if (next instanceof Error) throw next;
      return typeof next === 'function' ? next(input) : next;
    },
    runTools: async ({ calls }) =>
      calls.map((c): ToolResult => {
        ran.push(c.id);
        const failed = c.name === 'fails';
        return { toolCallId: c.id, name: c.name, content: `${c.id} ok`, isError: failed, durationMs: 1 };
      }),
    ...options.effects,
  });
  actor.start();
  const send = async (text: string) => {
    await until(actor, (s) => !s.matches('Initializing'));
    actor.send({ type: 'USER_MESSAGE', text, at: 1_000 });
  };
  const rest = () =>
    until(actor, (s) => ['Completed', 'Error', 'Interrupted', 'WaitingApproval'].includes(String(s.value)));
  return { actor, inputs, ran, events, send, rest };
}

describe('a reply', () => {
  it('with calls runs them and calls the model again with their results', async () => {
    const { actor, inputs, ran, send, rest } = scripted([withCalls([call('a'), call('b')]), answer('done')]);
    await send('go');
    const done = await rest();
    expect(done.value).toBe('Completed');
    expect(ran).toEqual(['a', 'b']);
    expect(inputs.map((i) => i.iteration)).toEqual([1, 2]);
    expect(inputs[1]!.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'a ok' },
      { role: 'tool', tool_call_id: 'b', content: 'b ok' },
    ]);
    expect(done.context).toMatchObject({ response: 'done', terminateReason: 'completed' });
    actor.stop();
  });

  it('with a call that needs approval waits, runs nothing, and goes on once it is approved', async () => {
    const { actor, ran, send, rest } = scripted([
      withCalls([call('a'), call('b', { name: 'deploy', needsApproval: true })]),
      answer('deployed'),
    ]);
    await send('go');
    const waiting = await rest();
    expect(waiting.value).toBe('WaitingApproval');
    expect(waiting.context.batch.pending).toEqual(['b']);
    // An answer for a call that is not pending changes nothing.
    actor.send({ type: 'APPROVE', toolCallId: 'a', at: 2_000 });
    actor.send({ type: 'REJECT', toolCallId: 'zzz', at: 2_000 });
    expect(actor.getSnapshot().context.batch.pending).toEqual(['b']);
    expect(actor.getSnapshot().value).toBe('WaitingApproval');
    actor.send({ type: 'APPROVE', toolCallId: 'b', at: 2_000 });
    const done = await until(actor, (s) => s.matches('Completed'));
    expect(ran.sort()).toEqual(['a', 'b']);
    expect(done.context.response).toBe('deployed');
    actor.stop();
  });

  it('with a call the user declines: it is answered without running, and the turn goes on', async () => {
    const { actor, ran, inputs, send, rest } = scripted([
      withCalls([call('a', { name: 'deploy', needsApproval: true })]),
      answer('as you wish'),
    ]);
    await send('go');
    await rest();
    actor.send({ type: 'REJECT', toolCallId: 'a', reason: 'not today', at: 2_000 });
    const done = await until(actor, (s) => s.matches('Completed'));
    expect(ran).toEqual([]);
    const declined = inputs[1]!.messages.at(-1);
    expect(declined).toMatchObject({ role: 'tool', tool_call_id: 'a' });
    expect(String(declined?.content)).toContain('not today');
    expect(done.context.response).toBe('as you wish');
    actor.stop();
  });

  it('with a call the user allowed for the session runs without asking', async () => {
    const deploy = (id: string) => call(id, { name: 'deploy', needsApproval: true });
    const { actor, ran, send, rest } = scripted([
      withCalls([deploy('a')]),
      answer('one'),
      withCalls([deploy('b')]),
      answer('two'),
    ]);
    await send('first');
    await rest();
    actor.send({ type: 'APPROVE', toolCallId: 'a', always: true, at: 2_000 });
    await until(actor, (s) => s.matches('Completed'));
    actor.send({ type: 'USER_MESSAGE', text: 'second', at: 3_000 });
    const done = await rest();
    expect(done.value).toBe('Completed');
    expect(done.context.response).toBe('two');
    expect(ran).toEqual(['a', 'b']);
    actor.stop();
  });

  it('cut off by the output limit ends the turn without running its calls', async () => {
    const { actor, ran, send, rest } = scripted([withCalls([call('a')], { finishReason: 'length' })]);
    await send('go');
    const done = await rest();
    expect(done.value).toBe('Completed');
    expect(done.context.terminateReason).toBe('length');
    expect(ran).toEqual([]);
    expect(done.context.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'a' });
    actor.stop();
  });

  it('a successful loop-breaking call ends the turn with its result; a failed one goes on', async () => {
    const ask = (id: string, name = 'ask_question') => call(id, { name, loopBreaking: 'question' });
    const { actor, inputs, send, rest } = scripted([withCalls([ask('q', 'fails')]), withCalls([ask('r')])]);
    await send('go');
    const done = await rest();
    expect(inputs).toHaveLength(2);
    expect(done.context).toMatchObject({ terminateReason: 'question', response: 'r ok' });
    actor.stop();
  });
});

describe('the final call after a limit', () => {
  it('at the iteration limit, has tools off and no deadline; EXTEND_LIMIT then goes on', async () => {
    const { actor, inputs, send, rest } = scripted(
      [withCalls([call('a')]), answer('stopped'), withCalls([call('b')]), answer('finished')],
      { input: { limits: { maxIterations: 1, timeoutMs: 60_000 } } },
    );
    await send('go');
    const limited = await rest();
    expect(limited.context.terminateReason).toBe('max_iterations');
    expect(inputs[1]).toMatchObject({ toolsEnabled: false, deadline: null });
    expect(inputs[0]).toMatchObject({ toolsEnabled: true, deadline: 61_000 });
    actor.send({ type: 'EXTEND_LIMIT', by: 5, at: 5_000 });
    const extended = await until(actor, (s) => s.matches('Completed') && s.context.response === 'finished');
    expect(extended.context.terminateReason).toBe('completed');
    expect(inputs[2]).toMatchObject({ toolsEnabled: true, deadline: 65_000 });
    // Completed for another reason: EXTEND_LIMIT does nothing.
    const calls = inputs.length;
    actor.send({ type: 'EXTEND_LIMIT', by: 2, at: 6_000 });
    await new Promise((r) => setTimeout(r, 20));
    expect(actor.getSnapshot().value).toBe('Completed');
    expect(inputs).toHaveLength(calls);
    actor.stop();
  });

  it('a final call that still asks for tools ends the turn; its calls are not run', async () => {
    const { actor, ran, send, rest } = scripted([withCalls([call('a')]), withCalls([call('b')])], {
      input: { limits: { maxIterations: 1 } },
    });
    await send('go');
    const done = await rest();
    expect(done.value).toBe('Completed');
    expect(done.context.terminateReason).toBe('max_iterations');
    expect(ran).toEqual(['a']);
    actor.stop();
  });

  it('after the deadline passed during a model call, gets the grace period with tools off', async () => {
    const deadline = Object.assign(new Error('deadline'), { code: 'deadline_exceeded' });
    const { actor, inputs, events, send, rest } = scripted([deadline, answer('late answer')], {
      input: { limits: { timeoutMs: 10_000 } },
    });
    await send('go');
    const done = await rest();
    expect(done.value).toBe('Completed');
    expect(done.context).toMatchObject({ terminateReason: 'timeout', response: 'late answer' });
    expect(inputs[1]!.toolsEnabled).toBe(false);
    expect(inputs[1]!.deadline).toBeGreaterThan(inputs[0]!.deadline!);
    expect(events.filter((e) => e.type === 'limit_warning').map((e) => e.limit)).toEqual(['timeout']);
    actor.stop();
  });

  it('a deadline in the final call itself, or any other failure, ends the turn in Error', async () => {
    const deadline = () => Object.assign(new Error('deadline'), { code: 'deadline_exceeded' });
    const twice = scripted([deadline(), deadline()], { input: { limits: { timeoutMs: 10_000 } } });
    await twice.send('go');
    const failed = await twice.rest();
    expect(failed.value).toBe('Error');
    expect(failed.context.error?.code).toBe('deadline_exceeded');
    expect(twice.inputs).toHaveLength(2);
    twice.actor.stop();

    const other = scripted([Object.assign(new Error('server down'), { code: 'server_error' })]);
    await other.send('go');
    const down = await other.rest();
    expect(down.value).toBe('Error');
    expect(other.inputs).toHaveLength(1);
    // A null rejection is an error too, not a deadline.
    const nothing = scripted([(() => Promise.reject(null)) as never]);
    await nothing.send('go');
    expect((await nothing.rest()).value).toBe('Error');
    other.actor.stop();
    nothing.actor.stop();
  });
});

describe('events a state ignores or takes', () => {
  it('a machine started without input, or whose start-up returned nothing, rests in AwaitingInput', async () => {
    const bare = createActor(agentMachine, {} as never);
    bare.start();
    const ready = await until(bare, (s) => s.matches('AwaitingInput'));
    expect(ready.context.messages).toEqual([]);
    expect(ready.context.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    bare.stop();
    const quiet = scripted([], { effects: { initialize: async () => undefined as never } });
    const started = await until(quiet.actor, (s) => s.matches('AwaitingInput'));
    expect(started.context.messages).toEqual([{ role: 'system', content: 'Test.' }]);
    expect(started.context.initialized).toBe(true);
    quiet.actor.stop();
  });

  it('RESUME before any turn, and a message in an Error before start-up finished, do nothing', async () => {
    const failing = scripted([], {
      effects: { initialize: async () => Promise.reject(new Error('no start')) },
    });
    const failed = await until(failing.actor, (s) => s.matches('Error'));
    failing.actor.send({ type: 'RESUME', at: 1 });
    failing.actor.send({ type: 'USER_MESSAGE', text: 'hi', at: 1 });
    expect(failing.actor.getSnapshot().value).toBe('Error');
    expect(failing.actor.getSnapshot().context).toEqual(failed.context);
    failing.actor.stop();
  });

  it('RESUME in a rest state before the first turn does nothing', async () => {
    const first = scripted([]);
    await until(first.actor, (s) => s.matches('AwaitingInput'));
    const persisted = first.actor.getPersistedSnapshot() as unknown as {
      value: string;
      context: { lastState: string };
    };
    first.actor.stop();
    for (const state of ['Interrupted', 'Error']) {
      const snapshot = { ...persisted, value: state, context: { ...persisted.context, lastState: state } };
      const restored = createActor(agentMachine, { snapshot: snapshot as never, input: {} });
      let calls = 0;
      bindAgentEffects(restored, {
        callLlm: async () => {
          calls++;
          return answer('x');
        },
        runTools: async () => [],
      });
      restored.start();
      restored.send({ type: 'RESUME', at: 1 });
      await new Promise((r) => setTimeout(r, 20));
      expect(restored.getSnapshot().value, state).toBe(state);
      expect(calls).toBe(0);
      restored.stop();
    }
  });

  it('a message after an error in a turn starts a new turn; RESUME continues the turn', async () => {
    const { actor, inputs, send, rest } = scripted([new Error('flaky'), answer('resumed'), answer('next')]);
    await send('go');
    expect((await rest()).value).toBe('Error');
    actor.send({ type: 'RESUME', at: 2_000 });
    const resumed = await until(actor, (s) => s.matches('Completed'));
    expect(resumed.context).toMatchObject({ turn: 1, response: 'resumed', error: null });
    expect(inputs[1]!.turn).toBe(1);
    actor.send({ type: 'USER_MESSAGE', text: 'again', at: 3_000 });
    const next = await until(actor, (s) => s.matches('Completed') && s.context.turn === 2);
    expect(next.context.response).toBe('next');
    actor.stop();
  });

  it('an interrupt during a model call rests in Interrupted; RESUME goes on with the same turn', async () => {
    let release!: (output: LlmCallOutput) => void;
    const { actor, inputs, send } = scripted([
      () => new Promise<LlmCallOutput>((resolve) => (release = resolve)),
      answer('after resume'),
    ]);
    await send('go');
    await until(actor, () => inputs.length === 1);
    actor.send({ type: 'INTERRUPT' });
    expect(actor.getSnapshot().value).toBe('Interrupted');
    release(answer('ignored'));
    actor.send({ type: 'RESUME', at: 2_000 });
    const done = await until(actor, (s) => s.matches('Completed'));
    expect(done.context.response).toBe('after resume');
    expect(inputs.map((i) => i.turn)).toEqual([1, 1]);
    actor.stop();
  });

  it('a write failure after the turn came to rest turns Completed into Error', async () => {
    const { actor, send, rest } = scripted([answer('done')]);
    await send('go');
    await rest();
    actor.send({ type: 'WRITE_FAILED', message: 'disk full' });
    const failed = actor.getSnapshot();
    expect(failed.value).toBe('Error');
    expect(failed.context.error?.message).toContain('disk full');
    actor.stop();
  });
});

describe('compaction', () => {
  it('an agent without a compaction effect goes on with the model call, once, and says why it did not compact', async () => {
    const { actor, inputs, events, send, rest } = scripted([
      (input) => {
        actor.send({ type: 'LLM.COMPACT' });
        return new Promise<never>(() => {
          void input;
        });
      },
      answer('answered without compacting'),
    ]);
    await send('go');
    const done = await rest();
    expect(done.value).toBe('Completed');
    expect(done.context.response).toBe('answered without compacting');
    expect(inputs.map((i) => i.mayCompact)).toEqual([true, false]);
    expect(inputs.map((i) => i.iteration)).toEqual([1, 1]);
    const warning = events.find((e) => e.type === 'limit_warning');
    expect(warning).toMatchObject({ limit: 'context_window' });
    expect(String(warning?.message)).toContain('compaction is off');
    actor.stop();
  });

  it('the compaction effect gets the conversation, the turn and no instructions', async () => {
    const compacted: unknown[] = [];
    const { actor, inputs, send, rest } = scripted(
      [
        () => {
          actor.send({ type: 'LLM.COMPACT' });
          return new Promise<never>(() => {});
        },
        answer('ok'),
      ],
      {
        effects: {
          compact: async (input) => {
            compacted.push(input);
            throw new Error('summary failed');
          },
        },
      },
    );
    await send('go');
    await rest();
    expect(compacted).toEqual([
      {
        sessionId: 'm',
        turn: 1,
        iteration: 1,
        messages: inputs[0]!.messages,
        compaction: null,
        instructions: null,
      },
    ]);
    actor.stop();
  });
});
