import { type ActorRefFrom, assign, enqueueActions } from 'xstate';
import {
  contextReport,
  recordAssistant,
  retryNotice,
  startEarly,
  streamDelta,
  streamReset,
} from './actions/stream-actions.js';
import {
  appendResults,
  approveCall,
  dispatchCalls,
  rejectCall,
  requestApproval,
  runnerDone,
  stopRunners,
  toolFinished,
} from './actions/tool-actions.js';
import {
  beginIteration,
  continueTurn,
  emitError,
  emitTurnEnd,
  extendLimit,
  finishCutOff,
  finishWithAnswer,
  finishWithBreaker,
  recordError,
  recordInterrupt,
  startTurn,
  timeoutFinalCall,
} from './actions/turn-actions.js';
import { initialContext } from './agent-context.js';
import type { AgentStateName } from './agent-states.js';
import type { TerminateReason } from './emitted-events.js';
import { machineSetup } from './machine-setup.js';
import { event, hears } from './turn-messages.js';

/**
 * The agent loop as a statechart. Pure definition: the LLM call (`callLlm`), the tool runner
 * (`runTools`) and start-up (`initialize`) are actors referenced by name that run the effects bound to
 * the agent actor (`bindAgentEffects`; `createAgent` does it). Guards are in machine-setup.ts, actions
 * in actions/, the tool batch's operations in tool-batch.ts. See docs/agent-loop.md.
 */
export const agentMachine = machineSetup
  .extend({
    actions: {
      // Params stay `unknown` here: XState's extend() types actions made by createAction without params.
      enterState: enqueueActions(({ enqueue, context, self }, params: unknown) => {
        const { state } = params as { state: AgentStateName };
        if (hears(self, 'state_change')) {
          enqueue.emit(event(context, 'state_change', { state, previous: context.lastState }));
        }
        enqueue.assign({ lastState: state });
      }),
      appendResults,
      approveCall,
      beginIteration,
      contextReport,
      continueTurn,
      dispatchCalls,
      emitError,
      emitTurnEnd,
      extendLimit,
      finishCutOff,
      finishWithAnswer,
      finishWithBreaker,
      recordAssistant,
      recordError,
      recordInterrupt,
      rejectCall,
      requestApproval,
      retryNotice,
      runnerDone,
      startEarly,
      startTurn,
      stopRunners,
      streamDelta,
      streamReset,
      timeoutFinalCall,
      toolFinished,
    },
  })
  .createMachine({
    id: 'agent',
    context: ({ input }) => initialContext(input ?? {}),
    initial: 'Initializing',
    on: {
      'TOOL.FINISHED': { actions: 'toolFinished' },
      // A runner's done event also records its last result (see runnerDone).
      'xstate.done.actor.*': { actions: 'runnerDone' },
      'xstate.error.actor.*': { actions: 'runnerDone' },
      EXTEND_LIMIT: { actions: 'extendLimit' },
    },
    states: {
      Initializing: {
        entry: { type: 'enterState', params: { state: 'Initializing' } },
        invoke: {
          id: 'initialize',
          src: 'initialize',
          input: ({ context }) => ({ sessionId: context.sessionId }),
          onDone: {
            target: 'AwaitingInput',
            actions: assign(({ context, event: ev }) => ({
              messages: [...context.messages, ...(ev.output?.messages ?? [])],
              initialized: true,
            })),
          },
          onError: {
            target: 'Error',
            actions: assign(({ event: ev }) => ({
              error: {
                message: ev.error instanceof Error ? ev.error.message : String(ev.error),
                code: 'init_failed',
              },
              terminateReason: 'error' as TerminateReason,
            })),
          },
        },
      },
      AwaitingInput: {
        entry: { type: 'enterState', params: { state: 'AwaitingInput' } },
        on: { USER_MESSAGE: { target: 'Thinking', actions: 'startTurn' } },
      },
      Thinking: {
        entry: [{ type: 'enterState', params: { state: 'Thinking' } }, 'beginIteration'],
        invoke: {
          id: 'callLlm',
          src: 'callLlm',
          input: ({ context }) => ({
            sessionId: context.sessionId,
            turn: context.turn,
            iteration: context.iteration,
            messages: context.messages,
            toolsEnabled: context.finalReason === null,
            // The final call after a timeout has its grace deadline; after other limits, none.
            deadline:
              context.finalReason === null || context.finalReason === 'timeout' ? context.deadline : null,
          }),
          onDone: [
            {
              guard: ({ event: ev }) =>
                ev.output.finishReason === 'length' || ev.output.finishReason === 'content_filter',
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
              actions: ['recordAssistant', 'dispatchCalls'],
            },
            { target: 'ExecutingTool', actions: ['recordAssistant', 'dispatchCalls'] },
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
          INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] },
        },
      },
      ExecutingTool: {
        entry: { type: 'enterState', params: { state: 'ExecutingTool' } },
        always: [
          { guard: 'batchEndsTurn', target: 'Completed', actions: 'finishWithBreaker' },
          { guard: 'batchComplete', target: 'Thinking', actions: 'appendResults' },
        ],
        on: { INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] } },
      },
      WaitingApproval: {
        entry: [{ type: 'enterState', params: { state: 'WaitingApproval' } }, 'requestApproval'],
        always: { guard: 'noPending', target: 'ExecutingTool' },
        on: {
          APPROVE: { guard: 'isPending', actions: 'approveCall' },
          REJECT: { guard: 'isPending', actions: 'rejectCall' },
          INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] },
        },
      },
      Completed: {
        entry: [{ type: 'enterState', params: { state: 'Completed' } }, 'emitTurnEnd'],
        on: {
          USER_MESSAGE: { target: 'Thinking', actions: 'startTurn' },
          EXTEND_LIMIT: {
            guard: 'endedAtIterationLimit',
            target: 'Thinking',
            actions: ['extendLimit', 'continueTurn'],
          },
        },
      },
      Interrupted: {
        entry: [{ type: 'enterState', params: { state: 'Interrupted' } }, 'emitTurnEnd'],
        on: {
          USER_MESSAGE: { target: 'Thinking', actions: 'startTurn' },
          RESUME: { guard: 'canContinueTurn', target: 'Thinking', actions: 'continueTurn' },
        },
      },
      Error: {
        entry: [{ type: 'enterState', params: { state: 'Error' } }, 'emitError', 'emitTurnEnd'],
        on: {
          USER_MESSAGE: { guard: 'isInitialized', target: 'Thinking', actions: 'startTurn' },
          RESUME: { guard: 'canContinueTurn', target: 'Thinking', actions: 'continueTurn' },
        },
      },
    },
  });

/** The agent machine type, for embedders typing their actor refs. */
export type AgentMachine = typeof agentMachine;
export type AgentActorRef = ActorRefFrom<AgentMachine>;
