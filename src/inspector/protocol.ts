// The local inspector's WebSocket protocol, shared by the server (src/inspector) and the page
// (inspector/src imports this file; inspector/tsconfig.json compiles it with the page).
// Types only: nothing here runs, and it imports nothing (the page must not pull in server code).

/** One state node of the chart, read from the machine definition. */
export interface ChartNode {
  /** e.g. `agent.Thinking`. */
  id: string;
  key: string;
  /** Keys from the root, e.g. `['Thinking']`. */
  path: string[];
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** Id of the initial child (compound states). */
  initial?: string;
  children: ChartNode[];
  /** Ids of actors invoked while the state is active (e.g. `callLlm`). */
  invoke: string[];
  /** Events handled without leaving the state (actions only). */
  internal: string[];
  description?: string;
}

/** One transition with a target. */
export interface ChartEdge {
  source: string;
  target: string;
  /** The event type (`''` for eventless `always` transitions). */
  event: string;
  /** A short label, e.g. `done: callLlm`. */
  label: string;
  guard?: string;
}

/** The statechart as drawn by the page. */
export interface ChartDefinition {
  id: string;
  root: ChartNode;
  edges: ChartEdge[];
}

/** A row of the session list. */
export interface SessionInfo {
  id: string;
  name: string;
  /** The parent session (subagents are listed under it). */
  parentId?: string;
  /** An agent running in this process (approvals work); false for finished or saved sessions. */
  live: boolean;
  /** Where it comes from: `live` agents, or `saved` sessions read from disk. */
  source: 'live' | 'saved';
  /** The top-level state. */
  state: string;
  title?: string;
  updatedAt?: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** A call waiting for the user's decision. */
export interface PendingApproval {
  toolCallId: string;
  name: string;
  args: unknown;
}

/** The agent's plan (`update_plan`), as the page shows it beside the transcript. */
export interface PlanView {
  explanation?: string;
  steps: { step: string; status: 'pending' | 'in_progress' | 'completed' }[];
}

/** What a session is doing now. */
export interface SessionStatus {
  /** The full state value (objects for sub-states). */
  value: unknown;
  /** The top-level state. */
  state: string;
  /** The actor's status: `active`, `done`, `error` or `stopped`. */
  status: string;
  turn: number;
  iteration: number;
  maxIterations: number;
  pending: PendingApproval[];
  turnUsage: TokenUsage;
  totalUsage: TokenUsage;
  terminateReason: string | null;
  error: { message: string; code?: string } | null;
  messageCount: number;
  /** The agent's plan, `null` before it makes one. */
  plan: PlanView | null;
}

/** An agentloop bus event (sanitized): `type`, `sessionId`, `turn`, `iteration`, `timestamp` and its payload. */
export interface BusEvent {
  type: string;
  sessionId: string;
  turn: number;
  iteration: number;
  timestamp: number;
  [key: string]: unknown;
}

/** An XState inspection event, sanitized, in the shape `@statelyai/inspect` sends. */
export interface InspectionRecord {
  type: '@xstate.actor' | '@xstate.event' | '@xstate.snapshot';
  /** The actor's system session id (e.g. `x:0`). */
  sessionId: string;
  rootId: string;
  parentId?: string;
  sourceId?: string;
  name?: string;
  event?: unknown;
  snapshot?: { status?: string; value?: unknown; context?: unknown };
  /** Epoch ms at which the event happened. */
  createdAt: number;
}

/** A place a saved session can be forked at: after message `index`, its transcript entry `seq`. */
export interface ForkPoint {
  index: number;
  seq: number;
}

/** Everything about one session, sent when a page connects (or asks again). */
export interface SessionSync {
  info: SessionInfo;
  status: SessionStatus;
  /** The conversation as the model sees it (sanitized). */
  messages: unknown[];
  /** Bus events so far, oldest first (token chunks left out; the last `historyLimit`). */
  events: BusEvent[];
  /** Text streamed by the model call in progress. */
  partial: string;
  /** Rest points a page may fork the session at (saved sessions, when the server has their store). */
  forkPoints?: ForkPoint[];
}

/** One entry of a batch. */
export type BatchItem =
  | { k: 'inspect'; session: string; event: InspectionRecord }
  | { k: 'bus'; session: string; event: BusEvent }
  /** Token chunks of the batch, joined. */
  | { k: 'stream'; session: string; text: string }
  /** Messages from index `from` on (the conversation is append-only). */
  | { k: 'messages'; session: string; from: number; items: unknown[] }
  | { k: 'status'; session: string; status: SessionStatus };

/** Server to page. */
export type ServerMessage =
  | { t: 'hello'; version: 1; chart: ChartDefinition; sessions: SessionInfo[] }
  | { t: 'sessions'; sessions: SessionInfo[] }
  | { t: 'sync'; session: SessionSync }
  | { t: 'batch'; items: BatchItem[] }
  /** `session`: the session a `fork` made (already sent in `sessions` and `sync`). */
  | { t: 'ack'; id: number; ok: boolean; error?: string; session?: string }
  /** The answer to a frame that is not a command and has no usable `id` to ack (not JSON, no object, ...). */
  | { t: 'error'; error: string };

/** Page to server. */
export type ClientMessage =
  | { t: 'approve'; id: number; session: string; toolCallId: string }
  | { t: 'reject'; id: number; session: string; toolCallId: string; reason?: string }
  | { t: 'sync'; id: number; session: string }
  /** Forks a saved session after its transcript entry `seq` (a rest point); the ack names the fork. */
  | { t: 'fork'; id: number; session: string; seq: number };
