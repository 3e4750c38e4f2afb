import { fromPromise, setup } from 'xstate';
import type { Message } from '../llm/message.js';
import type { ToolResult } from '../tools/tool-call.js';
import type { LlmCallInput, LlmCallOutput } from './actors/call-llm.js';
import type { RunToolsInput } from './actors/run-tools.js';
import type { AgentContext, AgentMachineInput } from './agent-context.js';
import type { AgentMachineEvent } from './agent-events.js';
import type { AgentEvent } from './emitted-events.js';
import { batchComplete, loopBreaker } from './turn-messages.js';

/** What the `initialize` actor returns: messages to add before the first turn (critical-action context). */
export interface InitializeOutput {
  messages?: Message[];
}

const notProvided = (name: string) =>
  fromPromise<never, unknown>(async () => {
    throw new Error(
      `agentMachine: the "${name}" actor was not provided; use createAgent() or machine.provide()`,
    );
  });

/**
 * The machine's types, actors (by name: effects are bound with `machine.provide`) and guards. The
 * actions are made from it in `actions/` and the states in `agent-machine.ts`.
 */
export const machineSetup = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentMachineEvent,
    input: {} as AgentMachineInput,
    emitted: {} as AgentEvent,
  },
  actors: {
    initialize: fromPromise<InitializeOutput, { sessionId: string }>(async () => ({})),
    callLlm: notProvided('callLlm') as unknown as ReturnType<typeof fromPromise<LlmCallOutput, LlmCallInput>>,
    runTools: notProvided('runTools') as unknown as ReturnType<
      typeof fromPromise<ToolResult[], RunToolsInput>
    >,
  },
  guards: {
    isPending: ({ context, event }) =>
      (event.type === 'APPROVE' || event.type === 'REJECT') && context.pending.includes(event.toolCallId),
    noPending: ({ context }) => context.pending.length === 0,
    batchComplete: ({ context }) => batchComplete(context),
    batchEndsTurn: ({ context }) => batchComplete(context) && loopBreaker(context) !== undefined,
    canContinueTurn: ({ context }) => context.initialized && context.turn > 0,
    isInitialized: ({ context }) => context.initialized,
    endedAtIterationLimit: ({ context }) => context.terminateReason === 'max_iterations',
  },
});
