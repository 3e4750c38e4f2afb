import type { ActorRefFrom } from 'xstate';
import { applyCompaction, finishCompaction } from './actions/compaction-actions.js';
import { failInitializing, finishInitializing, runInitialize, startUp } from './actions/start-actions.js';
import { enterState } from './actions/state-actions.js';
import {
  contextReport,
  receiveReply,
  recordAssistant,
  retryNotice,
  startEarly,
  streamDelta,
  streamReset,
} from './actions/stream-actions.js';
import {
  appendResults,
  approveCall,
  closeBatchWithRunner,
  rejectCall,
  requestApproval,
  runnerDone,
  stopRunners,
  toolFinished,
  toolProgress,
} from './actions/tool-actions.js';
import {
  continueTurn,
  emitError,
  emitTurnEnd,
  enterThinking,
  extendLimit,
  finishCutOff,
  finishWithAnswer,
  finishWithBreaker,
  recordError,
  recordInterrupt,
  recordWriteFailure,
  startTurn,
  timeoutFinalCall,
} from './actions/turn-actions.js';
import { initialContext } from './agent-context.js';
import { machineSetup } from './machine-setup.js';

/**
 * The agent loop as a statechart. Pure definition: the LLM call (`callLlm`), the tool runner
 * (`runTools`) and start-up (`initialize`, only for an agent with that effect) are actors referenced
 * by name that run the effects bound to the agent actor (`bindAgentEffects`; `createAgent` does it).
 * Guards are in machine-setup.ts, actions in actions/, the tool batch's operations in tool-batch.ts.
 * See docs/agent-loop.md.
 */
export const agentMachine = machineSetup
  .extend({
    actions: {
      enterState,
      appendResults,
      closeBatchWithRunner,
      approveCall,
      enterThinking,
      contextReport,
      continueTurn,
      emitError,
      emitTurnEnd,
      extendLimit,
      failInitializing,
      finishCutOff,
      finishInitializing,
      finishWithAnswer,
      finishWithBreaker,
      finishCompaction,
      applyCompaction,
      receiveReply,
      recordAssistant,
      recordError,
      recordInterrupt,
      recordWriteFailure,
      rejectCall,
      requestApproval,
      retryNotice,
      runInitialize,
      runnerDone,
      startEarly,
      startUp,
      startTurn,
      stopRunners,
      streamDelta,
      streamReset,
      timeoutFinalCall,
      toolFinished,
      toolProgress,
    },
  })
  .createMachine({
    id: 'agent',
    context: ({ input }) => initialContext(input ?? {}),
    initial: 'Initializing',
    on: {
      'TOOL.FINISHED': { actions: 'toolFinished' },
      'TOOL.PROGRESS': { actions: 'toolProgress' },
      // A runner's done event also records its last result (see runnerDone).
      'xstate.done.actor.*': { actions: 'runnerDone' },
      'xstate.error.actor.*': { actions: 'runnerDone' },
      EXTEND_LIMIT: { actions: 'extendLimit' },
    },
    states: {
      // Start-up: the machine asks itself (INITIALIZE, a microtask after it starts: `startUp`) and
      // says whether an `initialize` effect is bound. Only then is the `initialize` actor made: an agent
      // without one goes to AwaitingInput in that one step. Its end and failure are handled here (not
      // as an invoke's), as is an `initialize` actor restored from a snapshot an older version saved.
      // The context starts with `lastState: 'Initializing'` (initialContext): no update on entry.
      Initializing: {
        entry: 'startUp',
        on: {
          INITIALIZE: [
            { guard: 'runsInitialize', actions: 'runInitialize' },
            { target: 'AwaitingInput', actions: 'finishInitializing' },
          ],
          'xstate.done.actor.initialize': { target: 'AwaitingInput', actions: 'finishInitializing' },
          'xstate.error.actor.initialize': { target: 'Error', actions: 'failInitializing' },
        },
      },
      AwaitingInput: {
        entry: { type: 'enterState', params: { state: 'AwaitingInput' } },
        on: { USER_MESSAGE: { target: 'Thinking', actions: ['startTurn', 'enterThinking'] } },
      },
      // No entry action: every transition into Thinking enters it in its own actions (`enterThinking`
      // last, or merged into the transition's one context update: `closeBatchWithRunner`,
      // `timeoutFinalCall`), so the step before each model call makes one context update, not two.
      Thinking: {
        invoke: {
          id: 'callLlm',
          src: 'callLlm',
          input: ({ context }) => ({
            sessionId: context.sessionId,
            turn: context.turn,
            iteration: context.iteration,
            messages: context.messages,
            plan: context.plan,
            compaction: context.compaction,
            mayCompact: context.compactedCall === null,
            toolsEnabled: context.finalReason === null,
            // The final call after a timeout has its grace deadline; after other limits, none.
            deadline:
              context.finalReason === null || context.finalReason === 'timeout' ? context.deadline : null,
          }),
          onDone: [
            {
              // Cut off, or its calls would go past a cost budget: the calls are answered, not run.
              guard: 'replyNotRun',
              target: 'Completed',
              actions: ['recordAssistant', 'stopRunners', 'finishCutOff'],
            },
            {
              guard: ({ context, event: ev }) => context.finalReason !== null || ev.output.calls.length === 0,
              target: 'Completed',
              actions: ['recordAssistant', 'finishWithAnswer'],
            },
            {
              guard: 'replyNeedsApproval',
              target: 'WaitingApproval',
              actions: 'receiveReply',
            },
            {
              target: 'ExecutingTool',
              actions: { type: 'receiveReply', params: { enters: 'ExecutingTool' } },
            },
          ],
          onError: [
            {
              guard: ({ context, event: ev }) =>
                context.finalReason === null &&
                (ev.error as { code?: string } | null)?.code === 'deadline_exceeded',
              target: 'Thinking',
              reenter: true,
              actions: 'timeoutFinalCall',
            },
            { target: 'Error', actions: ['stopRunners', 'recordError'] },
          ],
        },
        on: {
          'LLM.DELTA': { actions: 'streamDelta' },
          'LLM.RESET': { actions: 'streamReset' },
          'LLM.RETRY': { actions: 'retryNotice' },
          'LLM.CONTEXT': { actions: 'contextReport' },
          'LLM.TOOL_CALL_READY': { actions: 'startEarly' },
          // The request is past `compactAt`: summarize first (the call waits to be stopped).
          'LLM.COMPACT': { target: 'Compacting' },
          INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] },
          WRITE_FAILED: { target: 'Error', actions: ['stopRunners', 'recordWriteFailure'] },
        },
      },
      // No entry action either: the reply's update records entering it (`receiveReply` with `enters`),
      // and the way in from WaitingApproval says so in its own actions.
      ExecutingTool: {
        on: {
          // The common end of a batch: the runner's done event answers its last call; recording it and
          // appending the results is one step. Every other way a batch completes goes through `always`.
          'xstate.done.actor.*': {
            guard: 'runnerClosesBatch',
            target: 'Thinking',
            actions: 'closeBatchWithRunner',
          },
          INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] },
          WRITE_FAILED: { target: 'Error', actions: ['stopRunners', 'recordWriteFailure'] },
        },
        always: [
          { guard: 'batchEndsTurn', target: 'Completed', actions: 'finishWithBreaker' },
          { guard: 'batchComplete', target: 'Thinking', actions: ['appendResults', 'enterThinking'] },
        ],
      },
      WaitingApproval: {
        entry: 'requestApproval',
        always: {
          guard: 'noPending',
          target: 'ExecutingTool',
          actions: { type: 'enterState', params: { state: 'ExecutingTool' } },
        },
        on: {
          APPROVE: { guard: 'isPending', actions: 'approveCall' },
          REJECT: { guard: 'isPending', actions: 'rejectCall' },
          INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] },
          WRITE_FAILED: { target: 'Error', actions: ['stopRunners', 'recordWriteFailure'] },
        },
      },
      Completed: {
        entry: [{ type: 'enterState', params: { state: 'Completed' } }, 'emitTurnEnd'],
        on: {
          USER_MESSAGE: { target: 'Thinking', actions: ['startTurn', 'enterThinking'] },
          EXTEND_LIMIT: {
            guard: 'endedAtIterationLimit',
            target: 'Thinking',
            actions: ['extendLimit', 'continueTurn', 'enterThinking'],
          },
          // The turn's last writes failed after it came to rest: it is not done, it failed.
          WRITE_FAILED: { target: 'Error', actions: 'recordWriteFailure' },
          // A compaction asked for after the turn (agent.compact()) came back.
          COMPACTED: { actions: 'applyCompaction' },
        },
      },
      Interrupted: {
        entry: [{ type: 'enterState', params: { state: 'Interrupted' } }, 'emitTurnEnd'],
        on: {
          USER_MESSAGE: { target: 'Thinking', actions: ['startTurn', 'enterThinking'] },
          RESUME: {
            guard: 'canContinueTurn',
            target: 'Thinking',
            actions: ['continueTurn', 'enterThinking'],
          },
          WRITE_FAILED: { target: 'Error', actions: 'recordWriteFailure' },
          // A compaction asked for after the turn (agent.compact()) came back.
          COMPACTED: { actions: 'applyCompaction' },
        },
      },
      Error: {
        entry: [{ type: 'enterState', params: { state: 'Error' } }, 'emitError', 'emitTurnEnd'],
        on: {
          USER_MESSAGE: {
            guard: 'isInitialized',
            target: 'Thinking',
            actions: ['startTurn', 'enterThinking'],
          },
          RESUME: {
            guard: 'canContinueTurn',
            target: 'Thinking',
            actions: ['continueTurn', 'enterThinking'],
          },
          COMPACTED: { actions: 'applyCompaction' },
        },
      },
      // Last in the definition: the inspector draws it below the rest states, clear of Thinking's edges.
      Compacting: {
        entry: { type: 'enterState', params: { state: 'Compacting' } },
        invoke: {
          id: 'compact',
          src: 'compact',
          input: ({ context }) => ({
            sessionId: context.sessionId,
            turn: context.turn,
            iteration: context.iteration,
            messages: context.messages,
            compaction: context.compaction,
            instructions: null,
          }),
          onDone: { target: 'Thinking', actions: ['finishCompaction', 'enterThinking'] },
          onError: { target: 'Thinking', actions: ['finishCompaction', 'enterThinking'] },
        },
        on: {
          // Nothing of the compaction is kept: the conversation is exactly as before.
          INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] },
          WRITE_FAILED: { target: 'Error', actions: ['stopRunners', 'recordWriteFailure'] },
        },
      },
    },
  });

/** The agent machine type, for embedders typing their actor refs. */
export type AgentMachine = typeof agentMachine;
export type AgentActorRef = ActorRefFrom<AgentMachine>;
