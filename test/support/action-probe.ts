import { type AnyEventObject, createActor, enqueueActions, fromCallback } from 'xstate';
import * as compactionActions from '../../src/machines/actions/compaction-actions.js';
import * as stateActions from '../../src/machines/actions/state-actions.js';
import * as streamActions from '../../src/machines/actions/stream-actions.js';
import * as toolActions from '../../src/machines/actions/tool-actions.js';
import * as turnActions from '../../src/machines/actions/turn-actions.js';
import type { RunToolsInput } from '../../src/machines/actors/run-tools.js';
import {
  type AgentContext,
  type AgentMachineInput,
  initialContext,
} from '../../src/machines/agent-context.js';
import { bindAgentEffects } from '../../src/machines/agent-effects.js';
import type { AgentEventType } from '../../src/machines/emitted-events.js';
import { machineSetup } from '../../src/machines/machine-setup.js';
import { EMPTY_BATCH, type ToolBatch } from '../../src/machines/tool-batch.js';
import type { ToolCallRequest, ToolResult } from '../../src/tools/tool-call.js';

// One action of the agent machine run on its own (docs/testing.md): a machine of one state whose
// context is the test's, which runs the action on every event sent to it. Its tool runners are
// children that record their input and stay until stopped; nothing is called, no turn runs.

const { enteredState: _helper, ...entryActions } = stateActions;
const ACTIONS = { ...compactionActions, ...entryActions, ...streamActions, ...toolActions, ...turnActions };

/** The name of an action of the machine. */
export type ActionName = keyof typeof ACTIONS;

/** An emitted event without its `timestamp` (the clock's). */
export type Emitted = { type: string; [key: string]: unknown };

/** The context of a new machine (`initialContext`) with `fields` over it. */
export function contextWith(fields: Partial<AgentContext> = {}, input: AgentMachineInput = {}): AgentContext {
  return { ...initialContext({ sessionId: 's1', messages: [], ...input }), ...fields };
}

/**
 * A probe running `name` (with `params`) on every event sent to it, starting from `context`. With
 * `hears`, only the event types it accepts are listened to (as an agent with effects bound).
 */
export function actionProbe(
  name: ActionName,
  context: AgentContext,
  options: {
    params?: unknown;
    hears?: (type: AgentEventType) => boolean;
    runners?: Record<string, string[]>;
  } = {},
) {
  /** The runner actors started, in order: their id and input. */
  const spawned: { id: string; input: RunToolsInput }[] = [];
  /** The ids of the runner actors stopped, in order. */
  const stopped: string[] = [];
  const emitted: Emitted[] = [];
  const machine = machineSetup
    .extend({ actions: ACTIONS as never })
    .createMachine({
      context: ({ input }) => input as AgentContext,
      // The runners `context.batch.runners` names, running before the first event.
      entry: enqueueActions(({ enqueue, context: c }) => {
        for (const id of Object.keys(c.batch.runners)) {
          enqueue.spawnChild('runTools', {
            id,
            input: { sessionId: '', turn: 0, iteration: 0, calls: [], deadline: null },
          });
        }
      }),
      on: { '*': { actions: { type: name, params: options.params } as never } },
    })
    .provide({
      actors: {
        runTools: fromCallback<AnyEventObject, RunToolsInput>(({ input, self }) => {
          spawned.push({ id: self.id, input });
          return () => stopped.push(self.id);
        }) as never,
      },
    });
  const actor = createActor(machine, { input: context as never });
  if (options.hears) {
    bindAgentEffects(actor, {
      callLlm: async () => {
        throw new Error('not called');
      },
      runTools: async () => [],
      hears: options.hears,
    });
  }
  actor.on('*', (e) => {
    const { timestamp: _t, ...rest } = e as unknown as Emitted;
    emitted.push(rest as Emitted);
  });
  // An action that throws stops the actor with an error: `send` throws it (never reported unhandled).
  actor.subscribe({ error: () => {} });
  actor.start();
  // The runners started at entry are the context's own, not the action's.
  spawned.length = 0;
  return {
    actor,
    spawned,
    stopped,
    emitted,
    /** Sends `event` (any shape: the action reads what it reads) and returns the context after it. */
    send(event: { type: string; [key: string]: unknown }): AgentContext {
      actor.send(event as never);
      const snapshot = actor.getSnapshot();
      if (snapshot.status === 'error') throw snapshot.error;
      return snapshot.context as AgentContext;
    },
    /** The ids of the children running now. */
    children: () => Object.keys(actor.getSnapshot().children),
  };
}

/** A tool call of tool `lookup` (or `extra.name`) with arguments `{ id }`. */
export function toolCall(id: string, extra: Partial<ToolCallRequest> = {}): ToolCallRequest {
  return { id, name: 'lookup', argsText: `{"id":"${id}"}`, args: { id }, needsApproval: false, ...extra };
}

/** A successful (or, with `isError`, failed) result of call `id`. */
export function toolResult(id: string, content = `${id} ok`, extra: Partial<ToolResult> = {}): ToolResult {
  return { toolCallId: id, name: 'lookup', content, isError: false, durationMs: 7, ...extra };
}

/** A batch of `calls` with `fields` over it (results, pending, started, runners). */
export function batchOf(calls: ToolCallRequest[], fields: Partial<ToolBatch> = {}): ToolBatch {
  return { ...EMPTY_BATCH, calls, ...fields };
}
