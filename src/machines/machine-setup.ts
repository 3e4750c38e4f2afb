import { setup } from 'xstate';
import type { ToolResult } from '../tools/tool-call.js';
import type { LlmCallInput, LlmCallOutput } from './actors/call-llm.js';
import type { CompactInput, CompactOutput } from './actors/compact-conversation.js';
import type { RunToolsInput } from './actors/run-tools.js';
import type { AgentContext, AgentMachineInput } from './agent-context.js';
import { effectActor, type InitializeOutput } from './agent-effects.js';
import type { AgentMachineEvent } from './agent-events.js';
import type { AgentEvent } from './emitted-events.js';
import { isComplete, loopBreaker, needsApproval, runnerClosesBatch } from './tool-batch.js';
import { stopReplyReason } from './turn-limits.js';

/**
 * The machine's types, actors (by name: each runs the effect bound to the agent, see agent-effects.ts;
 * tests may swap them with `machine.provide`) and guards. The actions are made from it in `actions/`
 * and the states in `agent-machine.ts`.
 */
export const machineSetup = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentMachineEvent,
    input: {} as AgentMachineInput,
    emitted: {} as AgentEvent,
  },
  actors: {
    // Spawned only for an agent with an `initialize` effect (INITIALIZE says so). Without effects it
    // has nothing to do (a snapshot saved by an older version, which invoked it for every agent,
    // restores it): the machine reaches AwaitingInput, and the first model call says what is missing.
    initialize: effectActor<InitializeOutput, { sessionId: string }>(
      'initialize',
      async (e, input, io) => (e.initialize ? e.initialize(input, io) : {}),
      () => ({}),
    ),
    callLlm: effectActor<LlmCallOutput, LlmCallInput>('callLlm', (e, input, io) => e.callLlm(input, io)),
    runTools: effectActor<ToolResult[], RunToolsInput>('runTools', (e, input, io) => e.runTools(input, io)),
    // An agent bound without a compaction effect never compacts: an asked-for compaction says so.
    compact: effectActor<CompactOutput, CompactInput>('compact', async (e, input, io) => {
      if (e.compact) return e.compact(input, io);
      throw new Error('this agent does not compact (compaction is off)');
    }),
  },
  guards: {
    isPending: ({ context, event }) =>
      (event.type === 'APPROVE' || event.type === 'REJECT') &&
      context.batch.pending.includes(event.toolCallId),
    noPending: ({ context }) => context.batch.pending.length === 0,
    // The same decision recordAssistant writes into the batch: a call whose tool asks, unless allowed for the session.
    replyNeedsApproval: ({ context, event }) =>
      (event as unknown as { output: LlmCallOutput }).output.calls.some((c) =>
        needsApproval(c, context.alwaysAllowed),
      ),
    batchComplete: ({ context }) => isComplete(context.batch),
    batchEndsTurn: ({ context }) => isComplete(context.batch) && loopBreaker(context.batch) !== undefined,
    runnerClosesBatch: ({ context, event }) => runnerClosesBatch(context.batch, event),
    // The start-up has an `initialize` effect to run (INITIALIZE says so).
    runsInitialize: ({ event }) => event.type === 'INITIALIZE' && event.effect,
    canContinueTurn: ({ context }) => context.initialized && context.turn > 0,
    isInitialized: ({ context }) => context.initialized,
    endedAtIterationLimit: ({ context }) => context.terminateReason === 'max_iterations',
    // A reply whose calls are not run: cut off, or reaching a cost budget (stopReplyReason).
    replyNotRun: ({ context, event }) =>
      stopReplyReason(context, (event as unknown as { output: LlmCallOutput }).output) !== null,
  },
});
