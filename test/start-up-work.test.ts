/**
 * The work an agent does to start, counted (not timed): the actors XState makes and the steps the
 * agent actor takes, through the real code, for a session of one model call (bench/agent-step-cpu.mjs's
 * `text` shape, and what a durable engine pays for every session it starts). The counts are exact: a
 * change that adds an actor or a step to every session fails here (issue 36; figures in bench/README.md).
 */

import { describe, expect, it } from 'vitest';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { MemorySessionStore } from '../src/index.js';
import { type WorkCounts, workSnapshot } from '../src/work-counters.js';
import { agentAt, serve } from './support/harness.js';

/** What a session did, from `createAgent` to the end of its one turn. */
interface SessionWork {
  /** Actors XState made, in order: the agent actor, then the others by their logic's name (`src`). */
  actors: string[];
  /** Events the agent actor took a step for (`xstate.init` included), in order. */
  steps: string[];
  /** The agent actor's children once it rests. */
  children: string[];
  contextUpdates: WorkCounts['contextUpdates'];
}

async function sessionWork(options: Parameters<typeof agentAt>[1] = {}): Promise<SessionWork> {
  const server = await serve({ turns: [{ content: 'hello' }] });
  const actors: string[] = [];
  const steps: string[] = [];
  const before = workSnapshot();
  const agent = agentAt(server, {
    ...options,
    inspect: (e: InspectionEvent) => {
      if (e.type === '@xstate.actor')
        actors.push(e.actorRef.sessionId === e.rootId ? 'agent' : String((e.actorRef as AnyActorRef).src));
      else if (e.type === '@xstate.event' && e.actorRef.sessionId === e.rootId) steps.push(e.event.type);
    },
  });
  const result = await agent.send('hi');
  expect(result.response).toBe('hello');
  const children = Object.keys(agent.actor.getSnapshot().children);
  return { actors, steps, children, contextUpdates: workSnapshot().contextUpdates - before.contextUpdates };
}

/** The session's steps after start-up: the message, and the model call's end (nobody reads its text). */
const TURN_STEPS = ['USER_MESSAGE', 'xstate.done.actor.callLlm'];

describe('the work of starting an agent, counted', () => {
  it('without an `initialize` option: no actor for it, one step to AwaitingInput', async () => {
    const work = await sessionWork();
    // Before issue 36's cut, Initializing invoked the `initialize` actor for every agent (an actor
    // made, started, and its done event): 3 actors, with `xstate.done.actor.initialize` for INITIALIZE.
    expect(work.actors).toEqual(['agent', 'callLlm']);
    expect(work.steps).toEqual(['xstate.init', 'INITIALIZE', ...TURN_STEPS]);
    expect(work.children).toEqual([]);
    // Start-up: AwaitingInput entered with `initialized` set (1). It was three updates: entering
    // Initializing (the context now starts there), the `initialize` actor's output, entering AwaitingInput.
    // Then the turn: the message (1), entering Thinking (1), the answer (1), the turn's end (1), Completed (1).
    expect(work.contextUpdates).toBe(1 + 5);
  });

  it('with an `initialize` option: its actor runs, and is stopped once it has answered', async () => {
    const work = await sessionWork({
      initialize: () => ({ messages: [{ role: 'system', content: 'Critical context.' }] }),
    });
    expect(work.actors).toEqual(['agent', 'initialize', 'callLlm']);
    expect(work.steps).toEqual(['xstate.init', 'INITIALIZE', 'xstate.done.actor.initialize', ...TURN_STEPS]);
    expect(work.children).toEqual([]);
    expect(work.contextUpdates).toBe(1 + 5);
  });

  it('a listener hears one state_change at start-up, into AwaitingInput, whether the agent waits for its session or not', async () => {
    const server = await serve({ turns: [{ content: 'hello' }] });
    for (const options of [{}, { store: new MemorySessionStore(), session: 'start-up' }]) {
      const agent = agentAt(server, options);
      const heard: unknown[] = [];
      agent.on('state_change', (e) => heard.push([e.previous, e.state]));
      await agent.ready();
      // The context starts in Initializing: entering it is no update and no event (an agent whose
      // start waited for its session used to tell its listeners `null -> Initializing` first).
      expect(heard).toEqual([['Initializing', 'AwaitingInput']]);
    }
  });
});
