import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentEvent, defineTool, MemorySessionStore, type Message } from '../src/index.js';
import type { ScriptedTurn } from '../src/testing/index.js';
import { checkPersistedSnapshot } from '../src/unstable.js';
import { agentOn } from './support/harness.js';

// update_plan and context providers over the real SDK: the plan in the machine's context, shown to the
// model before every call after the system prompt, saved with the session; provider blocks beside it.

type Status = 'pending' | 'in_progress' | 'completed';
const STEPS = Array.from({ length: 10 }, (_, i) => `step ${i + 1}`);

/** The plan after `done` steps are finished, the next one in progress. */
function planAt(done: number): { step: string; status: Status }[] {
  return STEPS.map((step, i) => ({
    step,
    status: i < done ? 'completed' : i === done ? 'in_progress' : 'pending',
  }));
}

/** The system messages of a request after the system prompt, as text. */
function blocksOf(request: { messages: unknown[] }): string[] {
  const messages = request.messages as Message[];
  return messages
    .slice(1)
    .filter((m, i, all) => m.role === 'system' && all.slice(0, i).every((p) => p.role === 'system'))
    .map((m) => String(m.content));
}

describe('update_plan', () => {
  it('a ten-step plan ticks off: kept in context, plan_updated each time, shown before every call', async () => {
    const turns: ScriptedTurn[] = [];
    for (let done = 0; done <= 10; done++) {
      turns.push({
        toolCalls: [
          {
            name: 'update_plan',
            arguments:
              done === 0
                ? { explanation: 'Ten steps to ship it', steps: planAt(0) }
                : { steps: planAt(done) },
          },
        ],
      });
    }
    turns.push({ content: 'all ten done' });
    const { agent, server, events } = await agentOn({ turns }, { instructions: 'You are a planner.' });
    expect(agent.registry.has('update_plan')).toBe(true);
    const result = await agent.send('do the ten things');
    expect(result.response).toBe('all ten done');
    const updates = events.filter((e): e is AgentEvent<'plan_updated'> => e.type === 'plan_updated');
    expect(updates).toHaveLength(11);
    expect(updates[0]!.plan).toEqual({ explanation: 'Ten steps to ship it', steps: planAt(0) });
    expect(updates[4]!.plan.steps.filter((s) => s.status === 'completed')).toHaveLength(4);
    expect(agent.plan).toEqual({ steps: planAt(10) });
    // No plan before the first update; then the plan block right after the system prompt.
    expect(blocksOf(server.requests[0]!)).toEqual([]);
    const third = blocksOf(server.requests[3]!)[0]!;
    expect(third).toMatch(/^## Current plan\n\n/);
    expect(third).toContain('[x] step 2\n[>] step 3\n[ ] step 4');
    expect((server.requests[3]!.messages[0] as Message).content).toBe('You are a planner.');
    expect(blocksOf(server.requests[11]!)[0]).toContain('[x] step 10');
  });

  it('refuses two steps in progress with an error result; the plan stays as it was', async () => {
    const { agent, events } = await agentOn({
      turns: [
        {
          toolCalls: [
            {
              name: 'update_plan',
              arguments: {
                steps: [
                  { step: 'a', status: 'in_progress' },
                  { step: 'b', status: 'in_progress' },
                ],
              },
            },
          ],
        },
        { content: 'ok' },
      ],
    });
    const result = await agent.send('plan');
    const answer = String(result.messages.find((m) => m.role === 'tool')?.content);
    expect(answer).toBe(
      'Error: invalid arguments for "update_plan": steps: at most one step may be in_progress; steps 0, 1 are (mark the others pending or completed).',
    );
    expect(events.some((e) => e.type === 'plan_updated')).toBe(false);
    expect(agent.plan).toBeNull();
  });

  it('planning: false offers no update_plan', async () => {
    const { agent, server } = await agentOn({ turns: [{ content: 'hi' }] }, { planning: false });
    await agent.send('hi');
    const names = (server.requests[0]!.tools ?? []).map(
      (t) => (t as { function: { name: string } }).function.name,
    );
    expect(names).not.toContain('update_plan');
    expect(names).toContain('task_completion');
  });

  it('is saved and restored with the session; a snapshot saved before plans existed loads without one', async () => {
    const store = new MemorySessionStore();
    const scenario = {
      turns: [
        { toolCalls: [{ name: 'update_plan', arguments: { steps: planAt(1).slice(0, 3) } }] },
        { content: 'planned' },
        { content: 'still here' },
      ],
    };
    const first = await agentOn(scenario, { store, session: 'plan-1', instructions: 'Plan.' });
    await first.agent.send('plan it');
    await first.agent.close();
    const saved = await store.load('plan-1');
    expect((saved!.snapshot as { context: { plan: unknown } }).context.plan).toEqual({
      steps: planAt(1).slice(0, 3),
    });

    const second = await agentOn(scenario, { store, session: 'plan-1', instructions: 'Plan.' });
    await second.agent.ready();
    expect(second.agent.plan).toEqual({ steps: planAt(1).slice(0, 3) });
    await second.agent.send('go on');
    expect(blocksOf(second.server.requests[0]!)[0]).toContain('[x] step 1\n[>] step 2\n[ ] step 3');
    await second.agent.close();

    const { plan: _dropped, ...olderContext } = (saved!.snapshot as { context: Record<string, unknown> })
      .context;
    const check = checkPersistedSnapshot({ ...(saved!.snapshot as object), context: olderContext });
    expect(check.ok).toBe(true);
    if (check.ok) expect(check.snapshot.context.plan).toBeNull();
  });

  it('survives pruning: the plan block stays while old tool results are pruned', async () => {
    const read = defineTool({
      name: 'read',
      description: 'reads a big file',
      parameters: z.object({ n: z.number() }),
      execute: ({ n }) => `file ${n}: ${'lorem '.repeat(1_500)}`,
    });
    const { agent, server, events } = await agentOn(
      {
        turns: [
          { toolCalls: [{ name: 'update_plan', arguments: { steps: planAt(0).slice(0, 2) } }] },
          { toolCalls: [{ name: 'read', arguments: { n: 1 } }] },
          { content: 'read one' },
          { toolCalls: [{ name: 'read', arguments: { n: 2 } }] },
          { content: 'read two' },
        ],
      },
      { tools: [read], instructions: 'Read files.', contextWindow: { contextWindow: 4_000 } },
    );
    await agent.send('read one');
    await agent.send('read two');
    expect(events.some((e) => e.type === 'context_pruned')).toBe(true);
    const last = server.requests.at(-1)!;
    expect(JSON.stringify(last.messages)).toContain('[pruned: result of read');
    expect(blocksOf(last)[0]).toContain('[>] step 1');
  });
});

describe('context providers', () => {
  it('adds their blocks after the plan for every call, each told the turn and iteration', async () => {
    const seen: string[] = [];
    const { agent, server } = await agentOn(
      {
        turns: [
          { toolCalls: [{ name: 'update_plan', arguments: { steps: planAt(0).slice(0, 1) } }] },
          { content: 'done' },
        ],
      },
      {
        instructions: 'Be brief.',
        contextProviders: [
          (turn) => {
            seen.push(`${turn.turn}.${turn.iteration}`);
            return { title: 'Weather', text: `sunny at call ${turn.iteration}` };
          },
          () => null,
        ],
      },
    );
    await agent.send('hi');
    expect(seen).toEqual(['1.1', '1.2']);
    expect(blocksOf(server.requests[0]!)).toEqual(['## Weather\n\nsunny at call 1']);
    const second = blocksOf(server.requests[1]!);
    expect(second[0]).toMatch(/^## Current plan/);
    expect(second[1]).toBe('## Weather\n\nsunny at call 2');
    expect(agent.messages.some((m) => String(m.content).includes('sunny'))).toBe(false);
  });

  it('a provider that throws is an error event; the call goes on without its block', async () => {
    const { agent, events, server } = await agentOn(
      { turns: [{ content: 'fine' }] },
      {
        instructions: 'Answer.',
        contextProviders: [
          () => ({ title: 'Docs', text: 'doc text' }),
          () => {
            throw new Error('index offline');
          },
          async () => ({ title: 7 }) as never,
        ],
      },
    );
    const result = await agent.send('hi');
    expect(result.response).toBe('fine');
    const errors = events.filter((e): e is AgentEvent<'error'> => e.type === 'error');
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      ['context_provider', 'context provider 1 failed: index offline'],
      [
        'context_provider',
        'context provider 2 returned {"title":7}; expected { title, text } strings or nothing',
      ],
    ]);
    expect(blocksOf(server.requests[0]!)).toEqual(['## Docs\n\ndoc text']);
  });

  it('a provider that does not answer in time is left out and told to stop; the call goes on', async () => {
    let stopped: unknown;
    const { agent, events, server } = await agentOn(
      { turns: [{ content: 'fine' }] },
      {
        instructions: 'Answer.',
        contextProviderTimeoutMs: 150,
        contextProviders: [
          () => ({ title: 'Docs', text: 'doc text' }),
          ({ signal }) =>
            new Promise(() => {
              signal.addEventListener('abort', () => {
                stopped = signal.reason;
              });
            }),
        ],
      },
    );
    const result = await agent.send('hi');
    expect(result.response).toBe('fine');
    const errors = events.filter((e): e is AgentEvent<'error'> => e.type === 'error');
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      [
        'context_provider',
        'context provider 1 failed: it did not answer within 150 ms; the call went on without it',
      ],
    ]);
    expect(stopped).toBeInstanceOf(Error);
    expect(blocksOf(server.requests[0]!)).toEqual(['## Docs\n\ndoc text']);
  });

  it("counts their size in the context window's budget", async () => {
    const big = () => ({ title: 'Retrieved', text: 'lorem '.repeat(3_000) });
    const run = async (providers: (() => { title: string; text: string })[]) => {
      const { agent, events } = await agentOn(
        { turns: [{ content: 'ok' }] },
        { contextProviders: providers, contextWindow: { contextWindow: 4_000 } },
      );
      await agent.send('hi');
      return events.filter((e) => e.type === 'limit_warning');
    };
    expect(await run([])).toEqual([]);
    expect(await run([big])).toEqual([expect.objectContaining({ limit: 'context_window' })]);
  });
});
