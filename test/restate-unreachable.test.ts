import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestateClientError, restateAgent, restateClient } from '../src/engines/restate/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { buildDist } from './support/build-dist.js';
import { cliWait, heldCharge } from './support/engine-outage.js';
import { eventually } from './support/engine-tests.js';
import {
  type RestateServer,
  registeredEndpoint,
  restateBinaryFor,
  startRestateServer,
} from './support/restate-server.js';

// Restate's server stopped under a running turn and started again on the same data and ports: what
// a client waiting for the turn is told, and that the turn finishes with no tool run twice.

const binary = restateBinaryFor('ERROR');

const { tool: charge, runs, charging, release } = heldCharge();

describe.skipIf('missing' in binary)('agentloop/restate when the engine goes away mid-turn', () => {
  let server: RestateServer;
  let endpoint: { url: string; close(): Promise<void> };
  let model: ScriptedServer;

  beforeAll(async () => {
    await buildDist();
    server = await startRestateServer();
    model = await startScriptedServer({
      scenario: {
        turns: [{ toolCalls: [{ name: 'charge', arguments: { cents: 900 } }] }, { content: 'done' }],
      },
    });
    const agent = restateAgent('pay', () => ({ baseURL: model.url, apiKey: 'k', tools: [charge] }));
    endpoint = await registeredEndpoint(server, agent);
  }, 180_000);
  afterAll(async () => {
    release.resolve();
    await server?.stop();
    await endpoint?.close();
    await model?.close();
  });

  it('a waiting client gets an error naming Restate and its address; once back, the turn ends with nothing run twice', async () => {
    const client = restateClient({ url: server.ingress, agent: 'pay' });
    const waiting = client.send('gone-1', 'charge 9 dollars');
    waiting.catch(() => {});
    await charging.promise;
    // The CLI waiting for the same turn (agentloop send --wait, no input: it polls the session's state).
    const cliWaits = cliWait('restate', ['--url', server.ingress]);
    const watching = cliWaits();
    await server.halt();

    const lost = await waiting.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(lost).toBeInstanceOf(RestateClientError);
    expect((lost as Error).message).toContain(
      `lost the connection to Restate at ${server.ingress} during send on session "gone-1"`,
    );
    // While it is down: the same kind of error, naming the engine and the address.
    await expect(client.state('gone-1')).rejects.toThrow(`cannot reach Restate at ${server.ingress}`);
    const cut = await watching;
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(
      new RegExp(
        `^agentloop send: agentloop/restate: (cannot reach|lost the connection to) Restate at ${server.ingress} `,
      ),
    );
    // The tool finishes in the attempt Restate lost: its result has nowhere to go.
    release.resolve();

    await server.resume();
    const result = await eventually(() => client.result('gone-1').then((r) => r ?? undefined), 60_000);
    expect(result.state).toBe('Completed');
    expect(result.response).toBe('done');
    expect(runs).toEqual(['charge 900']);
    // The charge was cut by the engine's loss: answered "outcome unknown", not run again.
    const tools = model.requests.at(-1)!.messages.filter((m) => m.role === 'tool');
    expect(String(tools[0]!.content)).toMatch(/^Outcome unknown: tool call "charge"/);
    expect(model.requests).toHaveLength(2);
    // Once back, the CLI's wait sees the turn rest.
    const after = await cliWaits();
    expect(after).toMatchObject({ code: 0, stdout: 'done\n' });
  }, 150_000);
});
