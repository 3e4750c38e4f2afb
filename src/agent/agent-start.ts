import { type Actor, createActor } from 'xstate';
import type { AgentEventBus } from '../events/event-bus.js';
import type { Redactor } from '../events/redact.js';
import { startUpPending, startUpSoon } from '../machines/actions/start-actions.js';
import { bindAgentEffects } from '../machines/agent-effects.js';
import { type AgentMachine, agentMachine } from '../machines/agent-machine.js';
import type { AgentEvent } from '../machines/emitted-events.js';
import type { SessionPersistence } from '../session/persistent-session.js';
import type { SkillSetup } from '../skills/skills-agent.js';
import { leftInitializing, machineInput, startWaits } from './actor-input.js';
import type { InspectionAttachment } from './agent-inspection.js';
import type { AgentOptions } from './agent-options.js';
import type { ApprovalAnswer } from './approval-answer.js';
import { relayEvents } from './event-relay.js';
import { errorText } from './turn-result.js';

/** An input given before the actor ran: an approval answer, or an interrupt (`interrupt()` while loading). */
export type StartInput = ApprovalAnswer | { interrupt: true; reason?: string | undefined };

/** What {@link startAgentActor} needs from the agent. */
export interface AgentStart {
  options: AgentOptions<unknown>;
  effects: Parameters<typeof bindAgentEffects>[1];
  persistence: SessionPersistence | undefined;
  inspection: InspectionAttachment | undefined;
  bus: AgentEventBus;
  redactor: Redactor;
  /** Hears the actor as soon as it is created, before it starts (what follows reads the agent's state). */
  created: (actor: Actor<AgentMachine>) => void;
  /** Every event the machine emits, after the bus got it (the agent settles turns on `turn_end`). */
  onEvent: (event: AgentEvent) => void;
  /** Applies one input: an approval answer (recorded before the stop, or given while loading) or an interrupt. */
  apply: (input: StartInput) => void;
  /** Inputs given while the session loaded, applied after the restored answers. */
  queued: () => StartInput[];
  /** Publishes an `error` event the machine does not emit itself. */
  publishError: (message: string, code: string) => void;
  /** Whether the agent was stopped meanwhile (it then never starts). */
  stopped: () => boolean;
  /** Hears why the session could not be loaded (the agent then never starts). */
  loadFailed: (error: unknown) => void;
}

/**
 * The agent's load-then-start sequence: the session's load (its restore plan), the skills' catalog
 * and the MCP servers are waited for all at once, then the actor starts ({@link startAgentActor}).
 * A session that cannot be loaded is reported (`error` event, `session_store`, naming the session)
 * and the agent never starts; the promise rejects with the store's error.
 */
export function loadAndStart(
  start: AgentStart,
  skills: Promise<SkillSetup> | undefined,
  serversUp: Promise<unknown> | undefined,
): Promise<void> {
  const { persistence, options } = start;
  if (persistence && options.snapshot) throw new Error('createAgent: give `snapshot` or `session`, not both');
  const waits = startWaits(persistence?.open(), skills, serversUp);
  const ready = waits
    ? waits.then(([snapshot, catalog]) =>
        start.stopped()
          ? undefined
          : startAgentActor(start, persistence ? snapshot : options.snapshot, catalog),
      )
    : startAgentActor(start, options.snapshot);
  if (persistence) {
    ready.catch((error: unknown) => {
      start.loadFailed(error);
      start.publishError(`loading session "${persistence.id}" failed: ${errorText(error)}`, 'session_store');
    });
  }
  return ready;
}

/**
 * The agent's start, once its session is loaded (docs/persistence.md, "Restoring"): the actor is
 * created (from the restored snapshot, if any), bound to its effects, followed by the event relay
 * and the session's persistence, and started; approvals recorded after the last save are sent again,
 * then the answers queued meanwhile; a restore that rests in Error (a lost transcript) says so.
 * Resolves once the actor is past Initializing.
 */
export function startAgentActor(start: AgentStart, snapshot: unknown, catalog?: string): Promise<void> {
  const { options, persistence } = start;
  const actor = createActor(agentMachine, {
    input: machineInput(options, persistence?.id ?? options.sessionId, catalog),
    ...(snapshot ? { snapshot: snapshot as AgentOptions['snapshot'] } : {}),
    ...(start.inspection ? { inspect: start.inspection.observer } : {}),
  });
  start.created(actor);
  bindAgentEffects(actor, start.effects);
  relayEvents(actor, start.bus, start.redactor, start.onEvent);
  persistence?.attach(actor);
  const ready = leftInitializing(actor);
  actor.start();
  // Saved in Initializing before its start-up began: a restore runs no entry action to ask for it.
  if (snapshot && startUpPending(actor.getSnapshot())) startUpSoon(actor);
  for (const input of [...(persistence?.afterStart() ?? []), ...start.queued()]) start.apply(input);
  // A restore that rests in Error (a lost transcript) enters no state: say so as the machine would.
  if (persistence?.report?.transcript) {
    const error = actor.getSnapshot().context.error;
    start.publishError(error?.message ?? 'the transcript was lost', error?.code ?? 'transcript_missing');
  }
  // A restored snapshot is already past Initializing: no change will come to say so.
  return actor.getSnapshot().matches('Initializing') ? ready : Promise.resolve();
}
