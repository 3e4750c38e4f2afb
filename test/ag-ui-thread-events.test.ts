import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { forkPoints, forkSession } from '../src/evals/index.js';
import { defineTool } from '../src/index.js';
import {
  type AnyEvent,
  agUiServer,
  clientWith,
  expectGolden,
  postRun,
  runThrough,
  shape,
  userMessage,
} from './support/ag-ui-server.js';

// MESSAGES_SNAPSHOT on request, RUN_STARTED.parentRunId for a forked thread, expiresAt on interrupts.

describe('MESSAGES_SNAPSHOT on request', () => {
  it('a run with forwardedProps.messagesSnapshot sends the thread after RUN_STARTED; GET …/messages answers the same event', async () => {
    const { runs, url } = await agUiServer({
      turns: [{ content: 'Hi there.' }, { content: 'Still here.' }, { content: 'Yes, tab two.' }],
    });
    const client = clientWith(runs, 'thread-snap', 'hello');
    await runThrough(client);
    client.addMessage({ id: 'tab-1', role: 'user', content: 'are you there?' });
    const { events, error } = await runThrough(client, { forwardedProps: { messagesSnapshot: true } });
    expect(error).toBeUndefined();
    expectGolden('messages-snapshot', shape(events));
    const snapshot = events.find((e) => e.type === 'MESSAGES_SNAPSHOT')!;
    expect(snapshot.messages).toEqual([
      { id: 'msg-1', role: 'user', content: 'hello' },
      { id: 'msg-2', role: 'assistant', content: 'Hi there.' },
      { id: 'tab-1', role: 'user', content: 'are you there?' },
    ]);
    // A second tab that has none of the thread loads it, and its next run is accepted as it stands.
    const got = await fetch(`${url}/agents/default/threads/thread-snap/messages`);
    expect(got.status).toBe(200);
    const body = (await got.json()) as AnyEvent;
    expect(body.type).toBe('MESSAGES_SNAPSHOT');
    expect(body.messages.map((m: AnyEvent) => [m.id, m.role, m.content])).toEqual([
      ['msg-1', 'user', 'hello'],
      ['msg-2', 'assistant', 'Hi there.'],
      ['msg-3', 'user', 'are you there?'],
      ['msg-4', 'assistant', 'Still here.'],
    ]);
    const tab = clientWith(runs, 'thread-snap');
    tab.setMessages([...body.messages, userMessage('tab two here')]);
    const fromTab = await runThrough(tab);
    expect(fromTab.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'Yes, tab two.' });
    const missing = await fetch(`${url}/agents/default/threads/nope/messages`);
    expect(missing.status).toBe(404);
    const other = await fetch(`${url}/agents/default/threads/thread-snap/messages`, { method: 'POST' });
    expect(other.status).toBe(405);
  });
});

describe('a forked thread', () => {
  it("names the parent's run in its first RUN_STARTED (parentRunId), and only there", async () => {
    const { runs, store } = await agUiServer({
      turns: [{ content: 'The plan is A.' }, { content: 'Then B.' }, { content: 'B it is.' }],
    });
    const original = clientWith(runs, 'thread-orig', 'make a plan');
    await runThrough(original, { runId: 'run-orig' });
    const { entries } = await store.readTranscript('thread-orig');
    const at = forkPoints(entries).at(-1)!;
    await forkSession(store, 'thread-orig', { at, id: 'thread-fork' });

    const fork = clientWith(runs, 'thread-fork');
    fork.setMessages([...original.messages, userMessage('what else?')]);
    const first = await runThrough(fork);
    expect(first.error).toBeUndefined();
    expect(first.events[0]).toMatchObject({
      type: 'RUN_STARTED',
      threadId: 'thread-fork',
      parentRunId: 'run-orig',
    });
    expectGolden('forked-thread', shape(first.events));
    fork.addMessage(userMessage('fine'));
    const next = await runThrough(fork);
    expect(next.events[0]!.type).toBe('RUN_STARTED');
    expect(next.events[0]!.parentRunId).toBeUndefined();
    // The original thread is untouched by the fork's runs.
    const again = await runThrough(clientWith(runs, 'thread-orig'), {});
    expect(again.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'bad_input' });
  });
});

function deployTool(ran: string[]) {
  return defineTool({
    name: 'deploy',
    description: 'deploys',
    parameters: z.object({}),
    needsApproval: true,
    execute: () => {
      ran.push('deploy');
      return 'deployed';
    },
  });
}

describe('interrupts with an approval timeout', () => {
  it('carry expiresAt (the run end + the timeout), kept when the interrupt is asked again', async () => {
    const ran: string[] = [];
    const { runs } = await agUiServer(
      { turns: [{ toolCalls: [{ name: 'deploy', arguments: {} }] }, { content: 'deployed it' }] },
      {
        agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [deployTool(ran)] }),
        approvalTimeoutMs: 3_600_000,
      },
    );
    const before = Date.now();
    const client = clientWith(runs, 'thread-exp', 'deploy');
    const first = await runThrough(client);
    const after = Date.now();
    const [interrupt] = first.events.at(-1)!.outcome.interrupts;
    const expires = Date.parse(interrupt.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(expires).toBeLessThanOrEqual(after + 3_600_000);
    const resumed = await runThrough(client, {
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(resumed.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'deployed it' });
    expect(ran).toEqual(['deploy']);
  });

  it('refuses an answer after expiresAt by id; a new message closes the expired call and goes on', async () => {
    const ran: string[] = [];
    const { runs, model } = await agUiServer(
      { turns: [{ toolCalls: [{ name: 'deploy', arguments: {} }] }, { content: 'ok, something else' }] },
      {
        agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [deployTool(ran)] }),
        approvalTimeoutMs: 0, // expired as soon as it is asked
      },
    );
    const client = clientWith(runs, 'thread-late', 'deploy');
    const first = await runThrough(client);
    const [interrupt] = first.events.at(-1)!.outcome.interrupts;
    expect(typeof interrupt.expiresAt).toBe('string');
    const late = await postRun(runs, {
      threadId: 'thread-late',
      runId: 'late',
      messages: [],
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(late.status).toBe(409);
    expect(late.text).toContain('interrupt_expired');
    expect(ran).toEqual([]);
    // A client that never saw the interrupt (HttpAgent 1.0 refuses to run past one it saw).
    const fresh = clientWith(runs, 'thread-late');
    fresh.setMessages([...client.messages, userMessage('never mind')]);
    const next = await runThrough(fresh);
    expect(next.error).toBeUndefined();
    expect(next.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'ok, something else' });
    expect(ran).toEqual([]);
    const tool = model.requests[1]!.messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(tool)).toMatch(/interrupt|expired/i);
  });
});
