import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type Agent,
  type AgentEvent,
  type AgentOptions,
  createAgent,
  defineTool,
  FileSessionStore,
  type Message,
  type TranscriptEntry,
} from '../src/index.js';
import { type ScriptedServer, type ScriptedTurn, startScriptedServer } from '../src/testing/index.js';
import { toolCallLedger } from '../src/unstable.js';
import { watchCrashes } from './support/crash-watch.js';
import { DiskFullStore } from './support/disk-full-store.js';
import { assertToolCallsAnswered } from './support/harness.js';

// A full disk: the store's appends and saves fail with a real ENOSPC while the flag is set (the files
// are real, in a temp dir). A failed write ends the turn in Error naming the write; what was not
// written goes first once there is space, so the transcript has no gap and a restore is valid.

let dir: string;
let server: ScriptedServer;
const agents: Agent[] = [];
const crashes = watchCrashes();

/** The model: a tool call for "go" or "fill", an answer after a tool result, else an echo of the text. */
function reply(messages: readonly Message[]): ScriptedTurn {
  const last = messages.at(-1);
  if (last?.role === 'tool') return { content: 'the tool answered' };
  const text = String(last?.content ?? '');
  if (text === 'go') return { toolCalls: [{ name: 'echo', arguments: { text: 'hello' } }] };
  if (text === 'fill') return { toolCalls: [{ name: 'fill', arguments: {} }] };
  return { content: `you said ${text}` };
}

beforeAll(async () => {
  server = await startScriptedServer({ respond: (request) => reply(request.messages as Message[]) });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentloop-disk-full-'));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.stop();
  await new Promise((r) => setTimeout(r, 20));
  expect(crashes).toEqual([]);
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

function tools(store: DiskFullStore, runs: string[]) {
  return [
    defineTool({
      name: 'echo',
      description: 'returns its text',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        runs.push('echo');
        return text;
      },
    }),
    defineTool({
      name: 'fill',
      description: 'writes a large file (the disk is full once it returns)',
      parameters: z.object({}),
      execute: () => {
        runs.push('fill');
        store.full = true;
        return 'filled';
      },
    }),
  ];
}

function agentOn(
  store: DiskFullStore | FileSessionStore,
  session: string,
  options: Partial<AgentOptions> = {},
) {
  const agent = createAgent({ baseURL: server.url, apiKey: 'test-key', store, session, ...options });
  agents.push(agent);
  const events: AgentEvent[] = [];
  agent.on('*', (e) => events.push(e));
  return { agent, events };
}

/** The transcript as written: seq 1..n with no gap, and the conversation it holds. */
async function transcriptOf(session: string) {
  const { entries, torn } = await new FileSessionStore({ dir }).readTranscript(session);
  expect(torn).toBeUndefined();
  expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
  const messages = entries.flatMap((e: TranscriptEntry) => (e.kind === 'message' ? [e.message] : []));
  return { entries, messages };
}

describe('a full disk (ENOSPC from the store)', () => {
  it('ends the turn in Error naming the write; once there is space, the unwritten entries go first', async () => {
    const store = new DiskFullStore(new FileSessionStore({ dir }));
    const runs: string[] = [];
    const { agent, events } = agentOn(store, 'disk-1', { tools: tools(store, runs) });
    await agent.ready();
    await agent.flush();
    const before = await store.inner.load('disk-1');

    store.full = true;
    const result = await agent.send('go');
    expect(result.terminateReason).toBe('error');
    expect(agent.state).toBe('Error');
    const transcriptFile = path.join(dir, 'disk-1', 'transcript.jsonl');
    expect(result.error).toMatch(
      /^appending \d+ entr(y|ies) to .*transcript\.jsonl failed: ENOSPC: no space left on device/,
    );
    expect(result.error).toContain(transcriptFile);
    expect(agent.context.error).toMatchObject({ code: 'session_store' });
    expect(events.filter((e) => e.type === 'turn_end').at(-1)).toMatchObject({ terminateReason: 'error' });
    expect(events.some((e) => e.type === 'error' && /ENOSPC/.test(e.message))).toBe(true);
    assertToolCallsAnswered(result.messages);
    // Nothing was saved past the transcript: the record on disk is the one from before the turn.
    expect(await store.inner.load('disk-1')).toEqual(before);

    store.full = false;
    const next = await agent.send('again');
    expect(next.terminateReason).toBe('completed');
    expect(next.response).toBe('you said again');
    // The server (which refuses what OpenAI refuses) got the whole conversation, and so did the disk, in order.
    expect(server.requests.at(-1)!.messages).toEqual(next.messages.slice(0, -1));
    await agent.flush();
    const written = await transcriptOf('disk-1');
    expect(written.messages).toEqual(next.messages);
    expect((await store.inner.load('disk-1'))!.state).toBe('Completed');

    const restored = agentOn(new FileSessionStore({ dir }), 'disk-1').agent;
    await restored.ready();
    expect(restored.state).toBe('Completed');
    expect(restored.messages).toEqual(next.messages);
  });

  it('a disk that fills while a tool runs ends the turn in Error; the result is recorded once there is space', async () => {
    const store = new DiskFullStore(new FileSessionStore({ dir }));
    const runs: string[] = [];
    const { agent } = agentOn(store, 'disk-2', { tools: tools(store, runs) });
    await agent.ready();
    await agent.flush();
    const result = await agent.send('fill');
    expect(result.terminateReason).toBe('error');
    expect(agent.state).toBe('Error');
    expect(result.error).toMatch(/transcript\.jsonl failed: ENOSPC/);
    expect(runs).toEqual(['fill']);
    assertToolCallsAnswered(result.messages);

    store.full = false;
    const next = await agent.send('again');
    expect(next.terminateReason).toBe('completed');
    await agent.flush();
    const written = await transcriptOf('disk-2');
    expect(written.messages).toEqual(next.messages);
    const ledger = [...toolCallLedger(written.entries).values()];
    expect(ledger).toEqual([
      expect.objectContaining({ status: 'completed', name: 'fill', result: 'filled' }),
    ]);
    expect(runs).toEqual(['fill']);
  });

  it('a call whose start cannot be recorded does not run, and its start is never written later', async () => {
    const store = new DiskFullStore(new FileSessionStore({ dir }));
    const runs: string[] = [];
    const { agent } = agentOn(store, 'disk-6', { tools: tools(store, runs) });
    await agent.ready();
    await agent.flush();
    // The disk fills as the call is handed to its runner: its tool_call_started line cannot be written.
    agent.on('tool_call_start', () => {
      store.full = true;
    });
    const result = await agent.send('go');
    expect(result.terminateReason).toBe('error');
    expect(runs).toEqual([]);
    expect(result.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringMatching(/could not be written/),
    });

    store.full = false;
    await agent.save();
    const written = await transcriptOf('disk-6');
    expect(written.messages).toEqual(agent.messages);
    // The ledger says what happened: the call never started (a start line would say it may have run).
    expect([...toolCallLedger(written.entries).values()]).toEqual([]);
  });

  it('a save that fails ends the turn in Error naming the save', async () => {
    const store = new DiskFullStore(new FileSessionStore({ dir }));
    const { agent, events } = agentOn(store, 'disk-3');
    await agent.ready();
    await agent.flush();
    store.fails = { appends: false, saves: true };
    store.full = true;
    const result = await agent.send('hello');
    expect(result.terminateReason).toBe('error');
    expect(result.response).toBe('you said hello');
    expect(result.error).toMatch(/^saving session "disk-3" to .*snapshot\.json failed: ENOSPC/);
    expect(agent.state).toBe('Error');
    expect(events.filter((e) => e.type === 'turn_end').at(-1)).toMatchObject({ terminateReason: 'error' });
    await expect(agent.save()).rejects.toMatchObject({ code: 'ENOSPC' });

    store.full = false;
    expect((await agent.save())?.state).toBe('Error');
    const restored = agentOn(new FileSessionStore({ dir }), 'disk-3').agent;
    expect((await restored.send('and now')).response).toBe('you said and now');
  });

  it('a session whose writes failed restores to a conversation the API accepts', async () => {
    // A nearly full disk: appends fail from the start of the turn, then small appends fit again (from
    // the first tool result on) while the snapshot still does not. With the failed entries dropped, the
    // transcript held a tool message without its assistant message, and every later request got a 400.
    const store = new DiskFullStore(new FileSessionStore({ dir }));
    const runs: string[] = [];
    const { agent } = agentOn(store, 'disk-4', { tools: tools(store, runs) });
    agent.on('tool_call_end', () => {
      store.fails = { appends: false, saves: true };
    });
    await agent.ready();
    await agent.flush();
    store.full = true;
    const result = await agent.send('go');
    expect(result.terminateReason).toBe('error');
    await agent.flush();
    agent.stop();
    store.full = false;

    const restored = agentOn(new FileSessionStore({ dir }), 'disk-4', { tools: tools(store, runs) }).agent;
    await restored.ready();
    assertToolCallsAnswered(restored.messages);
    const next = await restored.send('go on');
    expect(next.error).toBeUndefined();
    expect(next.terminateReason).toBe('completed');
  });

  it('a process that stops with entries unwritten leaves a transcript without a gap, restored in Interrupted', async () => {
    const store = new DiskFullStore(new FileSessionStore({ dir }));
    const runs: string[] = [];
    const { agent } = agentOn(store, 'disk-5', { tools: tools(store, runs) });
    await agent.ready();
    await agent.flush();
    expect((await agent.send('fill')).terminateReason).toBe('error');
    agent.stop(); // the unwritten entries die with the process
    store.full = false;

    await transcriptOf('disk-5');
    const restored = agentOn(new FileSessionStore({ dir }), 'disk-5', { tools: tools(store, runs) }).agent;
    await restored.ready();
    expect(restored.state).toBe('Interrupted');
    expect(restored.restoreReport!.calls).toEqual([
      expect.objectContaining({ name: 'fill', outcome: 'interrupted' }),
    ]);
    assertToolCallsAnswered(restored.messages);
    const next = await restored.resume();
    expect(next.terminateReason).toBe('completed');
    expect(runs).toEqual(['fill']);
  });
});
