import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, MemorySessionStore } from '../src/index.js';
import type { AgentTelemetry } from '../src/telemetry/agent-telemetry.js';
import { agentOn, nextEvent } from './support/harness.js';

/** A telemetry backend that writes down each hook call: handles are names, parents are explicit. */
function recordingTelemetry() {
  const calls: string[] = [];
  let n = 0;
  const telemetry: AgentTelemetry = {
    turnStart: (info) => {
      const handle = `turn${++n}`;
      calls.push(`${handle} start ${info.kind} parent=${String(info.parent)}`);
      return handle;
    },
    turnEnd: (turn, info) =>
      calls.push(`${turn} end ${info.suspended ? 'suspended' : info.terminateReason} it=${info.iterations}`),
    modelCallStart: (turn, info) => {
      const handle = `chat${++n}`;
      calls.push(`${handle} under ${turn} attempt ${info.attempt}`);
      return handle;
    },
    modelCallEnd: (call, info) => calls.push(`${call} end ${info.errorType ?? info.finishReason}`),
    toolStart: (turn, info) => {
      const handle = `tool${++n}`;
      calls.push(`${handle} ${info.name} under ${turn}${info.fromLedger ? ' ledger' : ''}`);
      return handle;
    },
    toolRun: (tool, execute) => {
      calls.push(`${tool} run`);
      return execute();
    },
    toolEnd: (tool, info) => calls.push(`${tool} end ${info.errorType ?? 'ok'}`),
    approvalRequested: (parent, info) => {
      const handle = `wait${++n}`;
      calls.push(`${handle} ${info.name} under ${parent}`);
      return handle;
    },
    approvalResolved: (wait, info) => calls.push(`${wait} ${info.decision} by ${info.answeredBy}`),
  };
  return { telemetry, calls };
}

const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
});
const guarded = defineTool({
  name: 'guarded',
  description: 'asks first',
  parameters: z.object({}),
  needsApproval: true,
  execute: () => 'done',
});

describe('telemetry hooks', () => {
  it('are called at each turn, HTTP attempt, tool run and approval wait, with explicit parents', async () => {
    const { telemetry, calls } = recordingTelemetry();
    const { agent } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'echo', arguments: { text: 'a' } },
              { name: 'guarded', arguments: {} },
            ],
            error: { status: 429 },
            times: 1,
          },
          { content: 'finished' },
        ],
      },
      { tools: [echo, guarded], telemetry, retry: { baseDelayMs: 1, jitter: 'none' } },
    );
    const requested = nextEvent(agent, 'approval_requested');
    const turn = agent.send('go');
    const { pending } = await requested;
    agent.approve(pending[0]!.toolCallId);
    expect((await turn).response).toBe('finished');
    // In order: the turn, both attempts of the retried call, the runs.
    expect(calls.slice(0, 5)).toEqual([
      'turn1 start message parent=undefined',
      'chat2 under turn1 attempt 1',
      'chat2 end 429',
      'chat3 under turn1 attempt 2',
      'chat3 end tool_calls',
    ]);
    // The auto-approved call and the approval wait overlap: their order is the scheduler's.
    expect(calls.slice(5, 13).sort()).toEqual(
      [
        'tool4 echo under turn1',
        'tool4 run',
        'tool4 end ok',
        'wait5 guarded under turn1',
        'wait5 approved by local',
        'tool6 guarded under turn1',
        'tool6 run',
        'tool6 end ok',
      ].sort(),
    );
    expect(calls.indexOf('wait5 approved by local')).toBeLessThan(calls.indexOf('tool6 guarded under turn1'));
    expect(calls.slice(13)).toEqual([
      'chat7 under turn1 attempt 1',
      'chat7 end stop',
      'turn1 end completed it=2',
    ]);
  });

  it('a hook that throws is reported once as an error event and the turn goes on', async () => {
    const { telemetry, calls } = recordingTelemetry();
    const broken: AgentTelemetry = {
      ...telemetry,
      modelCallStart: () => {
        throw new Error('exporter down');
      },
      toolRun: () => {
        throw new Error('no context');
      },
    };
    const { agent, events } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] }, { content: 'finished' }] },
      { tools: [echo], telemetry: broken },
    );
    const result = await agent.send('go');
    expect(result.response).toBe('finished');
    expect(result.messages.find((m) => m.role === 'tool')?.content).toBe('a');
    const errors = events.filter((e) => e.type === 'error');
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      ['telemetry', expect.stringMatching(/modelCallStart threw.*exporter down/)],
    ]);
    expect(calls).toContain('turn1 end completed it=2');
  });

  it('an approval answered after a restore without a kept trace context still gets a continuation turn', async () => {
    const store = new MemorySessionStore();
    const scenario = {
      turns: [{ toolCalls: [{ name: 'guarded', arguments: {} }] }, { content: 'finished' }],
    };
    const { agent: first } = await agentOn(scenario, { tools: [guarded], store });
    const requested = nextEvent(first, 'approval_requested');
    void first.send('go');
    const { pending } = await requested;
    await first.close();
    const { telemetry, calls } = recordingTelemetry();
    const { agent: second } = await agentOn(scenario, {
      tools: [guarded],
      store,
      session: first.sessionId,
      telemetry,
    });
    await second.ready();
    const ended = nextEvent(second, 'turn_end');
    second.approve(pending[0]!.toolCallId);
    await ended;
    expect(calls).toEqual([
      'turn1 start continuation parent=undefined',
      'tool2 guarded under turn1',
      'tool2 run',
      'tool2 end ok',
      'chat3 under turn1 attempt 1',
      'chat3 end stop',
      'turn1 end completed it=2',
    ]);
  });
});
