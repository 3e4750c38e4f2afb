import { type AnyActorRef, fromPromise } from 'xstate';
import type { ToolResult } from '../tools/tool-call.js';
import type { LlmCallInput, LlmCallOutput } from './actors/call-llm.js';
import type { RunToolsInput } from './actors/run-tools.js';
import { agentMachine, type InitializeOutput } from './agent-machine.js';

/** A promise actor's body, as `fromPromise` takes it. */
type Creator<I, O> = (args: { input: I; signal: AbortSignal; self: AnyActorRef }) => Promise<O>;

/** One agent's implementations of the machine's actors. */
export interface AgentActors {
  initialize: Creator<{ sessionId: string }, InitializeOutput>;
  callLlm: Creator<LlmCallInput, LlmCallOutput>;
  runTools: Creator<RunToolsInput, ToolResult[]>;
}

const bound = new WeakMap<AnyActorRef, AgentActors>();

function actorsOf(self: AnyActorRef): AgentActors {
  const root = self._parent;
  const actors = root ? bound.get(root) : undefined;
  if (!actors) throw new Error('agentloop: an agent actor ran before bindAgentActors() bound its agent');
  return actors;
}

/**
 * The agent machine with its actors provided once for every agent: each actor runs the
 * implementation of the agent it belongs to, found by its parent (the agent's root actor).
 * A machine provided per agent (`agentMachine.provide(...)` in each constructor) built a state-node
 * tree per agent, about 22 KiB of each idle agent's 30, and formatted its transitions again in every
 * session (see bench/README.md).
 */
export const sharedAgentMachine = agentMachine.provide({
  actors: {
    initialize: fromPromise<InitializeOutput, { sessionId: string }>((args) =>
      actorsOf(args.self).initialize(args),
    ),
    callLlm: fromPromise<LlmCallOutput, LlmCallInput>((args) => actorsOf(args.self).callLlm(args)),
    runTools: fromPromise<ToolResult[], RunToolsInput>((args) => actorsOf(args.self).runTools(args)),
  },
});

/** Binds an agent's root actor to its implementations; call it before `actor.start()`. */
export function bindAgentActors(actor: AnyActorRef, actors: AgentActors): void {
  bound.set(actor, actors);
}
