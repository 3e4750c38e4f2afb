import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restateAgent, restateClient } from '../src/engines/restate/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { engineTestTools } from './support/engine-tests.js';
import {
  type RestateServer,
  registeredEndpoint,
  restateBinaryFor,
  startRestateServer,
} from './support/restate-server.js';

// What a turn asks of Restate beyond its steps (docs/engines.md, "What a turn costs"), counted in the
// journal a real restate-server keeps (the admin API's `sys_journal`, journals kept for the test):
// one `ctx.run` per effect and the turn's own state entries, nothing else.

const binary = restateBinaryFor('WARN');

const { lookup } = engineTestTools([]);

describe.skipIf('missing' in binary)('a Restate turn in the journal', () => {
  let server: RestateServer;
  let endpoint: { url: string; close(): Promise<void> };
  let model: ScriptedServer;

  beforeAll(async () => {
    server = await startRestateServer();
    model = await startScriptedServer({
      scenario: {
        turns: [
          { toolCalls: [{ name: 'lookup', arguments: { key: 'a' } }] },
          { content: 'found' },
          { content: 'again' },
        ],
      },
    });
    const agent = restateAgent('work', () => ({ baseURL: model.url, apiKey: 'test-key', tools: [lookup] }));
    endpoint = await registeredEndpoint(server, agent);
    await admin(`/services/work`, 'PATCH', { journal_retention: '1h' });
  }, 60_000);

  afterAll(async () => {
    await endpoint?.close();
    await server?.stop();
    await model?.close();
  });

  async function admin(where: string, method: string, body: unknown) {
    const response = await fetch(`${server.admin}${where}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${where}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<{ rows: { kind: string; n: number }[] }>;
  }

  /** The journal of each `send` of the session, oldest first: entries by kind. */
  async function journals(key: string) {
    const { rows } = await admin('/query', 'POST', {
      query: `SELECT i.id AS id, i.created_at AS at, j.entry_type AS kind, count(*) AS n FROM sys_journal j
        JOIN sys_invocation i ON j.id = i.id
        WHERE i.target_service_name = 'work' AND i.target_service_key = '${key}' AND i.target_handler_name = 'send'
        GROUP BY i.id, i.created_at, j.entry_type ORDER BY i.created_at`,
    });
    const byTurn = new Map<string, Record<string, number>>();
    for (const row of rows as unknown as { id: string; kind: string; n: number }[]) {
      const turn = byTurn.get(row.id) ?? {};
      turn[row.kind] = Number(row.n);
      byTurn.set(row.id, turn);
    }
    return [...byTurn.values()];
  }

  it('a turn journals its steps, a read of the snapshot and three state writes', async () => {
    const client = restateClient({ url: server.ingress, agent: 'work' });
    expect((await client.send('w-1', 'look a up')).response).toBe('found');
    expect((await client.send('w-1', 'once more')).response).toBe('again');
    const [first, second] = await journals('w-1');
    // The model call, the call, the model call again: 3 steps (no `initialize` option, so no step for
    // it; the call is idempotent, so its batch has no marker step).
    expect(first).toEqual({
      'Command: Input': 1,
      'Command: GetEagerState': 1,
      'Command: Run': 3,
      'Notification: Run': 3,
      'Command: SetState': 3,
      'Command: Output': 1,
    });
    // The second turn (from the first's snapshot): one model call.
    expect(second).toEqual({
      'Command: Input': 1,
      'Command: GetEagerState': 1,
      'Command: Run': 1,
      'Notification: Run': 1,
      'Command: SetState': 3,
      'Command: Output': 1,
    });
    // What the handlers answer from those entries: the turn ended, nothing runs.
    expect(await client.state('w-1')).toEqual({
      sessionId: 'w-1',
      state: 'Completed',
      turn: 2,
      pendingApprovals: [],
      response: 'again',
      terminateReason: 'completed',
    });
    expect(await client.result('w-1')).toMatchObject({ success: true, response: 'again' });
    expect(await client.interrupt('w-1')).toBe(false);
  }, 60_000);
});
