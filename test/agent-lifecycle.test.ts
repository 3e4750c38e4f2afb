import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import { type Agent, type AgentOptions, createAgent, defineTool, FileSessionStore } from '../src/index.js';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { assertToolCallsAnswered, deferred } from './support/harness.js';

// The Agent facade's lifecycle edges: stopping during a turn, answering an approval while the session
// still loads, and the tools the user allowed for the session surviving a restart.

let dir: string;
const servers: ScriptedServer[] = [];
const agents: Agent[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentloop-lifecycle-'));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.stop();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

async function agentFor(scenario: Scenario, options: AgentOptions = {}): Promise<Agent> {
  const server = await startScriptedServer({ scenario });
  servers.push(server);
  const agent = createAgent({ baseURL: server.url, apiKey: 'test-key', ...options });
  agents.push(agent);
  return agent;
}

const deployTool = (runs: string[], gate?: Promise<void>) =>
  defineTool({
    name: 'deploy',
    description: 'Deploys a target',
    parameters: z.object({ target: z.string() }),
    needsApproval: true,
    execute: async ({ target }) => {
      runs.push(target);
      await gate;
      return `deployed ${target}`;
    },
  });

describe('agent.stop() during a turn', () => {
  it('settles the pending send() as interrupted, and later calls say the agent was stopped', async () => {
    const gate = deferred();
    const slow = defineTool({
      name: 'slow',
      description: 'Takes its time',
      parameters: z.object({}),
      execute: async (_args, { signal }) => {
        await Promise.race([gate.promise, new Promise((r) => signal.addEventListener('abort', r))]);
        return 'done';
      },
    });
    const agent = await agentFor(
      { turns: [{ toolCalls: [{ name: 'slow', arguments: {} }] }, { content: 'ok' }] },
      {
        tools: [slow],
      },
    );
    await agent.ready();
    const pending = agent.send('go');
    await waitFor(agent.actor, (s) => s.matches('ExecutingTool'));
    agent.stop();
    const result = await pending;
    expect(result.success).toBe(false);
    expect(result.terminateReason).toBe('interrupted');
    expect(result.error).toMatch(/stopped/);
    await expect(agent.send('again')).rejects.toThrow(/agent was stopped/);
    expect(() => agent.approve('x')).toThrow(/agent was stopped/);
    gate.resolve();
  });

  it('settles a send() still waiting for its session to load', async () => {
    const agent = await agentFor(
      { turns: [{ content: 'hi' }] },
      {
        store: new FileSessionStore({ dir }),
        session: 'loading-1',
      },
    );
    const pending = agent.send('hello');
    agent.stop();
    await expect(pending).rejects.toThrow(/agent was stopped/);
  });
});

describe('agent.close() before any message', () => {
  it('resolves on an agent that never sent, with and without a session store', async () => {
    const plain = await agentFor({ turns: [{ content: 'hi' }] });
    await plain.close();
    const ready = await agentFor({ turns: [{ content: 'hi' }] });
    await ready.ready();
    await ready.close();
    const stored = await agentFor({ turns: [{ content: 'hi' }] }, { store: new FileSessionStore({ dir }) });
    await stored.close();
    await expect(plain.send('late')).rejects.toThrow(/agent was stopped/);
  });
});

describe('approvals answered while a session loads', () => {
  /** A session saved waiting for approval of a deploy, and a second agent loading it (not awaited). */
  async function loadingInApproval(session: string, runs: string[]) {
    const scenario: Scenario = {
      turns: [{ toolCalls: [{ name: 'deploy', arguments: { target: 'prod' } }] }, { content: 'deployed' }],
    };
    const store = new FileSessionStore({ dir });
    const first = await agentFor(scenario, { store, session, tools: [deployTool(runs)] });
    await first.ready();
    void first.send('deploy prod');
    await waitFor(first.actor, (s) => s.matches('WaitingApproval'));
    const id = first.pendingApprovals[0]!.toolCallId;
    await first.flush();
    first.stop();
    return { id, second: await agentFor(scenario, { store, session, tools: [deployTool(runs)] }) };
  }

  it('are applied once it has loaded', async () => {
    const runs: string[] = [];
    const { id, second } = await loadingInApproval('load-approve', runs);
    // Answered before ready(): queued, then applied to the restored batch.
    second.approve(id);
    const ended = new Promise((resolve) => second.on('turn_end', resolve));
    await second.ready();
    await ended;
    expect(runs).toEqual(['prod']);
    expect(second.context.response).toBe('deployed');
    assertToolCallsAnswered(second.messages);
  });

  it('an interrupt before them ends the restored turn Interrupted, and the approval after it runs nothing', async () => {
    const runs: string[] = [];
    const { id, second } = await loadingInApproval('load-interrupt', runs);
    const errors: string[] = [];
    second.on('error', (e) => errors.push(e.message));
    // Both given before ready(): applied in the order given.
    second.interrupt('changed my mind');
    second.approve(id);
    await second.ready();
    expect(second.state).toBe('Interrupted');
    await second.flush();
    expect(runs).toEqual([]);
    expect(errors.join('\n')).toMatch(/no pending approval for tool call/);
    assertToolCallsAnswered(second.messages);
    const answer = second.messages.find((m) => m.role === 'tool');
    expect(String(answer?.content)).toMatch(/interrupted/);
  });

  it('report an answer to a call that is not pending as an error event', async () => {
    const store = new FileSessionStore({ dir });
    const first = await agentFor({ turns: [{ content: 'hi' }] }, { store, session: 'load-unknown' });
    await first.ready();
    await first.send('hello');
    await first.flush();
    first.stop();
    const second = await agentFor({ turns: [] }, { store, session: 'load-unknown' });
    const errors: string[] = [];
    second.on('error', (e) => errors.push(e.message));
    second.reject('call_nope', 'no');
    await second.ready();
    expect(errors.join('\n')).toMatch(/no pending approval for tool call "call_nope"/);
  });
});

describe('tools allowed for the session', () => {
  it('stay allowed after a restart: the machine keeps them in its context', async () => {
    const runs: string[] = [];
    const scenario: Scenario = {
      turns: [
        {
          toolCalls: [
            { name: 'deploy', arguments: { target: 'a' } },
            { name: 'deploy', arguments: { target: 'b' } },
          ],
        },
        { content: 'both deployed' },
        { toolCalls: [{ name: 'deploy', arguments: { target: 'c' } }] },
        { content: 'c deployed' },
      ],
    };
    const store = new FileSessionStore({ dir });
    const first = await agentFor(scenario, { store, session: 'always-1', tools: [deployTool(runs)] });
    await first.ready();
    const turn = first.send('deploy a and b');
    await waitFor(first.actor, (s) => s.matches('WaitingApproval'));
    // One answer with `always` approves the other pending deploy too.
    first.approve(first.pendingApprovals[0]!.toolCallId, { always: true });
    expect((await turn).response).toBe('both deployed');
    expect(runs.sort()).toEqual(['a', 'b']);
    expect([...first.alwaysAllowed]).toEqual(['deploy']);
    await first.flush();
    first.stop();

    const second = await agentFor(scenario, { store, session: 'always-1', tools: [deployTool(runs)] });
    await second.ready();
    const asked: unknown[] = [];
    second.on('approval_requested', (e) => asked.push(e));
    const result = await second.send('deploy c');
    expect(result.response).toBe('c deployed');
    expect(asked).toEqual([]);
    expect(runs).toContain('c');
  });
});
