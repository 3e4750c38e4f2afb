import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbosAgent } from '../src/engines/dbos/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { buildDist } from './support/build-dist.js';
import { cliWait, heldCharge } from './support/engine-outage.js';
import { eventually } from './support/engine-tests.js';
import { freshDatabase, postgresUrl } from './support/postgres.js';
import { relay } from './support/tcp-relay.js';

// DBOS's PostgreSQL gone under a running turn and back: the worker reaches the database through a
// TCP relay on loopback that the test cuts (every connection closed, new ones refused) and restores
// on the same port, as a database restart looks from the worker.

const { tool: charge, runs, charging, release } = heldCharge();

let database: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let model: ScriptedServer;
let agent: ReturnType<typeof dbosAgent>;
let link: Awaited<ReturnType<typeof relay>>;
/** The CLI's own way to the database, cut with the worker's. */
let cliLink: Awaited<ReturnType<typeof relay>>;
let cliUrl: string;

beforeAll(async () => {
  await buildDist();
  database = await freshDatabase('dbos_gone');
  const direct = new URL(postgresUrl());
  link = await relay(direct);
  cliLink = await relay(direct);
  const url = new URL(postgresUrl());
  url.pathname = `/${database.name}`;
  url.hostname = '127.0.0.1';
  url.port = String(link.port());
  const viaCli = new URL(url.href);
  viaCli.port = String(cliLink.port());
  cliUrl = viaCli.href;
  pool = new pg.Pool({ connectionString: url.href, max: 4 });
  pool.on('error', () => {});
  model = await startScriptedServer({
    scenario: {
      turns: [{ toolCalls: [{ name: 'charge', arguments: { cents: 900 } }] }, { content: 'done' }],
    },
  });
  agent = dbosAgent('pay', () => ({ baseURL: model.url, apiKey: 'k', tools: [charge] }), {
    pool,
    queuePollMs: 200,
  });
  DBOS.setConfig({ name: 'agentloop-dbos-gone', systemDatabaseUrl: url.href, logLevel: 'error' });
  await DBOS.launch();
  await agent.start();
}, 180_000);

afterAll(async () => {
  release.resolve();
  await DBOS.shutdown();
  await pool?.end();
  await model?.close();
  await database?.drop();
});

describe('agentloop/dbos when PostgreSQL goes away mid-turn', () => {
  it('the turn finishes once the database is back, with nothing run twice', async () => {
    const id = await agent.post('gone-1', 'charge 9 dollars');
    await charging.promise;
    // The CLI waiting for the same turn (agentloop send --wait, no input): cut once it reached the
    // database (its reads of the session then fail; DBOS's client opens no connection for a wait).
    const cliWaits = cliWait('dbos', ['--database', cliUrl]);
    const watching = cliWaits();
    let ended: unknown;
    void watching.then((r) => {
      ended = r;
    });
    await eventually(async () => (cliLink.accepted() >= 1 || ended ? true : undefined), 60_000);
    expect(ended).toBeUndefined();
    await Promise.all([link.cut(), cliLink.cut()]);
    // While it is down, a read of the session fails.
    const down = await agent.state('gone-1').then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(down?.message).toBe(
      `agentloop/dbos: cannot reach PostgreSQL at 127.0.0.1:${link.port()}/${database.name} (reading session "gone-1" of agent "pay"): Connection terminated unexpectedly`,
    );
    const cut = await watching;
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain(
      `agentloop send: agentloop/dbos: cannot reach PostgreSQL at 127.0.0.1:${cliLink.port()}/${database.name} (reading session "gone-1" of agent "pay")`,
    );
    release.resolve();
    await new Promise((r) => setTimeout(r, 2000));
    await Promise.all([link.restore(), cliLink.restore()]);
    const result = await Promise.race([
      DBOS.retrieveWorkflow<{ state: string; response: string }>(id).getResult(),
      new Promise<{ state: string; response: string }>((r) =>
        setTimeout(() => r({ state: 'never finished', response: '' }), 40_000),
      ),
    ]);
    expect(result).toMatchObject({ state: 'Completed', response: 'done' });
    // The charge ran once; its result, recorded when the database came back, is what the model got.
    expect(runs).toEqual(['charge 900']);
    const tools = model.requests.at(-1)!.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual(['charged 900']);
    expect(model.requests).toHaveLength(2);
    // Once back, the CLI's wait sees the turn rest.
    const after = await cliWaits();
    expect(after).toMatchObject({ code: 0, stdout: 'done\n' });
  }, 150_000);
});
