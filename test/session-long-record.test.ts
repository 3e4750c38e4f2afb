import { cp, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULTS } from '../src/defaults.js';
import {
  type Agent,
  type AgentOptions,
  createAgent,
  defineTool,
  FileSessionStore,
  MemorySessionStore,
  type Message,
} from '../src/index.js';
import { checkPersistedSnapshot } from '../src/machines/agent-snapshot.js';
import { expandSnapshot } from '../src/session/saved-conversation.js';
import type { TranscriptEntry } from '../src/session/transcript.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { createSessionClient } from '../src/workers/session-client.js';
import { startWorker } from '../src/workers/session-worker.js';
import { CrashableStore } from './support/crashable-store.js';
import { assertToolCallsAnswered, testDir } from './support/harness.js';

// Issue 28: a save writes what changed, not the session. Past DEFAULTS.recordMessagesInline messages
// the record refers to the transcript for the conversation; the restore rebuilds it from there,
// verbatim, with the messages the transcript holds redacted kept exact in the record.

const SECRET = 'sk-abcdefghijklmnopqrstuvwxyz012345';
const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'sessions-v1');
let server: ScriptedServer;
const agents: Agent[] = [];

beforeAll(async () => {
  server = await startScriptedServer({
    respond: (request) => {
      const last = request.messages.at(-1) as Message;
      if (last.role === 'tool') return { content: `done: ${String(last.content).slice(0, 30)}` };
      if (last.content === 'deploy')
        return { toolCalls: [{ name: 'deploy', arguments: { target: 'prod' } }] };
      return { toolCalls: [{ name: 'lookup', arguments: { key: String(last.content).slice(0, 20) } }] };
    },
  });
});
afterAll(async () => {
  for (const agent of agents.splice(0)) agent.stop();
  await server.close();
});

const tools = (onRun: (name: string) => void = () => {}) => [
  defineTool({
    name: 'lookup',
    description: 'lookup',
    parameters: z.object({ key: z.string() }),
    execute: ({ key }) => {
      onRun('lookup');
      return `value of ${key}`;
    },
  }),
  defineTool({
    name: 'deploy',
    description: 'deploy',
    parameters: z.object({ target: z.string() }),
    needsApproval: true,
    execute: ({ target }) => {
      onRun('deploy');
      return `deployed to ${target}`;
    },
  }),
];

function agentOn(store: AgentOptions['store'], session: string, options: Partial<AgentOptions> = {}) {
  const agent = createAgent({
    baseURL: server.url,
    apiKey: 'test-key',
    instructions: 'You are terse.',
    tools: tools(),
    store,
    session,
    ...options,
  });
  agents.push(agent);
  return agent;
}

/** Sends `count` turns of one tool round each (4 messages a turn). */
async function turns(agent: Agent, count: number, from = 0) {
  for (let i = from; i < from + count; i++) {
    const result = await agent.send(`question ${i}`);
    expect(result.terminateReason).toBe('completed');
  }
  await agent.flush();
}

describe('a long session saves a record that refers to its transcript', () => {
  it('writes the same bytes per save at 41 and 81 messages, and a new agent restores the conversation as it was', async () => {
    const dir = await testDir('agentloop-long-record-');
    const store = new FileSessionStore({ dir });
    const first = agentOn(store, 'long-1');
    await turns(first, 10);
    const file = store.files('long-1').snapshot;
    const small = (await stat(file)).size;
    const record = await store.load('long-1');
    expect((record!.snapshot as { context: { messages: unknown } }).context.messages).toEqual({
      fromTranscript: 41,
    });
    await turns(first, 10, 10);
    // Twice the conversation; the record file is the same size (the old record grew with it: 2x).
    expect((await stat(file)).size / small).toBeLessThan(1.1);
    const messages = first.messages;
    expect(messages).toHaveLength(81);
    first.stop();

    const second = agentOn(new FileSessionStore({ dir }), 'long-1');
    await second.ready();
    expect(second.state).toBe('Completed');
    expect(second.restoreReport).toMatchObject({ savedState: 'Completed', replayedMessages: 0, calls: [] });
    expect(second.messages).toEqual(messages);
    await turns(second, 1, 20);
    expect(server.requests.at(-1)!.messages.slice(0, 81)).toEqual(messages);
  });

  it('keeps a message the transcript holds redacted exact in the record, and restores it exact', async () => {
    const store = new MemorySessionStore();
    const first = agentOn(store, 'secret-1');
    await first.send(`remember ${SECRET}`);
    await turns(first, 9);
    first.stop();
    const { entries } = await store.readTranscript('secret-1');
    const written = entries.flatMap((e) => (e.kind === 'message' ? [e.message] : []));
    expect(JSON.stringify(written)).not.toContain(SECRET);
    const reference = ((await store.load('secret-1'))!.snapshot as { context: { messages: unknown } }).context
      .messages as { fromTranscript: number; exact: Record<string, Message> };
    expect(reference.fromTranscript).toBe(41);
    expect(Object.keys(reference.exact)).toEqual(['1']);
    expect(reference.exact['1']).toEqual({ role: 'user', content: `remember ${SECRET}` });

    const second = agentOn(store, 'secret-1');
    await second.ready();
    expect(second.messages[1]).toEqual({ role: 'user', content: `remember ${SECRET}` });
    expect(second.messages).toEqual(first.messages);
  });

  it('a crash between rest points: the conversation is rebuilt from the transcript, the cut-off call is not run again', async () => {
    const store = new CrashableStore(new MemorySessionStore());
    let lookups = 0;
    const first = agentOn(store, 'crash-1', {
      tools: tools((name) => {
        if (name !== 'lookup') return;
        lookups++;
        if (lookups === 11) store.crash(); // dies while the 11th lookup runs: its start is on record
      }),
    });
    await turns(first, 10);
    void first.send('question 10');
    await expect.poll(() => store.crashed).toBe(true);
    first.stop();

    const second = agentOn(store.inner, 'crash-1', {
      tools: tools((name) => name === 'lookup' && lookups++),
    });
    await second.ready();
    expect(second.state).toBe('Interrupted');
    expect(second.restoreReport).toMatchObject({
      savedState: 'Completed',
      replayedMessages: 2,
      calls: [{ name: 'lookup', outcome: 'interrupted' }],
    });
    expect(second.messages).toHaveLength(44);
    expect(second.messages.slice(0, 41)).toEqual(first.messages.slice(0, 41));
    assertToolCallsAnswered(second.messages);
    expect(lookups).toBe(11);
    expect((await second.resume()).terminateReason).toBe('completed');
    expect(lookups).toBe(11);
  });

  it('a long session saved waiting for approval restores there from its transcript; the approval runs the call once', async () => {
    const store = new MemorySessionStore();
    const ran: string[] = [];
    const first = agentOn(store, 'approval-1', { tools: tools((n) => ran.push(n)) });
    await turns(first, 10);
    void first.send('deploy');
    await expect.poll(() => first.state).toBe('WaitingApproval');
    await first.flush();
    first.stop();
    const reference = ((await store.load('approval-1'))!.snapshot as { context: { messages: unknown } })
      .context.messages;
    expect(reference).toEqual({ fromTranscript: 43 });

    const second = agentOn(store, 'approval-1', { tools: tools((n) => ran.push(n)) });
    await second.ready();
    expect(second.state).toBe('WaitingApproval');
    expect(second.messages).toEqual(first.messages);
    const [pending] = second.pendingApprovals;
    const done = new Promise((resolve) => second.on('turn_end', resolve));
    second.approve(pending!.toolCallId);
    await done;
    expect(ran.filter((n) => n === 'deploy')).toEqual(['deploy']);
    expect(second.state).toBe('Completed');
    assertToolCallsAnswered(second.messages);
  });

  it('a lost transcript: the restore says so and rests in Error; the conversation it held is gone; a new message goes on', async () => {
    const dir = await testDir('agentloop-long-lost-');
    const first = agentOn(new FileSessionStore({ dir }), 'lost-1');
    await turns(first, 10);
    first.stop();
    const transcript = new FileSessionStore({ dir }).files('lost-1').transcript;
    await unlink(transcript);

    const second = agentOn(new FileSessionStore({ dir }), 'lost-1');
    await second.ready();
    expect(second.state).toBe('Error');
    expect(second.restoreReport?.transcript).toMatchObject({ status: 'missing', file: transcript });
    expect(second.messages).toEqual([]);
    expect((await second.send('again')).terminateReason).toBe('completed');
  });

  it('a transcript replaced by one that holds fewer messages than the record refers to is reported, not misread', async () => {
    const store = new MemorySessionStore();
    const first = agentOn(store, 'short-1');
    await turns(first, 10);
    first.stop();
    const record = (await store.load('short-1'))!;
    // Another session's transcript, as long in entries, holding fewer messages.
    const other = new MemorySessionStore();
    await other.save({ ...record, snapshot: record.snapshot });
    await other.appendTranscript(
      'short-1',
      Array.from({ length: record.transcriptSeq }, () => ({ kind: 'event' as const, event: 'note' })),
    );
    const second = agentOn(other, 'short-1');
    await second.ready();
    expect(second.state).toBe('Error');
    expect(second.restoreReport?.transcript).toMatchObject({ status: 'truncated' });
  });
});

describe('sessions saved by earlier versions (test/fixtures/sessions-v1, made on main before issue 28)', () => {
  it('load with the conversation their record holds, and switch to a record that refers to the transcript as they grow', async () => {
    const dir = await testDir('agentloop-v1-');
    await cp(fixtures, dir, { recursive: true });
    const saved = JSON.parse(await readFile(path.join(fixtures, 'v1-completed', 'snapshot.json'), 'utf8'));
    const first = agentOn(new FileSessionStore({ dir }), 'v1-completed');
    await first.ready();
    expect(first.state).toBe('Completed');
    expect(first.messages).toEqual(saved.snapshot.context.messages);
    expect(first.messages[1]!.content).toContain(SECRET);
    await turns(first, 8);
    first.stop();
    const record = await new FileSessionStore({ dir }).load('v1-completed');
    expect((record!.snapshot as { context: { messages: unknown } }).context.messages).toMatchObject({
      fromTranscript: 39,
      exact: { '1': { role: 'user', content: `my key is ${SECRET}` } },
    });

    const second = agentOn(new FileSessionStore({ dir }), 'v1-completed');
    await second.ready();
    expect(second.messages).toEqual(first.messages);
    expect(second.messages.slice(0, 7)).toEqual(saved.snapshot.context.messages);
  });

  it('a session saved waiting for approval restores there; the approval runs the call once', async () => {
    const dir = await testDir('agentloop-v1-');
    await cp(fixtures, dir, { recursive: true });
    const ran: string[] = [];
    const agent = agentOn(new FileSessionStore({ dir }), 'v1-approval', { tools: tools((n) => ran.push(n)) });
    await agent.ready();
    expect(agent.state).toBe('WaitingApproval');
    const [pending] = agent.pendingApprovals;
    expect(pending).toMatchObject({ name: 'deploy' });
    const done = new Promise((resolve) => agent.on('turn_end', resolve));
    agent.approve(pending!.toolCallId);
    await done;
    expect(ran).toEqual(['deploy']);
    expect(agent.state).toBe('Completed');
  });
});

describe('expandSnapshot', () => {
  const entry = (seq: number, message: Message): TranscriptEntry =>
    ({ seq, at: '2026-01-01T00:00:00.000Z', kind: 'message', message }) as TranscriptEntry;

  it('gives back the transcript message objects themselves: every field as written, unknown ones too', () => {
    const reasoning = {
      role: 'assistant',
      content: 'ok',
      reasoning_items: [{ id: 'rs_1', encrypted_content: 'x' }],
    } as unknown as Message;
    const entries = [entry(1, { role: 'user', content: 'hi' }), entry(2, reasoning)];
    const saved = { status: 'active', value: 'Completed', context: { messages: { fromTranscript: 2 } } };
    const { snapshot, missing } = expandSnapshot(saved, entries);
    const messages = (snapshot as { context: { messages: Message[] } }).context.messages;
    expect(missing).toBe(0);
    expect(messages[1]).toBe(reasoning);
  });

  it('leaves a malformed reference for the snapshot check to name', () => {
    const saved = { status: 'active', value: 'Completed', context: { messages: { fromTranscript: -1 } } };
    const { snapshot } = expandSnapshot(saved, []);
    expect(snapshot).toBe(saved);
    expect(checkPersistedSnapshot(snapshot)).toMatchObject({ ok: false, field: 'snapshot.context.messages' });
  });

  it('the inline limit is the documented default', () => {
    expect(DEFAULTS.recordMessagesInline).toBe(32);
  });
});

describe('a worker carrying a restored session', () => {
  it('loads its record once and reads its transcript once per claim', async () => {
    const calls = { load: 0, readTranscript: 0 };
    class CountingStore extends MemorySessionStore {
      override load(id: string) {
        calls.load++;
        return super.load(id);
      }
      override readTranscript(id: string) {
        calls.readTranscript++;
        return super.readTranscript(id);
      }
    }
    const store = new CountingStore();
    const worker = startWorker({
      store,
      agent: () => ({ baseURL: server.url, apiKey: 'test-key', tools: tools() }),
    });
    try {
      const client = createSessionClient({ store, pollMs: 10 });
      await client.send('w1', 'first');
      await client.waitFor('w1', { states: ['Completed'] });
      // The client's own reads are not the worker's.
      await expect.poll(async () => (await store.readInbox('w1')).length).toBe(0);
      calls.load = 0;
      calls.readTranscript = 0;
      await store.postInbox('w1', { kind: 'message', text: 'second' });
      await expect.poll(async () => (await store.readInbox('w1')).length, { timeout: 5000 }).toBe(0);
      expect(calls).toEqual({ load: 1, readTranscript: 1 });
    } finally {
      await worker.stop();
    }
  });
});
