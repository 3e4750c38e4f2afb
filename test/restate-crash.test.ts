import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restateClient } from '../src/engines/restate/index.js';
import { FileSessionStore } from '../src/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { CRASH_TOOLS, crashTurn, distModule, eventually } from './support/engine-tests.js';
import { type RestateServer, restateBinaryFor, startRestateServer } from './support/restate-server.js';
import { scriptChildren } from './support/script-child.js';

/**
 * The child: the agent's Restate endpoint (from dist/, as users import agentloop/restate) on the port
 * it is given (0: one the OS picks), with a tool that is not idempotent (`charge`, which takes long)
 * and one that is (`lookup`). Each tool appends a line per start to a shared file. The test SIGKILLs
 * the child while `charge` runs and starts another on the same port: Restate retries the invocation
 * there, and the replay answers from the journal.
 */
const CHILD = `
import http2 from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { FileSessionStore } from ${distModule('index.js')};
import { restateAgent } from ${distModule('engines', 'restate', 'index.js')};

const [, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
console.info = console.error;
console.debug = console.error;
${CRASH_TOOLS}
const agent = restateAgent('pay', () => ({ baseURL: config.model, apiKey: 'k', tools: [charge, lookup] }), {
  store: new FileSessionStore({ dir: config.sessions }),
});
const server = http2.createServer(restate.endpoint().bind(agent).http2Handler());
server.listen(config.port, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n');
});
`;

// The children inherit the logging level: the SDK logs invocations on stdout, where they report JSON lines.
const binary = restateBinaryFor('ERROR');
const children = scriptChildren<'endpoint'>('restate-crash-', CHILD);

describe.skipIf('missing' in binary)(
  'agentloop/restate after a crash of the process running the turn',
  () => {
    let server: RestateServer;
    let model: ScriptedServer;

    beforeAll(async () => {
      server = await startRestateServer();
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
      await model?.close();
    });

    it('answers the cut non-idempotent call "outcome unknown", runs the idempotent one again, and finishes the turn', async () => {
      model = await startScriptedServer({ scenario: crashTurn.scenario() });
      const log = path.join(children.work(), 'tools.log');
      const sessions = path.join(children.work(), 'sessions');
      const config = { model: model.url, log, sessions, chargeMs: 60_000, lookupMs: 60_000, port: 0 };
      const first = children.run('endpoint', config, (line) => typeof line.port === 'number');
      const port = (await first.reached).at(-1)!.port as number;
      await server.register(`http://127.0.0.1:${port}`);
      const client = restateClient({ url: server.ingress, agent: 'pay' });
      await client.post('crash-1', 'charge 5 dollars');
      await crashTurn.started(log);
      first.child.kill('SIGKILL');
      await first.exited;

      const second = children.run(
        'endpoint',
        { ...config, port, chargeMs: 10, lookupMs: 10 },
        (line) => 'port' in line,
      );
      await second.reached;
      const result = await eventually(() => client.result('crash-1').then((r) => r ?? undefined), 60_000);
      expect(result.response).toBe(crashTurn.answer);
      await crashTurn.expectTakenOver(log, model);
      // The session in the store: each message once, in order, though the turn ran twice.
      const store = new FileSessionStore({ dir: sessions });
      expect((await store.load('crash-1'))?.state).toBe('Completed');
      const { entries } = await store.readTranscript('crash-1');
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
      expect(entries.flatMap((e) => (e.kind === 'message' ? [e.message.role] : []))).toEqual([
        'user',
        'assistant',
        'tool',
        'tool',
        'assistant',
      ]);
      second.child.kill('SIGTERM');
    }, 120_000);
  },
);
