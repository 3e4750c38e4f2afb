import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentloopHttpAgent } from '../src/server/client.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { type AnyEvent, postRun } from './support/ag-ui-server.js';
import { repoRoot } from './support/build-dist.js';
import { dropSchema, freshSchema, postgresUrl } from './support/postgres.js';
import { type ScriptChild, scriptChildren } from './support/script-child.js';
import { waitUntil } from './support/wait-until.js';

// Two server processes on one store: the one carrying a run is SIGKILLed, and the other takes the run
// over (docs/serve.md, "Takeover"); a cancel sent to the one that does not carry a run reaches it.

const dist = (file: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', file)).href);
const servers = scriptChildren<'postgres' | 'file'>(
  'agui-takeover-',
  `
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool, FileSessionStore } from ${dist('index.js')};
import { PostgresSessionStore } from ${dist('postgres/index.js')};
import { startAgentServer } from ${dist('server/index.js')};
const [mode, json] = process.argv.slice(2);
const config = JSON.parse(json);
const log = (what) => appendFileSync(config.log, what + ' ' + process.pid + '\\n');
const store =
  mode === 'postgres'
    ? new PostgresSessionStore({ connectionString: config.url, max: 4 }, { schema: config.schema })
    : new FileSessionStore({ dir: config.dir });
const tools = [
  defineTool({ name: 'note', description: 'notes', parameters: z.object({}), execute: () => (log('note'), 'noted') }),
  defineTool({
    name: 'slow',
    description: 'takes its time (until the process dies; where it has not run before, at once)',
    parameters: z.object({}),
    execute: () => {
      log('slow');
      return config.slowHangs ? new Promise(() => {}) : 'slow done';
    },
  }),
  defineTool({
    name: 'deploy',
    description: 'deploys',
    parameters: z.object({}),
    needsApproval: true,
    execute: () => (log('deploy'), 'deployed'),
  }),
];
const server = await startAgentServer({
  agent: () => ({ instructions: 'You help.', loopControlTools: false, tools }),
  store,
  runtime: { baseURL: config.model, apiKey: 'test-key' },
  pollMs: 50,
  leaseMs: config.leaseMs,
});
console.log(JSON.stringify({ url: server.url }));
`,
);

const scenario = {
  turns: [
    { toolCalls: [{ name: 'note', arguments: {} }] },
    { toolCalls: [{ name: 'slow', arguments: {} }] },
    { toolCalls: [{ name: 'deploy', arguments: {} }] },
    { content: 'All done.' },
  ],
};

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function model(turns: typeof scenario.turns): Promise<ScriptedServer> {
  const server = await startScriptedServer({ scenario: { turns } });
  cleanups.push(() => server.close());
  return server;
}

function logLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

async function urlOf(child: ScriptChild): Promise<string> {
  return (await child.reached).at(-1)!.url as string;
}

/** Two servers on one store (A carries the run; B is the other), for `mode`. */
async function twoServers(mode: 'postgres' | 'file', modelUrl: string) {
  const log = path.join(servers.work(), `calls-${mode}-${Date.now()}.log`);
  const store =
    mode === 'postgres'
      ? { url: postgresUrl(), schema: freshSchema('agui') }
      : { dir: path.join(servers.work(), `store-${Date.now()}`) };
  if ('schema' in store) cleanups.push(() => dropSchema(store.schema!));
  const base = { ...store, log, model: modelUrl, leaseMs: 1_500 };
  const isUrl = (line: Record<string, unknown>) => typeof line.url === 'string';
  const a = servers.run(mode, { ...base, slowHangs: true }, isUrl);
  const b = servers.run(mode, base, isUrl);
  return { a, b, aUrl: await urlOf(a), bUrl: await urlOf(b), log };
}

describe.each(['postgres', 'file'] as const)('a run whose server process was killed (%s store)', (mode) => {
  it('is taken over by the other server: the reconnected client sees it finish once, no recorded call runs again, the approval through it is applied once', async () => {
    const scripted = await model(scenario.turns);
    const { a, aUrl, bUrl, log } = await twoServers(mode, scripted.url);
    const client = new AgentloopHttpAgent({ url: `${aUrl}/agents/default/runs`, threadId: 't-take' });
    client.addMessage({ id: 'u1', role: 'user', content: 'ship it' });
    const before: AnyEvent[] = [];
    const first = client
      .runAgent({}, { onEvent: ({ event }) => void before.push(event) })
      .catch((error: unknown) => error);
    await waitUntil(() => logLines(log).some((l) => l.startsWith('slow ')), 'the slow call to start');
    a.child.kill('SIGKILL');
    await a.exited;
    expect(await first).toBeInstanceOf(Error); // the stream was cut with the process

    // The client reconnects to the other server, from the last event id it saw.
    expect(client.lastEventId).toBeDefined();
    client.url = `${bUrl}/agents/default/runs`;
    const after: AnyEvent[] = [];
    await client.connectAgent({}, { onEvent: ({ event }) => void after.push(event) });
    const ends = (events: AnyEvent[]) =>
      events.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR');
    expect(ends(before)).toEqual([]);
    expect(ends(after)).toHaveLength(1);
    const end = after.at(-1)!;
    expect(end).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    const interrupt = end.outcome.interrupts[0];
    expect(interrupt).toMatchObject({ reason: 'tool_approval', metadata: { toolName: 'deploy' } });
    // The call cut off with the process was not run again: its result is "outcome unknown".
    const results = [...before, ...after].filter((e) => e.type === 'TOOL_CALL_RESULT');
    expect(results.map((r) => r.content)).toEqual(['noted', expect.stringMatching(/outcome unknown/i)]);

    // The approval answered through the second server is applied once; a retry is refused by id.
    const resumed: AnyEvent[] = [];
    await client.runAgent(
      { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] },
      { onEvent: ({ event }) => void resumed.push(event) },
    );
    expect(resumed.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'All done.' });
    const retry = await fetch(`${bUrl}/agents/default/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        threadId: 't-take',
        runId: 'retry',
        messages: [],
        resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
      }),
    });
    expect(retry.status).toBe(409);
    const calls = logLines(log).map((line) => line.split(' ')[0]);
    expect(calls).toEqual(['note', 'slow', 'deploy']);
    const pids = logLines(log).map((line) => Number(line.split(' ')[1]));
    expect(pids[1]).toBe(a.child.pid);
    expect(pids[2]).not.toBe(a.child.pid);
  }, 90_000);
});

describe('a cancel sent to the server that does not carry the run', () => {
  it('reaches the carrier through the session inbox: the run ends cancelled, the thread goes on', async () => {
    const scripted = await model([
      { toolCalls: [{ name: 'slow', arguments: {} }] },
      { content: 'Hello again.' },
    ]);
    const { aUrl, bUrl, log } = await twoServers('postgres', scripted.url);
    const thread = `${bUrl}/agents/default/threads/t-cancel`;
    // Nothing runs yet: a cancel has nothing to reach.
    const early = await fetch(`${thread}/runs/run-c/cancel`, { method: 'POST' });
    expect(early.status).toBe(404);
    const running = postRun(`${aUrl}/agents/default/runs`, {
      threadId: 't-cancel',
      runId: 'run-c',
      protocolVersion: '1.0',
      messages: [{ id: 'u1', role: 'user', content: 'go slow' }],
    });
    await waitUntil(() => logLines(log).some((l) => l.startsWith('slow ')), 'the slow call to start');
    const wrong = await fetch(`${thread}/runs/other-run/cancel`, { method: 'POST' });
    expect(wrong.status).toBe(404);
    const cancel = await fetch(`${thread}/runs/run-c/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    expect(await cancel.json()).toEqual({ cancelled: 'run-c', via: 'inbox' });
    const { events } = await running;
    expect(events.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR')).toEqual([
      expect.objectContaining({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } }),
    ]);
    // Nothing half-written: the next run, through the other server, goes on from the cancelled turn.
    const next = await postRun(`${bUrl}/agents/default/runs`, {
      threadId: 't-cancel',
      runId: 'run-d',
      protocolVersion: '1.0',
      messages: [
        { id: 'u1', role: 'user', content: 'go slow' },
        { id: 'u2', role: 'user', content: 'hello?' },
      ],
    });
    expect(next.events.at(-1), JSON.stringify(next.events.at(-1))).toMatchObject({
      type: 'RUN_FINISHED',
      result: 'Hello again.',
    });
    // The cancel was used up: it does not stop the next run, and the run that ended cannot be cancelled.
    const late = await fetch(`${thread}/runs/run-c/cancel`, { method: 'POST' });
    expect(late.status).toBe(404);
    expect(logLines(log).map((l) => l.split(' ')[0])).toEqual(['slow']);
  }, 90_000);
});
