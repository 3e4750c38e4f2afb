import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agentOn, assertToolCallsAnswered, eachWire, nextEvent } from './support/harness.js';

const ran: string[] = [];
const safe = defineTool({
  name: 'list',
  description: 'safe',
  parameters: z.object({ dir: z.string() }),
  execute: async ({ dir }) => {
    await new Promise((r) => setTimeout(r, 20));
    ran.push(`list ${dir}`);
    return `files in ${dir}`;
  },
});
const dangerous = defineTool({
  name: 'delete',
  description: 'dangerous',
  parameters: z.object({ path: z.string() }),
  needsApproval: (args) => !args.path.startsWith('/tmp/'),
  execute: ({ path }) => {
    ran.push(`delete ${path}`);
    return `deleted ${path}`;
  },
});

const scenario = {
  turns: [
    {
      toolCalls: [
        { name: 'delete', arguments: { path: '/etc/a' } },
        { name: 'list', arguments: { dir: 'src' } },
        { name: 'delete', arguments: { path: '/home/b' } },
        { name: 'delete', arguments: { path: '/tmp/c' } },
      ],
    },
    { content: 'finished' },
  ],
};

eachWire(() => {
  describe('approval', () => {
    it('holds the calls that need approval while the others run, in any answer order', async () => {
      ran.length = 0;
      const { agent, server, events } = await agentOn(scenario, { tools: [safe, dangerous] });
      const requested = nextEvent(agent, 'approval_requested');
      const turn = agent.send('clean up');
      const { pending } = await requested;
      expect(pending.map((p) => p.toolCallId)).toEqual(['call_0_0', 'call_0_2']);
      expect(pending[0]!.args).toEqual({ path: '/etc/a' });
      expect(agent.state).toBe('WaitingApproval');
      // Calls that need no approval run meanwhile.
      await new Promise((r) => setTimeout(r, 60));
      expect(ran).toEqual(expect.arrayContaining(['list src', 'delete /tmp/c']));
      expect(agent.state).toBe('WaitingApproval');

      expect(() => agent.approve('call_0_1')).toThrow(/call_0_1.*pending: call_0_0, call_0_2/);
      expect(() => agent.reject('nope')).toThrow(/"nope"/);
      agent.approve('call_0_2');
      agent.reject('call_0_0', 'not that one');
      const result = await turn;
      expect(result.response).toBe('finished');
      expect(ran).toContain('delete /home/b');
      expect(ran).not.toContain('delete /etc/a');
      const toolMessages = server.requests[1]!.messages.filter((m) => m.role === 'tool');
      expect(toolMessages.map((m) => (m as { tool_call_id: string }).tool_call_id)).toEqual([
        'call_0_0',
        'call_0_1',
        'call_0_2',
        'call_0_3',
      ]);
      expect(String(toolMessages[0]!.content)).toMatch(/declined.*not that one/);
      assertToolCallsAnswered(result.messages);
      const resolved = events.filter((e) => e.type === 'approval_resolved');
      expect(resolved.map((e) => [e.toolCallId, e.approved])).toEqual([
        ['call_0_2', true],
        ['call_0_0', false],
      ]);
    });

    it('approves every call of a tool for the session with `always`', async () => {
      ran.length = 0;
      const { agent } = await agentOn(scenario, { tools: [safe, dangerous] });
      const requested = nextEvent(agent, 'approval_requested');
      const turn = agent.send('clean up');
      await requested;
      agent.approve('call_0_0', { always: true });
      const result = await turn;
      expect(result.response).toBe('finished');
      expect(ran).toEqual(expect.arrayContaining(['delete /etc/a', 'delete /home/b']));
      expect(agent.alwaysAllowed.has('delete')).toBe(true);
    });

    it('stops the deadline clock while waiting for approval', async () => {
      const { agent } = await agentOn(scenario, { tools: [safe, dangerous], limits: { timeoutMs: 300 } });
      const requested = nextEvent(agent, 'approval_requested');
      const turn = agent.send('clean up');
      await requested;
      await new Promise((r) => setTimeout(r, 500));
      agent.approve('call_0_0');
      agent.approve('call_0_2');
      const result = await turn;
      expect(result.terminateReason).toBe('completed');
    });

    it('asks for every call with the session policy "always"', async () => {
      const { agent } = await agentOn(
        { turns: [{ toolCalls: [{ name: 'list', arguments: { dir: 'x' } }] }, { content: 'k' }] },
        {
          tools: [safe],
          approval: 'always',
        },
      );
      const requested = nextEvent(agent, 'approval_requested');
      const turn = agent.send('go');
      expect((await requested).pending.map((p) => p.name)).toEqual(['list']);
      agent.approve('call_0_0');
      expect((await turn).response).toBe('k');
    });
  });
});
