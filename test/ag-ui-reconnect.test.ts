import { describe, expect, it } from 'vitest';
import { AgentloopHttpAgent } from '../src/server/client.js';
import { type AnyEvent, agUiServer } from './support/ag-ui-server.js';
import { deferred } from './support/harness.js';
import { secondServerProcess } from './support/second-server-process.js';
import { gateScenario, gateTool } from './support/waiting-tool.js';

/** An SSE response read event by event: each event with the id it carried (if any). */
async function* sse(res: Response): AsyncGenerator<{ id?: number; event: AnyEvent }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      const id = /^id: (\d+)$/m.exec(block);
      const data = /^data: (.*)$/m.exec(block);
      if (data) yield { ...(id ? { id: Number(id[1]) } : {}), event: JSON.parse(data[1]!) };
    }
  }
}

async function readAll(res: Response) {
  const got: { id?: number; event: AnyEvent }[] = [];
  for await (const item of sse(res)) got.push(item);
  return got;
}

/**
 * Starts run `r1` of `threadId` with a user message, reads its stream until the tool call has ended
 * (after `started`: the tool runs), then drops the connection (the turn goes on). The events read,
 * and the last SSE id among them.
 */
async function runUntilToolCall(runs: string, threadId: string, started: Promise<void>) {
  const abort = new AbortController();
  const res = await fetch(runs, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ threadId, runId: 'r1', messages: [{ id: 'u1', role: 'user', content: 'go' }] }),
    signal: abort.signal,
  });
  const before: { id?: number; event: AnyEvent }[] = [];
  await started;
  for await (const item of sse(res)) {
    before.push(item);
    if (item.event.type === 'TOOL_CALL_END') break;
  }
  abort.abort();
  return { before, last: before.filter((b) => b.id !== undefined).at(-1)!.id! };
}

describe('runs outlive connections', () => {
  it('a connection killed mid-run reconnects with Last-Event-ID and gets the rest: no gap, no duplicate', async () => {
    const { tool, started, release } = gateTool();
    const { url, runs } = await agUiServer(gateScenario, {
      agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
    });
    const { before, last } = await runUntilToolCall(runs, 't-r', started.promise);
    release.resolve('waited');
    const events = `${url}/agents/default/threads/t-r/events`;
    const response = await fetch(events, { headers: { 'last-event-id': String(last) } });
    expect(
      response.status,
      await response
        .clone()
        .text()
        .catch(() => ''),
    ).toBe(200);
    const after = await readAll(response);
    expect(after[0]!.event.type).toBe('RUN_STARTED');
    expect(after.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', result: 'It is done.' });
    // The whole run read again from the start: its ids are exactly the two halves, in order.
    const whole = await readAll(await fetch(events));
    const ids = (items: { id?: number }[]) => items.flatMap((i) => (i.id === undefined ? [] : [i.id]));
    const wholeIds = ids(whole).slice(1); // the run's start: the POST stream opened with it, unnumbered
    expect([...ids(before), ...ids(after)]).toEqual(wholeIds);
    expect(new Set(wholeIds).size).toBe(wholeIds.length);
    const results = (items: { event: AnyEvent }[]) =>
      items.filter((i) => i.event.type === 'TOOL_CALL_RESULT');
    expect(results(after)).toHaveLength(1);
    expect(results(before)).toHaveLength(0);
  });

  it('AgentloopHttpAgent reconnects with connectAgent() and ends with the server conversation', async () => {
    const { tool, started, release } = gateTool();
    const { runs } = await agUiServer(gateScenario, {
      agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
    });
    const client = new AgentloopHttpAgent({ url: runs, threadId: 't-a' });
    client.addMessage({ id: 'u1', role: 'user', content: 'go' });
    const toolCallSeen = deferred();
    const first = client
      .runAgent({}, { onToolCallEndEvent: () => toolCallSeen.resolve() })
      .catch((error: unknown) => error);
    await Promise.all([started.promise, toolCallSeen.promise]);
    client.abortRun();
    await first;
    expect(client.lastEventId).toBeDefined();
    release.resolve('waited');
    const events: AnyEvent[] = [];
    await client.connectAgent({}, { onEvent: ({ event }) => void events.push(event) });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'It is done.' });
    expect(client.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'go'],
      ['assistant', 'Let me check.'],
      ['tool', 'waited'],
      ['assistant', 'It is done.'],
    ]);
  });
});

const second = secondServerProcess('ag-ui');

describe('two server processes on one file store', () => {
  it('the second process serves the reconnect of a run the first carries', async () => {
    const { tool, started, release } = gateTool();
    const { runs, dir, model } = await agUiServer(gateScenario, {
      agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
    });
    const otherUrl = await second.start(dir, model.url);
    const { last } = await runUntilToolCall(runs, 't-2', started.promise);
    const reconnect = fetch(`${otherUrl}/agents/default/threads/t-2/events`, {
      headers: { 'last-event-id': String(last) },
    });
    release.resolve('waited');
    const after = await readAll(await reconnect);
    expect(after.map((a) => a.event.type)).toEqual([
      'RUN_STARTED',
      'TOOL_CALL_RESULT',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'RUN_FINISHED',
    ]);
    expect(after.at(-1)!.event).toMatchObject({ result: 'It is done.' });
    expect(after.flatMap((a) => (a.id === undefined ? [] : [a.id])).every((id) => id > last)).toBe(true);
  });
});
