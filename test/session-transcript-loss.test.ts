import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import {
  type Agent,
  type AgentEvent,
  type AgentOptions,
  createAgent,
  defineTool,
  FileSessionStore,
  type Message,
} from '../src/index.js';
import { type ScriptedServer, type ScriptedTurn, startScriptedServer } from '../src/testing/index.js';
import { assertToolCallsAnswered } from './support/harness.js';

// A transcript.jsonl that is gone (or shorter than the last save says) is never resumed silently: the
// restore report says so, an `error` event names the file, and the agent rests in Error, from which a
// new message (or resume) goes on with a new transcript that holds the restored conversation.

let dir: string;
let server: ScriptedServer;
const agents: Agent[] = [];

function reply(messages: readonly Message[]): ScriptedTurn {
  const last = messages.at(-1);
  if (last?.role === 'tool') return { content: 'deployed' };
  const text = String(last?.content ?? '');
  if (text === 'deploy') {
    return {
      toolCalls: [
        { name: 'lookup', arguments: {} },
        { name: 'deploy', arguments: {} },
      ],
    };
  }
  return { content: `you said ${text}` };
}

beforeAll(async () => {
  server = await startScriptedServer({ respond: (request) => reply(request.messages as Message[]) });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentloop-transcript-loss-'));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

function agentOn(session: string, options: Partial<AgentOptions> = {}) {
  const agent = createAgent({
    baseURL: server.url,
    apiKey: 'test-key',
    store: new FileSessionStore({ dir }),
    session,
    ...options,
  });
  agents.push(agent);
  const events: AgentEvent[] = [];
  agent.on('*', (e) => events.push(e));
  return { agent, events };
}

const transcriptFile = (session: string) => path.join(dir, session, 'transcript.jsonl');

describe('a transcript that lost entries', () => {
  it('deleted: the restore says so, an error event names the file, and the agent rests in Error until a new message', async () => {
    const first = agentOn('lost-1').agent;
    await first.send('hello');
    await first.flush();
    first.stop();
    const saved = await new FileSessionStore({ dir }).load('lost-1');
    await unlink(transcriptFile('lost-1'));

    const { agent, events } = agentOn('lost-1');
    await agent.ready();
    expect(agent.state).toBe('Error');
    expect(agent.restoreReport).toMatchObject({
      savedState: 'Completed',
      state: 'Error',
      transcript: {
        status: 'missing',
        file: transcriptFile('lost-1'),
        expectedSeq: saved!.transcriptSeq,
        foundSeq: 0,
      },
    });
    expect(agent.context.error).toEqual({
      message: expect.stringContaining(`The transcript ${transcriptFile('lost-1')} is missing`),
      code: 'transcript_missing',
    });
    expect(events.filter((e) => e.type === 'error').map((e) => [e.code, e.message])).toEqual([
      ['transcript_missing', expect.stringContaining(transcriptFile('lost-1'))],
    ]);
    // The conversation is the one saved, and it goes on from there.
    expect(agent.messages.map((m) => m.content)).toEqual(['hello', 'you said hello']);
    const next = await agent.send('again');
    expect(next.terminateReason).toBe('completed');
    expect(server.requests.at(-1)!.messages.map((m) => m.content)).toEqual([
      'hello',
      'you said hello',
      'again',
    ]);

    // The new transcript holds the whole restored conversation, after what the restore found.
    await agent.flush();
    const { entries } = await new FileSessionStore({ dir }).readTranscript('lost-1');
    expect(entries.find((e) => e.kind === 'event' && e.event === 'session_restored')).toMatchObject({
      data: { transcript: { status: 'missing' } },
    });
    expect(entries.flatMap((e) => (e.kind === 'message' ? [e.message] : []))).toEqual(next.messages);
    agent.stop();
    const third = agentOn('lost-1').agent;
    await third.ready();
    expect(third.state).toBe('Completed');
    expect(third.restoreReport?.transcript).toBeUndefined();
  });

  it('deleted while calls waited for approval: nothing runs again, every call is answered', async () => {
    const runs: string[] = [];
    const tools = () =>
      ['lookup', 'deploy'].map((name) =>
        defineTool({
          name,
          description: name,
          parameters: z.object({}),
          needsApproval: name === 'deploy',
          execute: () => {
            runs.push(name);
            return `${name} done`;
          },
        }),
      );
    const first = agentOn('lost-2', { tools: tools() }).agent;
    await first.ready();
    void first.send('deploy');
    await waitFor(
      first.actor,
      (s) => s.matches('WaitingApproval') && Object.keys(s.context.batch.results).length === 1,
    );
    await first.flush();
    first.stop();
    await unlink(transcriptFile('lost-2'));

    const { agent } = agentOn('lost-2', { tools: tools() });
    await agent.ready();
    expect(agent.state).toBe('Error');
    expect(agent.restoreReport!.calls.map((c) => `${c.name}:${c.outcome}`)).toEqual([
      'lookup:recorded',
      'deploy:not-run',
    ]);
    expect(agent.pendingApprovals).toEqual([]);
    assertToolCallsAnswered(agent.messages);
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toEqual(['lookup']);
    expect((await agent.resume()).terminateReason).toBe('completed');
    expect(runs).toEqual(['lookup']);
  });

  it('truncated (shorter than the last save says): reported as truncated', async () => {
    const first = agentOn('lost-3').agent;
    await first.send('hello');
    await first.flush();
    first.stop();
    const text = await readFile(transcriptFile('lost-3'), 'utf8');
    const firstLine = text.slice(0, text.indexOf('\n') + 1);
    await writeFile(transcriptFile('lost-3'), firstLine);

    const { agent, events } = agentOn('lost-3');
    await agent.ready();
    expect(agent.state).toBe('Error');
    expect(agent.restoreReport?.transcript).toMatchObject({ status: 'truncated', foundSeq: 1 });
    expect(events.find((e) => e.type === 'error')?.message).toMatch(
      /lost-3\/transcript\.jsonl ends at entry 1, before entry \d+/,
    );
    expect((await agent.send('again')).terminateReason).toBe('completed');
  });
});
