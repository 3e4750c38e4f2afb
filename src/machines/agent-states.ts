// The machine's top-level state names, and the sets of them the rest of the runtime asks about. The
// one place they are listed: the machine's own states are checked against it by a test.

/** The top-level states, as public API (the inspector and tests show them). */
export const AGENT_STATES = [
  'Initializing',
  'AwaitingInput',
  'Thinking',
  'Compacting',
  'ExecutingTool',
  'WaitingApproval',
  'Completed',
  'Error',
  'Interrupted',
] as const;

/** One of {@link AGENT_STATES}. */
export type AgentStateName = (typeof AGENT_STATES)[number];

/**
 * The states at which a session is saved. XState restarts an in-flight promise actor when a snapshot
 * is restored, so a snapshot taken mid-call would run the call again (see docs/persistence.md).
 */
export const REST_STATES = ['AwaitingInput', 'WaitingApproval', 'Completed', 'Error', 'Interrupted'] as const;

/** One of {@link REST_STATES}. */
export type RestState = (typeof REST_STATES)[number];

/** The states in which a turn runs: a new message is refused, an interrupt is heard. */
export const BUSY_STATES = ['Thinking', 'Compacting', 'ExecutingTool', 'WaitingApproval'] as const;

const rest: ReadonlySet<string> = new Set(REST_STATES);
const busy: ReadonlySet<string> = new Set(BUSY_STATES);

/** Whether a state (a snapshot's `value`) is a rest point. */
export function isRestState(state: unknown): state is RestState {
  return typeof state === 'string' && rest.has(state);
}

/** Whether a turn is running in this state. */
export function isBusyState(state: unknown): boolean {
  return typeof state === 'string' && busy.has(state);
}
