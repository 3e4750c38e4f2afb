import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DbosTurnSteps } from '../src/engines/dbos/dbos-turn-steps.js';
import { dbosAgent } from '../src/engines/dbos/index.js';
import { forkSession } from '../src/evals/fork-session.js';
import { Cassette, replaySession } from '../src/evals/index.js';
import { defineTool } from '../src/index.js';
import { PostgresSessionStore } from '../src/postgres/index.js';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { engineTestTools, eventually } from './support/engine-tests.js';
import { freshDatabase } from './support/postgres.js';

// DBOS on a database of its own in the run's throwaway PostgreSQL cluster; the model is the scripted
// server through the real SDK. DBOS is one per process: one launch for the file, a session per test.

const runs: string[] = [];
const { lookup, refund } = engineTestTools(runs);
/** Runs until its call is aborted (an interrupt), saying so. */
const slow = defineTool({
  name: 'slow',
  description: 'runs until stopped',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    runs.push('slow');
    await new Promise((r) => ctx.signal.addEventListener('abort', r));
    runs.push('slow stopped');
    return 'slow stopped';
  },
});

/**
 * A workflow taking one `DbosTurnSteps` step: whether the step handed back the very object its effect
 * made (registered before `DBOS.launch()`).
 */
const ownOutcome = DBOS.registerWorkflow(
  async (): Promise<boolean> => {
    const steps = new DbosTurnSteps();
    const made = { reply: 'made in this execution' };
    const got = await steps.step('own-outcome-1', async () => made);
    return got === made;
  },
  { name: 'test.ownOutcome' },
);

const scenarios = new Map<string, ScriptedServer>();
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
let pool: pg.Pool;
let agent: ReturnType<typeof dbosAgent>;
let store: PostgresSessionStore;

beforeAll(async () => {
  database = await freshDatabase('dbos');
  const url = database.url;
  pool = new pg.Pool({ connectionString: url, max: 4 });
  // The sessions are kept in the PostgreSQL session store on the same database as well.
  store = new PostgresSessionStore({ pool });
  agent = dbosAgent(
    'support',
    (sessionId) => {
      const model = scenarios.get(sessionId);
      if (!model) throw new Error(`no scenario for ${sessionId}`);
      return {
        name: 'support',
        baseURL: model.url,
        apiKey: 'test-key',
        tools: [lookup, refund, slow],
        limits: { maxIterations: sessionId.startsWith('limit') ? 2 : 50 },
      };
    },
    { pool, approvalWaitSeconds: 30, store },
  );
  DBOS.setConfig({ name: 'agentloop-dbos-test', systemDatabaseUrl: url, logLevel: 'error' });
  await DBOS.launch();
  await agent.start();
}, 60_000);

afterAll(async () => {
  await DBOS.shutdown();
  await pool?.end();
  await Promise.all([...scenarios.values()].map((s) => s.close()));
  await database?.drop();
});

async function session(id: string, scenario: Scenario): Promise<ScriptedServer> {
  const model = await startScriptedServer({ scenario });
  scenarios.set(id, model);
  return model;
}

describe('agentloop/dbos on PostgreSQL', () => {
  it('runs a text turn as a workflow and keeps the conversation for the next one', async () => {
    const model = await session('text-1', { turns: [{ content: 'hello there' }, { content: 'again' }] });
    expect(await agent.send('text-1', 'hi')).toMatchObject({
      success: true,
      response: 'hello there',
      state: 'Completed',
    });
    expect((await agent.send('text-1', 'once more')).response).toBe('again');
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(await agent.state('text-1')).toMatchObject({ state: 'Completed', turn: 2, response: 'again' });
    expect(await agent.result('text-1')).toMatchObject({ response: 'again' });
  });

  it('runs parallel tool calls as steps of the workflow, each once', async () => {
    runs.length = 0;
    await session('tools-1', {
      turns: [
        {
          toolCalls: [
            { name: 'lookup', arguments: { key: 'a' } },
            { name: 'lookup', arguments: { key: 'b' } },
          ],
        },
        { content: 'both found' },
      ],
    });
    const id = await agent.post('tools-1', 'look both up');
    const result = await DBOS.retrieveWorkflow<{ response: string }>(id).getResult();
    expect(result.response).toBe('both found');
    expect(runs.sort()).toEqual(['lookup a', 'lookup b']);
    const steps = (await DBOS.listWorkflowSteps(id))!.map((s) => s.name);
    expect(steps).toEqual(
      expect.arrayContaining([
        'tools-1/1/1/model',
        'tools-1/1/1/tool/call_0_0',
        'tools-1/1/1/tool/call_0_1',
        'tools-1/1/2/model',
      ]),
    );
    // Both calls are idempotent: the batch has no marker step.
    expect(steps).not.toContain('tools-1/1/1/tools/call_0_0');
    // The turn's own steps: the copy to the store only (the sessions table takes plain statements).
    expect(steps.filter((name) => name.startsWith('agentloop.'))).toEqual([
      'agentloop.mirror.base',
      'agentloop.mirror.1',
    ]);
  });

  it('waits for an approval sent to the turn workflow, then runs the call once', async () => {
    runs.length = 0;
    await session('approve-1', {
      turns: [{ toolCalls: [{ name: 'refund', arguments: { order: 'o-7' } }] }, { content: 'refunded' }],
    });
    const id = await agent.post('approve-1', 'refund o-7');
    const waiting = await eventually(async () => {
      const view = await agent.state('approve-1');
      return view.state === 'WaitingApproval' ? view : undefined;
    });
    expect(waiting.pendingApprovals.map((p) => p.name)).toEqual(['refund']);
    expect(runs).toEqual([]);
    await expect(agent.approve('approve-1', 'no-such-call')).rejects.toThrow(
      /approve: no call "no-such-call" waits for approval in session "approve-1" of agent "support"/,
    );
    // Copied to the session store at the approval wait.
    expect(await store.load('approve-1')).toMatchObject({ state: 'WaitingApproval', agentName: 'support' });
    await agent.approve('approve-1', waiting.pendingApprovals[0]!.toolCallId);
    const result = await DBOS.retrieveWorkflow<{ response: string }>(id).getResult();
    expect(result.response).toBe('refunded');
    expect(runs).toEqual(['refund o-7']);
  });

  it('keeps the sessions in the session store: listed, replayed and forked like any other', async () => {
    runs.length = 0;
    await session('kept-1', {
      turns: [
        { toolCalls: [{ name: 'lookup', arguments: { key: 'k' } }] },
        { content: 'found k' },
        { content: 'second turn' },
      ],
    });
    expect((await agent.send('kept-1', 'look k up')).response).toBe('found k');
    expect((await agent.send('kept-1', 'and now?')).response).toBe('second turn');
    const listed = (await store.list()).find((s) => s.id === 'kept-1');
    expect(listed).toMatchObject({ state: 'Completed', turns: 2, agentName: 'support' });
    const { entries } = await store.readTranscript('kept-1');
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    expect(entries.flatMap((e) => (e.kind === 'message' ? [e.message.role] : []))).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    const replay = await replaySession(await Cassette.fromSession(store, 'kept-1'), {
      agent: { tools: [lookup, refund, slow] },
    });
    expect(replay.divergence).toBeUndefined();
    expect(replay.turns.map((t) => t.result.response)).toEqual(['found k', 'second turn']);
    expect(runs).toEqual(['lookup k']);
    const cut = entries.find(
      (e) => e.kind === 'message' && e.message.role === 'assistant' && e.message.content === 'found k',
    )!;
    const fork = await forkSession(store, 'kept-1', { at: cut.seq, id: 'kept-1-fork' });
    expect(fork.record).toMatchObject({ state: 'Completed', turns: 1 });
  });

  it('interrupts a turn that waits for approval: it ends Interrupted and nothing runs', async () => {
    runs.length = 0;
    await session('interrupt-1', {
      turns: [{ toolCalls: [{ name: 'refund', arguments: { order: 'o-8' } }] }, { content: 'next turn' }],
    });
    expect(await agent.interrupt('interrupt-1')).toBe(false);
    const id = await agent.post('interrupt-1', 'refund o-8');
    await eventually(async () =>
      (await agent.state('interrupt-1')).state === 'WaitingApproval' ? true : undefined,
    );
    expect(await agent.interrupt('interrupt-1')).toBe(true);
    const result = await DBOS.retrieveWorkflow<{ state: string; terminateReason: string }>(id).getResult();
    expect(result).toMatchObject({ state: 'Interrupted', terminateReason: 'interrupted' });
    expect(runs).toEqual([]);
    expect((await agent.send('interrupt-1', 'go on')).response).toBe('next turn');
  });

  it('interrupts a turn while its tool runs: the tool is stopped, the turn ends Interrupted', async () => {
    runs.length = 0;
    await session('interrupt-2', {
      turns: [{ toolCalls: [{ name: 'slow', arguments: {} }] }, { content: 'after the interrupt' }],
    });
    const id = await agent.post('interrupt-2', 'go slow');
    await eventually(async () => (runs.includes('slow') ? true : undefined));
    expect(await agent.interrupt('interrupt-2', 'stop it')).toBe(true);
    const result = await DBOS.retrieveWorkflow<{ state: string; terminateReason: string }>(id).getResult();
    expect(result).toMatchObject({ state: 'Interrupted', terminateReason: 'interrupted' });
    expect(runs).toEqual(['slow', 'slow stopped']);
    expect(await agent.interrupt('interrupt-2')).toBe(false);
    expect((await agent.send('interrupt-2', 'go on')).response).toBe('after the interrupt');
    // The store has the turn as it ended: the call answered, the next turn after it.
    expect((await store.load('interrupt-2'))?.state).toBe('Completed');
  });

  it('interrupts a turn while its model call runs: the request is dropped, the turn ends Interrupted', async () => {
    // The second request holds no assistant message either (the first got no answer): count them.
    let calls = 0;
    const model = await session('interrupt-3', {
      turns: [
        () => (++calls === 1 ? { content: 'never sent', fault: 'hang' } : { content: 'after the interrupt' }),
      ],
    });
    const id = await agent.post('interrupt-3', 'think long');
    await eventually(async () => (model.requests.length === 1 ? true : undefined));
    expect(await agent.interrupt('interrupt-3')).toBe(true);
    const result = await DBOS.retrieveWorkflow<{ state: string }>(id).getResult();
    expect(result.state).toBe('Interrupted');
    expect(model.requests).toHaveLength(1);
    expect((await agent.send('interrupt-3', 'go on')).response).toBe('after the interrupt');
  });

  it('hands a step that ran in this execution its own outcome, not a parse of its record', async () => {
    const handle = await DBOS.startWorkflow(ownOutcome)();
    expect(await handle.getResult()).toBe(true);
    // The record DBOS keeps is the JSON text a replay parses.
    const { rows } = await pool.query(
      `SELECT output FROM dbos.operation_outputs WHERE workflow_uuid = $1 AND function_name = 'own-outcome-1'`,
      [handle.workflowID],
    );
    expect(rows[0]?.output).toContain('made in this execution');
  });

  it("waits at a turn's end for the steps still running, and for no event-loop turn after them", async () => {
    // Outside a workflow `DBOS.runStep` runs the function as it is: the step's own bookkeeping is what is tested.
    const steps = new DbosTurnSteps();
    let finish = (_value: string) => {};
    const running = steps.step('drained-1', () => new Promise<string>((resolve) => (finish = resolve)));
    let drained = false;
    const done = steps.drained().then(() => {
      drained = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(false);
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    finish('done');
    await done;
    // The turn's end statement follows at once: no `setImmediate` round waited for (settled() waits two).
    expect(turned).toBe(false);
    expect(await running).toBe('done');
  });

  it('ends a turn at the iteration limit with a final answer', async () => {
    await session('limit-1', {
      turns: [
        { toolCalls: [{ name: 'lookup', arguments: { key: 'x' } }] },
        { toolCalls: [{ name: 'lookup', arguments: { key: 'y' } }] },
        { content: 'stopped at the limit' },
      ],
    });
    expect((await agent.send('limit-1', 'keep looking')).terminateReason).toBe('max_iterations');
  });

  it('refuses an answer for a session that never ran, naming the call, session and agent', async () => {
    await expect(agent.approve('never-1', 'call_0_0')).rejects.toThrow(
      /approve: no call "call_0_0" waits for approval in session "never-1" of agent "support"/,
    );
    await expect(agent.reject('never-1', 'call_0_0')).rejects.toThrow(/reject: no call "call_0_0"/);
  });

  it('refuses an empty message naming the session and agent', async () => {
    await expect(agent.send('bad-1', '  ')).rejects.toThrow(
      /send to session "bad-1" of agent "support" needs a message/,
    );
  });
});
