import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/agent/agent.js';
import { PostgresSessionStore } from '../src/postgres/postgres-session-store.js';
import { FileSessionStore } from '../src/session/file-store/file-session-store.js';
import { SessionStoreError } from '../src/session/session-store-error.js';
import { repoRoot } from './support/build-dist.js';
import { serve } from './support/harness.js';
import { dropSchema, freshSchema, postgresUrl } from './support/postgres.js';
import { scriptChildren } from './support/script-child.js';

const dist = (file: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', file)).href);

/**
 * The child: one agent on a session of the given store. `hold` opens it and waits; `block` runs a turn
 * whose tool blocks the event loop (a paused process: no lease renewal) for `blockMs`.
 */
const CHILD = `
import { z } from 'zod';
import { createAgent, defineTool, FileSessionStore } from ${dist('index.js')};
import { PostgresSessionStore } from ${dist('postgres/index.js')};
const [mode, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
const say = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
const store = config.postgres
  ? new PostgresSessionStore({ connectionString: config.postgres }, { schema: config.schema })
  : new FileSessionStore({ dir: config.sessions });
const freeze = defineTool({
  name: 'freeze',
  description: 'blocks the process',
  parameters: z.object({}),
  execute: () => {
    say({ blocking: true });
    const end = Date.now() + config.blockMs;
    while (Date.now() < end) {}
    return 'unfrozen';
  },
});
const agent = createAgent({ baseURL: config.baseURL, apiKey: 'test', store, session: config.session, leaseMs: config.leaseMs, tools: [freeze] });
agent.on('error', (e) => say({ error: e.message }));
await agent.ready();
if (mode === 'hold') {
  say({ ready: true, pid: process.pid });
  // Hold the session until killed: the lease's renewal timer is unref'd, so without this the
  // process could exit (freeing the lease: a dead pid's is free at once) before the parent looks.
  setInterval(() => {}, 60_000);
} else {
  const result = await agent.send('freeze please');
  say({ done: true, state: agent.state, error: result.error ?? null });
  agent.stop();
  await store.close?.();
}
`;

const children = scriptChildren<'hold' | 'block'>('ownership-', CHILD);

describe('one owner per session', () => {
  it('file store: a second process gets "session in use by pid N" from ready() and send(); after a SIGKILL the session is free at once', async () => {
    const server = await serve({ turns: [{ content: 'mine now' }] });
    const sessions = path.join(children.work(), 'sessions');
    const holder = children.run(
      'hold',
      { baseURL: server.url, sessions, session: 'shared-1' },
      (l) => l.ready === true,
    );
    await holder.reached;
    const pid = holder.child.pid!;

    const store = new FileSessionStore({ dir: sessions });
    const second = createAgent({ baseURL: server.url, apiKey: 'test', store, session: 'shared-1' });
    const refused = await second.ready().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SessionStoreError);
    expect((refused as SessionStoreError).code).toBe('in_use');
    expect((refused as Error).message).toContain(`Session "shared-1" is in use by pid ${pid}`);
    await expect(second.send('hello')).rejects.toThrow(`in use by pid ${pid}`);
    second.stop();

    holder.child.kill('SIGKILL');
    await holder.exited;
    const third = createAgent({ baseURL: server.url, apiKey: 'test', store, session: 'shared-1' });
    expect((await third.send('hello')).response).toBe('mine now');
    third.stop();
  });

  it('postgres: a paused owner whose lease lapsed and was taken cannot overwrite the newer state (fencing)', async () => {
    const server = await serve({
      turns: [{ toolCalls: [{ name: 'freeze', arguments: {} }] }, { content: 'should never be saved' }],
    });
    const schema = freshSchema('fence');
    const config = {
      baseURL: server.url,
      postgres: postgresUrl(),
      schema,
      session: 'fenced-1',
      leaseMs: 300,
      blockMs: 1_500,
    };
    const paused = children.run('block', config, (l) => l.done === true);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (paused.lines.some((l) => l.blocking)) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
    // The child is frozen mid-tool: its lease lapses and this process takes the session.
    const store = new PostgresSessionStore({ connectionString: postgresUrl() }, { schema });
    let lease: Awaited<ReturnType<typeof store.acquireLease>> | undefined;
    for (let i = 0; i < 50 && !lease; i++) {
      lease = await store
        .acquireLease('fenced-1', { owner: 'rescuer', leaseMs: 60_000 })
        .catch(() => undefined);
      if (!lease) await new Promise((r) => setTimeout(r, 50));
    }
    expect(lease).toBeDefined();
    const newer = await store.save(
      { id: 'fenced-1', state: 'AwaitingInput', snapshot: { by: 'rescuer' } },
      { lease },
    );
    const lines = await paused.reached;
    const done = lines.find((l) => l.done)!;
    expect(done.state).toBe('Error');
    expect(String(done.error)).toMatch(/lease \(token \d+\) was taken over by pid \d+/);
    expect(await store.load('fenced-1')).toEqual(newer);
    const { entries } = await store.readTranscript('fenced-1');
    // The frozen owner's tool result never reached the transcript.
    expect(entries.some((e) => e.kind === 'tool_call_finished')).toBe(false);
    expect(entries.some((e) => e.kind === 'tool_call_started')).toBe(true);
    await store.close();
    await dropSchema(schema);
  });
});
