import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agUiServer, clientWith, postRun, runThrough, slowRunServer } from './support/ag-ui-server.js';

const pickColor = {
  name: 'pick_color',
  description: 'asks the user to pick a color',
  parameters: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
};

describe('frontend tools and cancel', () => {
  it('ends the run with pendingToolCallIds; the next run carries the result and the turn goes on', async () => {
    const { runs, model } = await agUiServer({
      turns: [
        { toolCalls: [{ name: 'pick_color', arguments: { color: 'red' } }] },
        { content: 'you picked red' },
      ],
    });
    const client = clientWith(runs, 'thread-fe', 'let me pick a color');
    const first = await runThrough(client, { tools: [pickColor] });
    expect(first.error).toBeUndefined();
    expect(first.events.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      outcome: { type: 'success', pendingToolCallIds: ['call_0_0'] },
    });
    expect(
      model.requests[0]!.tools?.map((t) => (t as { function: { name: string } }).function.name),
    ).toContain('pick_color');
    client.addMessage({
      id: 'client-tool-1',
      role: 'tool',
      toolCallId: 'call_0_0',
      content: 'the user picked red',
    });
    const second = await runThrough(client, { tools: [pickColor] });
    expect(second.error).toBeUndefined();
    expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'you picked red' });
    const tool = model.requests[1]!.messages.find((m) => m.role === 'tool');
    expect(tool?.content).toBe('the user picked red');
  });

  it('checks a frontend tool call against the client schema: a bad call gets an error result', async () => {
    const { runs, model } = await agUiServer({
      turns: [{ toolCalls: [{ name: 'pick_color', arguments: { colour: 7 } }] }, { content: 'sorry' }],
    });
    const { events } = await runThrough(clientWith(runs, 'thread-fe-bad', 'pick'), { tools: [pickColor] });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'sorry' });
    expect(JSON.stringify(model.requests[1]!.messages.find((m) => m.role === 'tool'))).toMatch(/color/);
  });

  it('refuses a frontend tool named like a server tool, and a replayed run id', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'echo',
      parameters: z.object({}),
      execute: () => 'e',
    });
    const { runs } = await agUiServer(
      { turns: [{ content: 'hi' }, { content: 'never' }] },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [echo] }) },
    );
    const clash = await postRun(runs, {
      threadId: 'thread-c',
      runId: 'r1',
      messages: [{ id: 'u1', role: 'user', content: 'hi' }],
      tools: [{ name: 'echo', description: 'mine', parameters: {} }],
    });
    expect(clash.status).toBe(400);
    expect(clash.text).toContain('RunAgentInput.tools');
    const body = { threadId: 'thread-c', runId: 'r1', messages: [{ id: 'u1', role: 'user', content: 'hi' }] };
    expect((await postRun(runs, body)).status).toBe(200);
    const replay = await postRun(runs, {
      ...body,
      messages: [...body.messages, { id: 'u2', role: 'user', content: 'again' }],
    });
    expect(replay.status).toBe(409);
    expect(replay.text).toContain('run_replayed');
  });

  it.each([
    ['1.0', { type: 'RUN_FINISHED', outcome: { type: 'cancelled' } }],
    [undefined, { type: 'RUN_ERROR', code: 'cancelled' }],
  ])(
    'cancel ends a running turn (protocolVersion %s: the shape that client accepts)',
    async (version, last) => {
      const { url, runs, started } = await slowRunServer();
      const running = postRun(runs, {
        threadId: 'thread-x',
        runId: 'run-x',
        ...(version ? { protocolVersion: version } : {}),
        messages: [{ id: 'u1', role: 'user', content: 'go slow' }],
      });
      await started;
      const cancel = await fetch(`${url}/agents/default/threads/thread-x/runs/run-x/cancel`, {
        method: 'POST',
      });
      expect(cancel.status).toBe(202);
      const { events } = await running;
      expect(events.at(-1)).toMatchObject(last);
    },
  );
});
