import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import type { LlmCallInput, LlmCallOutput } from '../src/machines/actors/call-llm.js';
import { CompactionFailedError } from '../src/machines/actors/compact-conversation.js';
import type { AgentEffects } from '../src/machines/agent-effects.js';
import { durableEffects, rebuildError, recordError, stepKey } from '../src/machines/durable-effects.js';
import { effectRun } from './support/effect-io.js';
import { agentAt, assertToolCallsAnswered, deferred, nextEvent, serve } from './support/harness.js';
import { MemoryJournal } from './support/memory-steps.js';
import { waitUntil } from './support/wait-until.js';

const runs: string[] = [];
const lookup = defineTool({
  name: 'lookup',
  description: 'reads a value (idempotent)',
  parameters: z.object({ key: z.string() }),
  idempotent: true,
  execute: async ({ key }) => {
    runs.push(`lookup ${key}`);
    return `value of ${key}`;
  },
});
let charging = deferred();
const charge = defineTool({
  name: 'charge',
  description: 'charges a card (not idempotent)',
  parameters: z.object({ cents: z.number() }),
  execute: async ({ cents }) => {
    runs.push(`charge ${cents}`);
    await charging.promise;
    return `charged ${cents}`;
  },
});

const toolScenario = {
  turns: [
    {
      toolCalls: [
        { name: 'lookup', arguments: { key: 'a' } },
        { name: 'lookup', arguments: { key: 'b' } },
      ],
    },
    { content: 'a and b looked up' },
  ],
};

describe('durable effects (the engine seam)', () => {
  it('records a text turn as one model step, and a replay answers from the record without a request', async () => {
    const server = await serve({ turns: [{ content: 'hello there' }] });
    const journal = new MemoryJournal();
    const first = agentAt(server, { sessionId: 's1', durableSteps: journal.execution() });
    const result = await first.send('hi');
    expect(result.response).toBe('hello there');
    // No `initialize` option: nothing to record before the model call.
    expect(journal.keys()).toEqual(['s1/1/1/model']);
    expect(server.requests).toHaveLength(1);

    const replay = agentAt(server, { sessionId: 's1', durableSteps: journal.execution() });
    const again = await replay.send('hi');
    expect(again.response).toBe('hello there');
    expect(again.messages).toEqual(result.messages);
    expect(server.requests).toHaveLength(1);
    expect(journal.ran).toEqual(['s1/1/1/model']);
  });

  it('records an `initialize` option as a step before the first model call, and a replay does not run it again', async () => {
    const server = await serve({ turns: [{ content: 'hello there' }] });
    const journal = new MemoryJournal();
    let initialized = 0;
    const initialize = () => {
      initialized++;
      return { messages: [{ role: 'user' as const, content: 'context from initialize' }] };
    };
    const first = agentAt(server, { sessionId: 's1i', initialize, durableSteps: journal.execution() });
    const result = await first.send('hi');
    expect(journal.keys()).toEqual(['s1i/0/0/initialize', 's1i/1/1/model']);
    expect(JSON.stringify(server.requests[0]!.messages)).toContain('context from initialize');

    const replay = agentAt(server, { sessionId: 's1i', initialize, durableSteps: journal.execution() });
    const again = await replay.send('hi');
    expect(again.messages).toEqual(result.messages);
    expect(initialized).toBe(1);
  });

  it('records a batch of idempotent calls as a step per call (no marker), in call order; a replay runs no tool', async () => {
    runs.length = 0;
    const server = await serve(toolScenario);
    const journal = new MemoryJournal();
    const first = agentAt(server, { sessionId: 's2', tools: [lookup], durableSteps: journal.execution() });
    const result = await first.send('look up a and b');
    expect(result.response).toBe('a and b looked up');
    expect(journal.keys()).toEqual([
      's2/1/1/model',
      's2/1/1/tool/call_0_0',
      's2/1/1/tool/call_0_1',
      's2/1/2/model',
    ]);
    expect(runs.sort()).toEqual(['lookup a', 'lookup b']);
    assertToolCallsAnswered(result.messages);

    const replay = agentAt(server, { sessionId: 's2', tools: [lookup], durableSteps: journal.execution() });
    const again = await replay.send('look up a and b');
    expect(again.messages).toEqual(result.messages);
    expect(runs).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
  });

  it('answers a non-idempotent call cut by a crash "outcome unknown", and runs an idempotent one again', async () => {
    runs.length = 0;
    charging = deferred();
    const server = await serve({
      turns: [
        {
          toolCalls: [
            { name: 'charge', arguments: { cents: 500 } },
            { name: 'lookup', arguments: { key: 'c' } },
          ],
        },
        { content: 'I could not tell whether the charge went through' },
      ],
    });
    const journal = new MemoryJournal();
    const options = { sessionId: 's3', tools: [charge, lookup] };
    const first = agentAt(server, { ...options, durableSteps: journal.execution() });
    const started = nextEvent(first, 'tool_call_start');
    void first.send('charge 5 dollars').catch(() => {});
    await started;
    await waitUntil(() => runs.includes('charge 500') && runs.includes('lookup c'));
    // The lookup recorded its result; the charge is still running when the process dies.
    await waitUntil(() => journal.entry('s3/1/1/tool/call_0_1')?.done === true);
    journal.crash();
    first.stop();
    charging.resolve();

    const replay = agentAt(server, { ...options, durableSteps: journal.execution() });
    const result = await replay.send('charge 5 dollars');
    expect(runs.filter((r) => r === 'charge 500')).toHaveLength(1);
    expect(runs.filter((r) => r === 'lookup c')).toHaveLength(1);
    const answers = result.messages.filter((m) => m.role === 'tool');
    expect(String(answers[0]!.content)).toMatch(/^Outcome unknown: tool call "charge"/);
    expect(answers[1]!.content).toBe('value of c');
    // A batch holding a call that may not run twice starts with its marker step.
    expect(journal.keys().slice(0, 2)).toEqual(['s3/1/1/model', 's3/1/1/tools/call_0_0']);
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[1]!.messages)).toContain('Outcome unknown');
  });

  it('runs an idempotent call cut by a crash again in the next execution', async () => {
    runs.length = 0;
    const slow = deferred();
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'reads a page (idempotent)',
      parameters: z.object({ url: z.string() }),
      idempotent: true,
      execute: async ({ url }) => {
        runs.push(`fetch ${url}`);
        await slow.promise;
        return `page ${url}`;
      },
    });
    const server = await serve({
      turns: [{ toolCalls: [{ name: 'fetch_page', arguments: { url: 'x' } }] }, { content: 'read it' }],
    });
    const journal = new MemoryJournal();
    const first = agentAt(server, { sessionId: 's4', tools: [fetchPage], durableSteps: journal.execution() });
    void first.send('read x').catch(() => {});
    await waitUntil(() => runs.length === 1);
    journal.crash();
    first.stop();
    slow.resolve();
    const replay = agentAt(server, {
      sessionId: 's4',
      tools: [fetchPage],
      durableSteps: journal.execution(),
    });
    const result = await replay.send('read x');
    expect(runs).toEqual(['fetch x', 'fetch x']);
    expect(result.messages.find((m) => m.role === 'tool')!.content).toBe('page x');
  });

  it('replays a failed model call with its code, so the turn ends in the same Error', async () => {
    const server = await serve({ turns: [{ error: { status: 401, message: 'bad key' } }] });
    const journal = new MemoryJournal();
    const first = agentAt(server, { sessionId: 's5', durableSteps: journal.execution() });
    const result = await first.send('hi');
    expect(first.state).toBe('Error');
    const replay = agentAt(server, { sessionId: 's5', durableSteps: journal.execution() });
    const again = await replay.send('hi');
    expect(replay.state).toBe('Error');
    expect(again.error).toBe(result.error);
    expect(replay.context.error).toEqual(first.context.error);
    expect(server.requests).toHaveLength(1);
  });

  it('an interrupted model step replays as never settling: the replayed interrupt ends the turn the same way', async () => {
    const server = await serve({ turns: [{ content: 'a long answer', delayMs: 2000 }] });
    const journal = new MemoryJournal();
    const first = agentAt(server, { sessionId: 's6', durableSteps: journal.execution() });
    const turn = first.send('hi');
    await waitUntil(() => server.requests.length === 1);
    first.interrupt('stop');
    const result = await turn;
    await waitUntil(() => journal.entry('s6/1/1/model')?.done === true);
    expect(first.state).toBe('Interrupted');
    expect(journal.entry('s6/1/1/model')!.value).toMatchObject({ aborted: true });

    const replay = agentAt(server, { sessionId: 's6', durableSteps: journal.execution() });
    const again = replay.send('hi');
    await waitUntil(() => replay.state === 'Thinking');
    replay.interrupt('stop');
    expect((await again).messages).toEqual(result.messages);
    expect(server.requests).toHaveLength(1);
  });
});

describe('durableEffects on its own', () => {
  const input: LlmCallInput = {
    sessionId: 's',
    turn: 2,
    iteration: 3,
    messages: [],
    toolsEnabled: true,
    deadline: null,
  };
  const output: LlmCallOutput = {
    message: { role: 'assistant', content: 'ok' },
    calls: [],
    finishReason: 'stop',
    usage: null,
    at: 1,
  };

  it('gives a repeated effect of one turn and iteration its own key (#2), and tells replayed events again', async () => {
    const journal = new MemoryJournal();
    let calls = 0;
    const effects: AgentEffects = {
      callLlm: async (_input, io) => {
        calls++;
        io.send({ type: 'LLM.DELTA', delta: 'o' });
        io.send({ type: 'LLM.DELTA', delta: 'k' });
        io.send({
          type: 'LLM.TOOL_CALL_READY',
          call: { id: 'c', name: 't', argsText: '{}', args: {}, needsApproval: false },
        });
        return output;
      },
      runTools: async () => [],
    };
    const wrapped = durableEffects(effects, {
      steps: journal.execution(),
      isIdempotent: () => false,
      outcomeUnknown: (name) => `unknown ${name}`,
    });
    const run1 = effectRun();
    await wrapped.callLlm(input, run1.io);
    await wrapped.callLlm(input, effectRun().io);
    expect(journal.keys()).toEqual([stepKey('model', input), `${stepKey('model', input)}#2`]);
    expect(journal.keys()[0]).toBe('s/2/3/model');
    // Streamed text is passed on as it comes and recorded joined; early starts are never passed on.
    expect(run1.sent.map((e) => e.type)).toEqual(['LLM.DELTA', 'LLM.DELTA']);
    expect(journal.entries[0]!.value).toMatchObject({ events: [{ type: 'LLM.DELTA', delta: 'ok' }] });

    const replayed = durableEffects(effects, {
      steps: journal.execution(),
      isIdempotent: () => false,
      outcomeUnknown: (name) => `unknown ${name}`,
    });
    const run2 = effectRun();
    expect(await replayed.callLlm(input, run2.io)).toEqual(output);
    expect(run2.sent).toEqual([{ type: 'LLM.DELTA', delta: 'ok' }]);
    expect(calls).toBe(2);
  });

  it('rebuilds recorded errors with what the machine reads: class, message, code', () => {
    const coded = Object.assign(new Error('deadline passed'), { code: 'deadline_exceeded' });
    const rebuilt = rebuildError(JSON.parse(JSON.stringify(recordError(coded))));
    expect(rebuilt.message).toBe('deadline passed');
    expect((rebuilt as { code?: string }).code).toBe('deadline_exceeded');
    const compaction = new CompactionFailedError('the summary is empty', null, 900, 800);
    const back = rebuildError(JSON.parse(JSON.stringify(recordError(compaction))));
    expect(back).toBeInstanceOf(CompactionFailedError);
    expect(back).toMatchObject({ reason: 'the summary is empty', tokens: 900, max: 800 });
    expect(rebuildError(recordError('plain')).message).toBe('plain');
  });
});
