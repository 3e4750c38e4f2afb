import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbosSessions, dbosClient } from '../src/engines/dbos/index.js';
import { PostgresSessionStore } from '../src/postgres/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { CRASH_TOOLS, crashTurn, distModule, eventually } from './support/engine-tests.js';
import { freshDatabase } from './support/postgres.js';
import { scriptChildren } from './support/script-child.js';
import { relay } from './support/tcp-relay.js';

/**
 * The child: a DBOS worker process (from dist/, as users import agentloop/dbos) with its own executor
 * id and the adapter's recovery, serving an agent with a tool that is not idempotent (`charge`, which
 * takes long) and one that is (`lookup`). Each tool appends a line per start to a shared file. The
 * test SIGKILLs the worker while `charge` runs and starts another: its recovery sees the first one's
 * lease lapse, resumes the turn on the queue, and the replay answers from the recorded steps.
 */
const CHILD = `
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { PostgresSessionStore } from ${distModule('postgres', 'index.js')};
import { dbosAgent, dbosExecutorId, startDbosRecovery } from ${distModule('engines', 'dbos', 'index.js')};

const [, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
${CRASH_TOOLS}
const pool = new pg.Pool({ connectionString: config.url, max: 3 });
const kept = new PostgresSessionStore({ pool });
// killAt: the process kills itself once its agent is interrupted ('interrupted'), or later, when the
// turn copies its end to the store ('copy': the steps the interrupt cut are recorded by then).
let interrupted = false;
const store = config.killAt === 'copy'
  ? new Proxy(kept, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key !== 'appendTranscript') return typeof value === 'function' ? value.bind(target) : value;
        return (...args) => {
          if (interrupted) process.kill(process.pid, 'SIGKILL');
          return target.appendTranscript(...args);
        };
      },
    })
  : kept;
const onAgent = (agent) =>
  agent.on('state_change', (e) => {
    if (e.state !== 'Interrupted') return;
    interrupted = true;
    if (config.killAt === 'interrupted') process.kill(process.pid, 'SIGKILL');
  });
const agent = dbosAgent('pay', () => ({ baseURL: config.model, apiKey: 'k', tools: [charge, lookup] }), {
  pool, store, onAgent, interruptPollMs: 50,
});
const executorId = dbosExecutorId();
DBOS.setConfig({ name: 'agentloop-dbos-crash', systemDatabaseUrl: config.url, executorID: executorId, logLevel: 'error' });
await startDbosRecovery({ pool, queues: [agent.queue], leaseMs: config.leaseMs, executorId });
await DBOS.launch();
// afterLaunch: the process stops here, as one killed right after launch would (it dequeues turns still).
if (!config.afterLaunch) await agent.start();
process.stdout.write(JSON.stringify({ ready: DBOS.executorID }) + '\\n');
`;

const children = scriptChildren<'worker'>('dbos-crash-', CHILD);

/**
 * A session as the PostgreSQL session store at `url` kept it: its state and its messages' roles,
 * once its transcript was checked to hold every seq once, in order (though the turn ran twice).
 */
async function keptSession(url: string, id: string): Promise<{ state: string | undefined; roles: string[] }> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const store = new PostgresSessionStore({ pool });
    const state = (await store.load(id))?.state;
    const { entries } = await store.readTranscript(id);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    return { state, roles: entries.flatMap((e) => (e.kind === 'message' ? [e.message.role] : [])) };
  } finally {
    await pool.end();
  }
}

describe('agentloop/dbos after a crash of the process running the turn', () => {
  let url = '';
  let model: ScriptedServer;
  let client: DBOSClient;
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;

  beforeAll(async () => {
    database = await freshDatabase('dbos_crash');
    url = database.url;
  });
  afterAll(async () => {
    await client?.destroy();
    await model?.close();
    await database?.drop();
  });

  it('another process takes the turn over: the cut charge is "outcome unknown", the lookup runs again', async () => {
    model = await startScriptedServer({ scenario: crashTurn.scenario() });
    const log = path.join(children.work(), 'tools.log');
    const config = { url, model: model.url, log, chargeMs: 60_000, lookupMs: 60_000, leaseMs: 1000 };
    const first = children.run('worker', config, (line) => 'ready' in line);
    await first.reached;
    client = await DBOSClient.create({ systemDatabaseUrl: url });
    const handle = await client.enqueue(
      { workflowName: 'agentloop.turn.pay', queueName: 'agentloop_pay', queuePartitionKey: 'crash-1' },
      'crash-1',
      'charge 5 dollars',
    );
    await crashTurn.started(log);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = children.run(
      'worker',
      { ...config, chargeMs: 10, lookupMs: 10 },
      (line) => 'ready' in line,
    );
    await second.reached;
    const result = (await handle.getResult()) as { response: string };
    expect(result.response).toBe(crashTurn.answer);
    await crashTurn.expectTakenOver(log, model);
    // The session store has the turn once, in order, though it ran twice.
    expect(await keptSession(url, 'crash-1')).toEqual({
      state: 'Completed',
      roles: ['user', 'assistant', 'tool', 'tool', 'assistant'],
    });
    second.child.kill('SIGTERM');
    await second.exited;
  }, 120_000);

  it('a process killed between DBOS.launch() and its own setup is taken over too (its lease came first)', async () => {
    // The queue and sessions table as earlier processes left them: a launched process dequeues at once.
    client ??= await DBOSClient.create({ systemDatabaseUrl: url });
    await client.registerQueue('agentloop_pay', { partitionConcurrency: 1 });
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await new DbosSessions(pool).migrate();
    await pool.end();
    await model?.close();
    model = await startScriptedServer({
      scenario: {
        turns: [
          { toolCalls: [{ name: 'charge', arguments: { cents: 700 } }] },
          { content: 'charge unknown' },
        ],
      },
    });
    const log = path.join(children.work(), 'tools-launch.log');
    const config = { url, model: model.url, log, chargeMs: 60_000, lookupMs: 10, leaseMs: 1000 };
    const handle = await client.enqueue(
      { workflowName: 'agentloop.turn.pay', queueName: 'agentloop_pay', queuePartitionKey: 'crash-2' },
      'crash-2',
      'charge 7 dollars',
    );
    const first = children.run('worker', { ...config, afterLaunch: true }, (line) => 'ready' in line);
    await first.reached;
    await eventually(async () =>
      (await readFile(log, 'utf8').catch(() => '')).includes('charge 700') ? true : undefined,
    );
    first.child.kill('SIGKILL');
    await first.exited;

    const second = children.run('worker', { ...config, chargeMs: 10 }, (line) => 'ready' in line);
    await second.reached;
    const result = (await handle.getResult()) as { response: string };
    expect(result.response).toBe('charge unknown');
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines.filter((l) => l.startsWith('charge'))).toHaveLength(1);
    const tools = model.requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(String(tools[0]!.content)).toMatch(/^Outcome unknown: tool call "charge"/);
    second.child.kill('SIGTERM');
    await second.exited;
  }, 120_000);

  it.each([
    ['its tool runs; killed before the cut step is recorded', 'tool', 'interrupted'],
    ['its model call runs; killed after the cut step is recorded', 'model', 'copy'],
  ])(
    'an interrupt while %s: the turn taken over ends Interrupted, nothing runs twice',
    async (_, cut, killAt) => {
      client ??= await DBOSClient.create({ systemDatabaseUrl: url });
      await model?.close();
      const id = `interrupt-${cut}`;
      let calls = 0;
      model = await startScriptedServer({
        scenario: {
          turns: [
            () =>
              ++calls > 1
                ? { content: 'asked again' }
                : cut === 'model'
                  ? { content: 'never sent', fault: 'hang' }
                  : { toolCalls: [{ name: 'charge', arguments: { cents: 900 } }] },
          ],
        },
      });
      const log = path.join(children.work(), `tools-${id}.log`);
      const config = { url, model: model.url, log, chargeMs: 60_000, lookupMs: 10, leaseMs: 1000 };
      const first = children.run('worker', { ...config, killAt }, (line) => 'ready' in line);
      await first.reached;
      const handle = await client.enqueue(
        { workflowName: 'agentloop.turn.pay', queueName: 'agentloop_pay', queuePartitionKey: id },
        id,
        'charge 9 dollars',
      );
      await eventually(
        async () =>
          cut === 'model'
            ? model.requests.length === 1 || undefined
            : (await readFile(log, 'utf8').catch(() => '')).includes('charge 900') || undefined,
        60_000,
      );
      const agents = await dbosClient({ systemDatabaseUrl: url, agent: 'pay' });
      expect(await agents.interrupt(id, 'stop')).toBe(true);
      await first.exited; // it killed itself (killAt)
      const second = children.run('worker', config, (line) => 'ready' in line);
      await second.reached;
      const result = (await handle.getResult()) as { state: string; terminateReason: string };
      expect(result).toMatchObject({ state: 'Interrupted', terminateReason: 'interrupted' });
      expect(await agents.interrupt(id)).toBe(false);
      await agents.close();
      // Nothing ran again: one model call, and the charge (when it was asked for) once.
      expect(model.requests).toHaveLength(1);
      const lines = (await readFile(log, 'utf8').catch(() => '')).trim().split('\n');
      expect(lines.filter((l) => l.startsWith('charge'))).toHaveLength(cut === 'tool' ? 1 : 0);
      expect((await keptSession(url, id)).state).toBe('Interrupted');
      second.child.kill('SIGTERM');
      await second.exited;
    },
    120_000,
  );

  it('a worker cut from PostgreSQL longer than its lease: another takes the turn over, the charge runs once', async () => {
    client ??= await DBOSClient.create({ systemDatabaseUrl: url });
    await model?.close();
    model = await startScriptedServer({
      scenario: {
        turns: [
          { toolCalls: [{ name: 'charge', arguments: { cents: 1100 } }] },
          { content: 'charge unknown' },
          { content: 'second turn' },
        ],
      },
    });
    const link = await relay(new URL(url));
    const cut = new URL(url);
    cut.hostname = '127.0.0.1';
    cut.port = String(link.port());
    const log = path.join(children.work(), 'tools-outage.log');
    // The first worker reaches PostgreSQL through the relay; its charge ends while the relay is cut.
    const config = { url, model: model.url, log, chargeMs: 10, lookupMs: 10, leaseMs: 1000 };
    const first = children.run(
      'worker',
      { ...config, url: cut.href, chargeMs: 1500 },
      (line) => 'ready' in line,
    );
    await first.reached;
    const handle = await client.enqueue(
      { workflowName: 'agentloop.turn.pay', queueName: 'agentloop_pay', queuePartitionKey: 'outage-1' },
      'outage-1',
      'charge 11 dollars',
    );
    await eventually(
      async () => (await readFile(log, 'utf8').catch(() => '')).includes('charge 1100') || undefined,
      60_000,
    );
    await link.cut();
    // The second worker sees the first one's lease lapse and resumes its turn: DBOS hands the turn's
    // ownership over, the replay finds the batch marker of the other execution, so the charge (not
    // idempotent) is "outcome unknown" there and is not run again.
    const second = children.run('worker', config, (line) => 'ready' in line);
    await second.reached;
    const result = (await handle.getResult()) as { response: string };
    expect(result.response).toBe('charge unknown');
    // The first worker comes back: its charge's result is refused (the turn is not its own any more).
    await link.restore();
    const next = await client.enqueue(
      { workflowName: 'agentloop.turn.pay', queueName: 'agentloop_pay', queuePartitionKey: 'outage-1' },
      'outage-1',
      'and then?',
    );
    expect(((await next.getResult()) as { response: string }).response).toBe('second turn');
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines.filter((l) => l.startsWith('charge'))).toHaveLength(1);
    expect(model.requests).toHaveLength(3);
    const tools = model.requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(String(tools[0]!.content)).toMatch(/^Outcome unknown: tool call "charge"/);
    expect((await keptSession(url, 'outage-1')).roles).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    for (const worker of [first, second]) worker.child.kill('SIGTERM');
    await Promise.all([first.exited, second.exited]);
    await link.cut();
  }, 120_000);
});
