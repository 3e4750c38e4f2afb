import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type Agent,
  type AgentEvent,
  createAgent,
  FileSessionStore,
  MemorySessionStore,
  SessionStoreError,
} from '../src/index.js';
import { initialContext } from '../src/machines/agent-context.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { watchCrashes } from './support/crash-watch.js';
import { editRecordFile } from './support/record-file.js';

// A snapshot.json that parses and has the store's fields but whose persisted machine snapshot does
// not fit the machine (a later version renamed a state, a context that is null, messages that are a
// string) is refused on load as `corrupt`, naming the file and the field: never a crash.

let dir: string;
let server: ScriptedServer;
const agents: Agent[] = [];
const crashes = watchCrashes();

beforeAll(async () => {
  server = await startScriptedServer({ respond: () => ({ content: 'ok' }) });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentloop-validate-'));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

function agentFor(store: FileSessionStore | MemorySessionStore, session: string): Agent {
  const agent = createAgent({ baseURL: server.url, apiKey: 'test-key', store, session });
  agents.push(agent);
  return agent;
}

/** A real session saved by a real agent, then `edit` applied to the persisted snapshot in its file. */
async function savedThenEdited(session: string, edit: (snapshot: Record<string, unknown>) => void) {
  const store = new FileSessionStore({ dir });
  const first = agentFor(store, session);
  await first.send('hi');
  await first.flush();
  first.stop();
  const file = await editRecordFile(path.join(dir, session), (record) => edit(record.snapshot));
  return { store, file };
}

/** Loads the session in a new agent and returns what it reported, checking it never crashed. */
async function loadFails(store: FileSessionStore | MemorySessionStore, session: string) {
  const agent = agentFor(store, session);
  const errors: AgentEvent<'error'>[] = [];
  agent.on('error', (e) => errors.push(e));
  const error = await agent.ready().then(
    () => undefined,
    (e: unknown) => e,
  );
  await new Promise((r) => setTimeout(r, 20)); // let anything uncaught surface
  expect(crashes).toEqual([]);
  expect(error).toBeInstanceOf(SessionStoreError);
  const storeError = error as SessionStoreError;
  expect(storeError.code).toBe('corrupt');
  // The agent never started: it says so, and every call that needs the session gets the store's error.
  expect(agent.state).toBe('Initializing');
  expect(() => agent.actor).toThrow(/did not start: its session could not be loaded: .*is corrupt/);
  await expect(agent.send('again')).rejects.toBe(error);
  await expect(agent.resume()).rejects.toBe(error);
  return { error: storeError, errors };
}

describe('a persisted snapshot is validated when a session is loaded', () => {
  it('refuses a state name this version does not know (a later version renamed it), naming the file and field', async () => {
    const { store, file } = await savedThenEdited('renamed-1', (s) => {
      s.value = 'Reflecting';
    });
    const { error, errors } = await loadFails(store, 'renamed-1');
    expect(error.file).toBe(file);
    expect(error.sessionId).toBe('renamed-1');
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/snapshot\.value.*"Reflecting"/);
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      [
        'session_store',
        expect.stringMatching(/loading session "renamed-1" failed: .*snapshot(\.1)?\.json.*snapshot\.value/),
      ],
    ]);
  });

  it('refuses a null context', async () => {
    const { store, file } = await savedThenEdited('null-1', (s) => {
      s.context = null;
    });
    const { error } = await loadFails(store, 'null-1');
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/snapshot\.context\b.*expected object/);
  });

  it('refuses messages that are a string', async () => {
    const { store } = await savedThenEdited('messages-1', (s) => {
      (s.context as Record<string, unknown>).messages = 'hello';
    });
    const { error } = await loadFails(store, 'messages-1');
    expect(error.message).toMatch(/snapshot\.context\.messages\b.*expected array/);
  });

  it('refuses a field of the wrong type deeper in the context, and a child that is not an object', async () => {
    const wrongBatch = await savedThenEdited('batch-1', (s) => {
      (s.context as { batch: { pending: unknown } }).batch.pending = 'c1';
    });
    expect((await loadFails(wrongBatch.store, 'batch-1')).error.message).toMatch(
      /snapshot\.context\.batch\.pending\b/,
    );
    const child = await savedThenEdited('child-1', (s) => {
      s.children = { 'tools:x': 42 };
    });
    expect((await loadFails(child.store, 'child-1')).error.message).toMatch(/snapshot\.children\.tools:x\b/);
  });

  it('refuses a conversation whose tool message answers no call of the message before it', async () => {
    const { store } = await savedThenEdited('orphan-1', (s) => {
      const context = s.context as { messages: unknown[] };
      context.messages.splice(1, 0, { role: 'tool', tool_call_id: 'call_x', content: 'stray' });
    });
    const { error } = await loadFails(store, 'orphan-1');
    expect(error.message).toMatch(/snapshot\.context\.messages\.1\b.*call_x/);
  });

  it('names the session when the store has no files (memory store)', async () => {
    const store = new MemorySessionStore();
    await store.save({
      id: 'mem-1',
      state: 'Completed',
      snapshot: { status: 'active', value: 'Completed', context: { ...initialContext({}), turn: 'one' } },
    });
    const { error } = await loadFails(store, 'mem-1');
    expect(error.message).toMatch(
      /Session "mem-1": the saved snapshot is corrupt \(snapshot\.context\.turn\b/,
    );
  });

  it('still loads a 0.1 snapshot: it is upgraded before it is checked', async () => {
    const store = new MemorySessionStore();
    const {
      batch: _b,
      alwaysAllowed: _a,
      ...context
    } = {
      ...initialContext({ sessionId: 'old-1' }),
      initialized: true,
      turn: 1,
      lastState: 'Completed' as const,
      terminateReason: 'completed' as const,
      messages: [
        { role: 'user' as const, content: 'hi' },
        { role: 'assistant' as const, content: 'hello' },
      ],
    };
    await store.save({
      id: 'old-1',
      state: 'Completed',
      snapshot: {
        status: 'active',
        value: 'Completed',
        context: { ...context, calls: [], results: {}, pending: [], started: [], runners: [] },
        children: {},
      },
    });
    const agent = agentFor(store, 'old-1');
    await agent.ready();
    expect(agent.state).toBe('Completed');
    expect((await agent.send('again')).response).toBe('ok');
  });
});
