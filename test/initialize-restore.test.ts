import { afterEach, describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { type Agent, type AgentOptions, agentMachine, bindAgentEffects, createAgent } from '../src/index.js';
import { answerOutput } from './support/llm-outputs.js';

// A snapshot saved in Initializing restores and goes on to AwaitingInput: one saved while its
// `initialize` actor ran (every version before issue 36's cut invoked it for every agent, so every
// snapshot saved in Initializing has it), and one saved before its start-up began (a restore runs no
// entry action: the agent asks for the start-up itself).

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});

type Snapshot = NonNullable<AgentOptions['snapshot']>;

/** A snapshot of an actor in Initializing, with its `initialize` actor running (`running`) or not yet. */
async function savedInInitializing(running: boolean): Promise<Snapshot> {
  const actor = createActor(agentMachine, {
    input: { sessionId: 'init-saved', messages: [{ role: 'system', content: 'Test.' }] },
  });
  bindAgentEffects(actor, {
    initialize: () => new Promise(() => {}), // never answers: the snapshot is taken while it runs
    callLlm: async () => answerOutput('ok'),
    runTools: async () => [],
  });
  actor.start();
  if (running) await waitFor(actor, (s) => s.children.initialize !== undefined);
  const snapshot = actor.getPersistedSnapshot() as Snapshot;
  actor.stop();
  return snapshot;
}

function restored(snapshot: Snapshot, options: AgentOptions = {}): Agent {
  const agent = createAgent({ apiKey: 'test-key', snapshot, ...options });
  agents.push(agent);
  return agent;
}

describe('a snapshot saved in Initializing', () => {
  it('with its `initialize` actor running: the actor runs again, and its messages are taken', async () => {
    const snapshot = await savedInInitializing(true);
    expect(snapshot).toMatchObject({
      value: 'Initializing',
      children: { initialize: { src: 'initialize' } },
    });
    const runs: string[] = [];
    const agent = restored(snapshot, {
      initialize: () => {
        runs.push('initialize');
        return { messages: [{ role: 'system', content: 'Critical context.' }] };
      },
    });
    await agent.ready();
    expect(agent.state).toBe('AwaitingInput');
    expect(runs).toEqual(['initialize']);
    expect(agent.messages.map((m) => m.content)).toEqual(['Test.', 'Critical context.']);
    expect(agent.context.initialized).toBe(true);
    expect(Object.keys(agent.actor.getSnapshot().children)).toEqual([]);
  });

  it('with its `initialize` actor running, restored by an agent without that option: nothing to add', async () => {
    const agent = restored(await savedInInitializing(true));
    await agent.ready();
    expect(agent.state).toBe('AwaitingInput');
    expect(agent.messages.map((m) => m.content)).toEqual(['Test.']);
    expect(agent.context.initialized).toBe(true);
  });

  it('before its start-up began: the agent asks for it, with or without an `initialize` option', async () => {
    const snapshot = await savedInInitializing(false);
    expect(snapshot).toMatchObject({ value: 'Initializing', children: {} });
    const plain = restored(snapshot);
    await plain.ready();
    expect(plain.state).toBe('AwaitingInput');
    expect(plain.context.initialized).toBe(true);
    const withInit = restored(snapshot, {
      initialize: () => ({ messages: [{ role: 'system', content: 'Critical context.' }] }),
    });
    await withInit.ready();
    expect(withInit.state).toBe('AwaitingInput');
    expect(withInit.messages.map((m) => m.content)).toEqual(['Test.', 'Critical context.']);
  });
});
