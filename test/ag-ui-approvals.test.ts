import { describe, expect, it } from 'vitest';
import { agUiServer, clientWith, expectGolden, postRun, runThrough, shape } from './support/ag-ui-server.js';
import { chargeTool } from './support/recording-tools.js';

const scenario = {
  turns: [{ toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] }, { content: 'charged, all done' }],
};

describe('approvals as AG-UI interrupts', () => {
  it('ends the run with an interrupt; a second run resumes it; the call runs once and a retry is refused by id', async () => {
    const charged: string[] = [];
    const { runs, store } = await agUiServer(scenario, {
      agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [chargeTool(charged)] }),
    });
    const client = clientWith(runs, 'thread-pay', 'charge me 5');
    const first = await runThrough(client);
    expect(first.error).toBeUndefined();
    const finished = first.events.at(-1) as {
      type: string;
      outcome?: {
        type: string;
        interrupts: { id: string; toolCallId: string; reason: string; responseSchema: unknown }[];
      };
    };
    expect(finished.type).toBe('RUN_FINISHED');
    expect(finished.outcome?.type).toBe('interrupt');
    const [interrupt] = finished.outcome!.interrupts;
    expect(interrupt).toMatchObject({
      id: 'approval-call_0_0',
      toolCallId: 'call_0_0',
      reason: 'tool_approval',
    });
    expect(interrupt!.responseSchema).toMatchObject({ required: ['approved'] });
    expect((await store.load('thread-pay'))?.state).toBe('WaitingApproval');
    expectGolden('approval-interrupt', shape(first.events));
    expect(charged).toEqual([]);

    const second = await runThrough(client, {
      resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(second.error).toBeUndefined();
    expectGolden('approval-resumed', shape(second.events));
    expect(charged).toEqual(['charge 5']);

    // The same answer again (a client retry): refused by id, nothing applied twice.
    const res = await fetch(runs, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        threadId: 'thread-pay',
        runId: 'retry',
        messages: [],
        resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }],
      }),
    });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('interrupt \\"approval-call_0_0\\" is not open');
    expect(charged).toEqual(['charge 5']);
  });

  it('a rejected call is answered declined with the reason and the turn goes on', async () => {
    const charged: string[] = [];
    const { runs, model } = await agUiServer(
      { turns: [scenario.turns[0]!, { content: 'ok, not charged' }] },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [chargeTool(charged)] }) },
    );
    const client = clientWith(runs, 'thread-no', 'charge me 5');
    const first = await runThrough(client);
    const id = first.events.at(-1)!.outcome.interrupts[0]!.id;
    const second = await runThrough(client, {
      resume: [
        { interruptId: id, status: 'resolved', payload: { approved: false, reason: 'too expensive' } },
      ],
    });
    expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'ok, not charged' });
    const result = second.events.find((e) => e.type === 'TOOL_CALL_RESULT')!;
    expect(result.content).toContain('too expensive');
    expect(charged).toEqual([]);
    expect(JSON.stringify(model.requests[1]!.messages)).toContain('too expensive');
  });

  it('refuses a resume for an interrupt that does not exist, and a new message while approvals wait', async () => {
    const { runs, store } = await agUiServer(scenario, {
      agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [chargeTool([])] }),
    });
    const client = clientWith(runs, 'thread-r', 'charge me 5');
    await runThrough(client);
    // HttpAgent checks resume[] against the interrupts it saw; a raw client may send anything.
    const bogus = await fetch(runs, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        threadId: 'thread-r',
        runId: 'r-bogus',
        messages: [],
        resume: [{ interruptId: 'approval-nope', status: 'resolved', payload: { approved: true } }],
      }),
    });
    expect(bogus.status).toBe(409);
    expect(await bogus.text()).toContain('approval-nope');
    const more = await postRun(runs, {
      threadId: 'thread-r',
      runId: 'r-more',
      messages: [...client.messages, { id: 'u-more', role: 'user', content: 'and another thing' }],
    });
    expect(more.events.at(-1), more.text).toMatchObject({ type: 'RUN_ERROR', code: 'interrupt_open' });
    expect((await store.load('thread-r'))?.state).toBe('WaitingApproval');
  });

  it.each([true, false])(
    'a resume that answers one of two open interrupts (approved: %s) ends with the other still open',
    async (approved) => {
      const charged: string[] = [];
      const { runs } = await agUiServer(
        {
          turns: [
            {
              toolCalls: [
                { name: 'charge', arguments: { amount: 1 } },
                { name: 'charge', arguments: { amount: 2 } },
              ],
            },
            { content: 'both charged' },
          ],
        },
        {
          agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [chargeTool(charged)] }),
        },
      );
      const client = clientWith(runs, 'thread-two', 'charge me 1 and 2');
      const first = await runThrough(client);
      const [one, two] = first.events.at(-1)!.outcome.interrupts as { id: string }[];
      // HttpAgent insists on answering every open interrupt; a raw client may answer some.
      const resume = (id: string, runId: string, yes: boolean) =>
        postRun(runs, {
          threadId: 'thread-two',
          runId,
          messages: client.messages,
          resume: [{ interruptId: id, status: 'resolved', payload: { approved: yes } }],
        });
      const second = await resume(one!.id, 'r-one', approved);
      expect(second.events.at(-1), second.text).toMatchObject({
        type: 'RUN_FINISHED',
        outcome: { type: 'interrupt' },
      });
      const open = (second.events.at(-1) as { outcome: { interrupts: { id: string }[] } }).outcome;
      expect(open.interrupts.map((i) => i.id)).toEqual([two!.id]);
      // An approved call runs at once; the other waits for its answer.
      expect(charged).toEqual(approved ? ['charge 1'] : []);
      const third = await resume(two!.id, 'r-two', true);
      expect(third.events.at(-1), third.text).toMatchObject({ type: 'RUN_FINISHED', result: 'both charged' });
      expect(charged).toEqual(approved ? ['charge 1', 'charge 2'] : ['charge 2']);
    },
  );
});
