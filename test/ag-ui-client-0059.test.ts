// The server with the client CopilotKit 1.74 bundles: `@ag-ui/client` 0.0.59 (installed under the alias
// `ag-ui-client-0059`). It sends no `protocolVersion`, and it parses every event with its own (older,
// strict) schemas: a shape it does not know fails the run. The server must send it the older shapes.
import { EventSchemas, HttpAgent } from 'ag-ui-client-0059';
import { describe, expect, it } from 'vitest';
import {
  type AnyEvent,
  agUiServer,
  clientWith,
  postRun,
  runThrough,
  slowRunServer,
} from './support/ag-ui-server.js';
import { chargeTool } from './support/recording-tools.js';

const pickColor = {
  name: 'pick_color',
  description: 'asks the user to pick a color',
  parameters: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
};

/** One run through the 0.0.59 client: its events, and the error that ended it (a schema refusal is one). */
async function run059(agent: HttpAgent, parameters: Parameters<HttpAgent['runAgent']>[0] = {}) {
  const events: AnyEvent[] = [];
  let failed: unknown;
  try {
    await agent.runAgent(parameters, {
      onEvent: ({ event }) => void events.push(event),
      onRunFailed: ({ error }) => {
        failed = error;
      },
    });
  } catch (error) {
    failed ??= error;
  }
  return { events, error: failed };
}

describe('@ag-ui/client 0.0.59 (CopilotKit 1.74)', () => {
  it('its schemas refuse the 1.0 shapes the server keeps from it', () => {
    const finished = { type: 'RUN_FINISHED', threadId: 't', runId: 'r' };
    expect(() => EventSchemas.parse({ ...finished, outcome: { type: 'cancelled' } })).toThrow(
      /discriminator/,
    );
    expect(() =>
      EventSchemas.parse({ ...finished, outcome: { type: 'success', pendingToolCallIds: ['c1'] } }),
    ).toThrow(/pendingToolCallIds/);
  });

  it('drives a text turn, an approval resumed, and a frontend tool on one thread; every event passes its schemas', async () => {
    const charged: string[] = [];
    const charge = chargeTool(charged);
    const { runs, model } = await agUiServer(
      {
        turns: [
          { content: 'hello from agentloop' },
          { toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] },
          { content: 'charged, all done' },
          { toolCalls: [{ name: 'pick_color', arguments: { color: 'red' } }] },
          { content: 'you picked red' },
        ],
      },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [charge] }) },
    );
    const agent = new HttpAgent({ url: runs, threadId: 'thread-0059' });

    agent.addMessage({ id: 'u1', role: 'user', content: 'hi' });
    const text = await run059(agent);
    expect(text.error).toBeUndefined();
    expect(text.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'hello from agentloop' });

    agent.addMessage({ id: 'u2', role: 'user', content: 'charge me 5' });
    const asked = await run059(agent);
    expect(asked.error).toBeUndefined();
    const interrupt = asked.events.at(-1)!.outcome.interrupts[0];
    expect(interrupt).toMatchObject({ id: 'approval-call_1_0', toolCallId: 'call_1_0' });
    const resumed = await run059(agent, {
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(resumed.error).toBeUndefined();
    expect(resumed.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'charged, all done' });
    expect(charged).toEqual(['charge 5']);

    // A frontend tool: the older shape is `success` without `pendingToolCallIds` (its schema refuses it).
    agent.addMessage({ id: 'u3', role: 'user', content: 'let me pick a color' });
    const picking = await run059(agent, { tools: [pickColor] });
    expect(picking.error).toBeUndefined();
    expect(picking.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
    expect(picking.events.at(-1)!.outcome?.pendingToolCallIds).toBeUndefined();
    agent.addMessage({
      id: 'tool-red',
      role: 'tool',
      toolCallId: 'call_3_0',
      content: 'the user picked red',
    });
    const picked = await run059(agent, { tools: [pickColor] });
    expect(picked.error).toBeUndefined();
    expect(picked.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'you picked red' });
    expect(
      model.requests[4]!.messages.find((m) => m.role === 'tool' && m.content === 'the user picked red'),
    ).toBeDefined();
    // The client sent the whole conversation each time; the server kept each message once.
    expect(model.requests[4]!.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'hi',
      'charge me 5',
      'let me pick a color',
    ]);
  });

  it('a cancel reaches it as RUN_ERROR code cancelled (its schemas have no cancelled outcome)', async () => {
    const { url, runs, started } = await slowRunServer();
    const agent = new HttpAgent({ url: runs, threadId: 'thread-0059-x' });
    agent.addMessage({ id: 'u1', role: 'user', content: 'go slow' });
    const running = run059(agent, { runId: 'run-x' });
    await started;
    const cancel = await fetch(`${url}/agents/default/threads/thread-0059-x/runs/run-x/cancel`, {
      method: 'POST',
    });
    expect(cancel.status).toBe(202);
    const { events, error } = await running;
    expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'cancelled' });
    // The client ends a run with RUN_ERROR as failed; not with a refusal of the event by its schemas.
    expect(String(error ?? '')).not.toMatch(/invalid|unrecognized|discriminator/i);
  });

  it("takes CopilotKit's resume (same runId, its own tool message with the answer) as the resume; the tool's result is the tool's", async () => {
    const charged: string[] = [];
    const charge = chargeTool(charged);
    const { runs, model } = await agUiServer(
      { turns: [{ toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] }, { content: 'done' }] },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [charge] }) },
    );
    const client = clientWith(runs, 'thread-ck', 'charge me 5');
    const first = await runThrough(client);
    // CopilotKit 1.74 adds such a message for interrupts with reason "tool_call" (agentloop's are
    // "tool_approval"); a client that sends one anyway must not make it the call's result.
    const resumed = await postRun(runs, {
      threadId: 'thread-ck',
      runId: first.events[0]!.runId,
      messages: [
        ...client.messages,
        { id: 'ck-answer', role: 'tool', toolCallId: 'call_0_0', content: '{"approved":true}' },
      ],
      resume: [{ interruptId: 'approval-call_0_0', status: 'resolved', payload: { approved: true } }],
    });
    expect(resumed.status).toBe(200);
    expect(resumed.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'done' });
    expect(charged).toEqual(['charge 5']);
    const tools = model.requests.at(-1)!.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual(['charged 5']);
  });
});
