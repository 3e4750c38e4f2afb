import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restateAgent, restateClient } from '../src/engines/restate/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { engineTestTools, eventually } from './support/engine-tests.js';
import { type H2Proxy, startH2Proxy } from './support/h2-proxy.mjs';
import {
  type RestateServer,
  restateBinaryFor,
  serveEndpoint,
  startRestateServer,
} from './support/restate-server.js';

/**
 * The engine chaos run's setting in small: Restate reaches the agent's endpoints through one address
 * (test/support/h2-proxy.mjs, standing for a load balancer), and the endpoint an attempt is sent to
 * dies as the request reaches it: its connection closes with no response and no error, as a SIGKILLed
 * worker's did in the chaos runs. The proxy must fail the attempt toward Restate, which retries it on
 * the live endpoint; a proxy that left Restate's stream open held the attempt until Restate's abort
 * timeout (10 minutes: the stalled sessions of the chaos runs, docs/engines.md "Chaos").
 */
const binary = restateBinaryFor('ERROR');

describe.skipIf('missing' in binary)(
  'agentloop/restate behind one address, an endpoint dying mid-request',
  () => {
    let server: RestateServer;
    let model: ScriptedServer;
    let proxy: H2Proxy;
    let live: { url: string; close(): Promise<void> };
    let dying: http2.Http2Server;

    beforeAll(async () => {
      server = await startRestateServer();
    }, 60_000);
    afterAll(async () => {
      proxy?.close();
      await live?.close();
      dying?.close();
      await server?.stop();
      await model?.close();
    });

    it('fails the attempt at once and Restate retries it on the live endpoint', async () => {
      model = await startScriptedServer({
        scenario: {
          turns: [{ toolCalls: [{ name: 'lookup', arguments: { key: 'order' } }] }, { content: 'found it' }],
        },
      });
      const runs: string[] = [];
      const { lookup } = engineTestTools(runs);
      const agent = restateAgent('proxied', () => ({ baseURL: model.url, apiKey: 'k', tools: [lookup] }));
      live = await serveEndpoint(restate.endpoint().bind(agent).http2Handler());
      // The dying endpoint: each connection it takes is cut as its first request arrives (no response).
      dying = http2.createServer();
      let cut = 0;
      dying.on('stream', (stream) => {
        cut++;
        stream.session?.destroy();
      });
      await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve));
      const dyingPort = (dying.address() as AddressInfo).port;
      const livePort = Number(new URL(live.url).port);
      // The turn's first attempt goes to the dying endpoint; everything else to the live one.
      let sent = 0;
      proxy = await startH2Proxy({
        pick: (headers) =>
          String(headers[':path']).endsWith('/send') && sent++ === 0 ? dyingPort : livePort,
      });
      await server.register(`http://127.0.0.1:${proxy.port}`);
      const client = restateClient({ url: server.ingress, agent: 'proxied' });
      await client.post('p1', 'look it up');
      // Well inside Restate's inactivity timeout (1 minute), the earliest a held attempt could end.
      const result = await eventually(() => client.result('p1').then((r) => r ?? undefined), 40_000);
      expect(result.response).toBe('found it');
      expect(cut).toBe(1);
      expect(sent).toBeGreaterThanOrEqual(2);
      expect(runs.filter((r) => r.startsWith('lookup'))).toHaveLength(1);
    }, 120_000);
  },
);
