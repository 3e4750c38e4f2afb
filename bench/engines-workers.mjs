// Restate throughput with 1 and with N endpoint processes (issue 36: "4 workers vs 1"), without the
// chaos runner's polling: N worker processes serve the agent behind one address (the HTTP/2 proxy
// of test/support/h2-proxy.mjs, as a load balancer), registered once with restate-server, and the
// bench sends `--sessions` turns at once through the ingress (`send` waits for each turn's result).
// Each turn: a model call asking for 3 lookups (5 ms each), the lookups as steps, a model call for
// the answer. Before timing, every worker runs a warm-up round (code compiled, connections open).
//
//   npm run build && node bench/engines-workers.mjs [--workers=1,4] [--sessions=40] [--repeat=3]
//
// Prints one JSON line per round and a summary: sessions/s per worker count (median of the rounds,
// the counts alternated round by round so that the machine's load falls on both alike).
import { spawn } from 'node:child_process';
import http2 from 'node:http2';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { flagArgs } from './lib/flags.mjs';

const args = flagArgs();

if (args.child) await serveChild(JSON.parse(args.child));
else await main();

/** A worker: the agent as a Restate endpoint on an OS-chosen port, printed as `ready <port>`. */
async function serveChild(config) {
  process.env.RESTATE_LOGGING ??= 'ERROR';
  const restate = await import('@restatedev/restate-sdk');
  const { defineTool } = await import('../dist/index.js');
  const { restateAgent } = await import('../dist/engines/restate/index.js');
  const lookup = defineTool({
    name: 'lookup',
    description: 'reads a value',
    parameters: z.object({ key: z.string() }),
    idempotent: true,
    execute: async ({ key }) => {
      await new Promise((r) => setTimeout(r, 5));
      return `value of ${key}`;
    },
  });
  const agent = restateAgent('bench', () => ({ baseURL: config.model, apiKey: 'bench', tools: [lookup] }));
  const server = http2.createServer(restate.endpoint().bind(agent).http2Handler());
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${server.address().port}\n`));
}

async function main() {
  const { startScriptedServer } = await import('../dist/testing/index.js');
  const { restateClient } = await import('../dist/engines/restate/index.js');
  const { startRestateServer } = await import('../test/support/restate-server.mjs');
  const { startH2Proxy } = await import('../test/support/h2-proxy.mjs');
  const counts = (args.workers ?? '1,4').split(',').map(Number);
  const sessions = Number(args.sessions ?? 40);
  const repeat = Number(args.repeat ?? 3);
  const here = fileURLToPath(import.meta.url);

  const model = await startScriptedServer({
    record: false,
    scenario: {
      turns: [
        {
          toolCalls: ['a', 'b', 'c'].map((key) => ({ name: 'lookup', arguments: { key } })),
        },
        { content: 'done' },
      ],
    },
  });
  const restate = await startRestateServer();
  /** The live workers' ports; the proxy sends each request to one of them in turn. */
  let ports = [];
  let next = 0;
  const proxy = await startH2Proxy({ pick: () => ports[next++ % ports.length] });
  const client = restateClient({ url: restate.ingress, agent: 'bench' });
  const start = (n) =>
    Promise.all(
      Array.from({ length: n }, async () => {
        const child = spawn(process.execPath, [here, `--child=${JSON.stringify({ model: model.url })}`], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const port = await new Promise((resolve, reject) => {
          createInterface({ input: child.stdout }).on('line', (line) => {
            const m = /^ready (\d+)$/.exec(line);
            if (m) resolve(Number(m[1]));
          });
          child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
        });
        return { child, port };
      }),
    );
  const round = async (prefix, n) =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const result = await client.send(`${prefix}-${i}`, 'look up a, b and c');
        if (result.response !== 'done') throw new Error(`session ${prefix}-${i}: ${JSON.stringify(result)}`);
      }),
    );

  let registered = false;
  const results = new Map(counts.map((n) => [n, []]));
  for (let r = 0; r < repeat; r++) {
    for (const n of r % 2 === 0 ? counts : [...counts].reverse()) {
      const workers = await start(n);
      ports = workers.map((w) => w.port);
      if (!registered) {
        await restate.register(`http://127.0.0.1:${proxy.port}`);
        registered = true;
      }
      await round(`warm-${n}-${r}`, n * 4);
      const t0 = performance.now();
      await round(`s-${n}-${r}`, sessions);
      const seconds = (performance.now() - t0) / 1000;
      results.get(n).push(sessions / seconds);
      process.stdout.write(
        `${JSON.stringify({ workers: n, round: r, sessions, seconds: Number(seconds.toFixed(2)), perSecond: Number((sessions / seconds).toFixed(2)) })}\n`,
      );
      for (const w of workers) {
        const exited = new Promise((resolve) => w.child.once('exit', resolve));
        w.child.kill('SIGTERM');
        await exited;
        proxy.drop(w.port);
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const summary = Object.fromEntries(
    [...results].map(([n, xs]) => [`${n} workers`, Number(median(xs).toFixed(2))]),
  );
  process.stdout.write(`${JSON.stringify({ summary, sessionsPerSecond: 'median of rounds' })}\n`);
  proxy.close();
  await restate.stop();
  await model.close();
}
