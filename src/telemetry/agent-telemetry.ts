/**
 * What an agent tells a telemetry backend, at the places where the work happens: a turn starting and
 * ending (or suspended at an approval when its process lets the session go), each HTTP attempt of a
 * model call, each tool run (wrapping its `execute`), each approval wait. No OpenTelemetry type appears
 * here: `agentloop/otel` implements it with `@opentelemetry/api`; anything else may too.
 *
 * Every start hook returns an opaque handle (`TelemetryHandle`); the agent keeps it and gives it back,
 * to end what it started and as the explicit parent of what starts under it. A backend never needs to
 * read an "active" context: parents always come in the call. Every hook is optional; a hook that throws
 * is reported once as an `error` event (`code: 'telemetry'`) and the turn goes on.
 */
export interface AgentTelemetry {
  /**
   * A turn starts: a user message, a resume, or the continuation of a turn whose approval was answered
   * (`info.kind`). The handle is the parent of everything in the turn.
   */
  turnStart?(info: TurnStartInfo): TelemetryHandle;
  /** The turn came to rest, or it is suspended at an approval because its agent stops (`info.suspended`). */
  turnEnd?(turn: TelemetryHandle, info: TurnEndInfo): void;
  /** One HTTP attempt of a model call begins (a retried call has one per attempt). */
  modelCallStart?(turn: TelemetryHandle, info: ModelCallStartInfo): TelemetryHandle;
  modelCallEnd?(call: TelemetryHandle, info: ModelCallEndInfo): void;
  /** A tool call is about to run (or its result comes from the ledger after a restore: `fromLedger`). */
  toolStart?(turn: TelemetryHandle, info: ToolStartInfo): TelemetryHandle;
  /**
   * Runs the tool's `execute` (synchronously, returning what it returns) inside the tool's context, so
   * that what the tool starts (an HTTP call, a query) is a child of its span.
   */
  toolRun?<T>(tool: TelemetryHandle, execute: () => T): T;
  toolEnd?(tool: TelemetryHandle, info: ToolEndInfo): void;
  /** A call waits for the user's approval (from `info.requestedAt`, which may be in another process). */
  approvalRequested?(parent: TelemetryHandle, info: ApprovalRequestInfo): TelemetryHandle;
  /** The wait is over: approved, rejected, or no answer came (the turn ended or the agent stopped). */
  approvalResolved?(approval: TelemetryHandle, info: ApprovalResolvedInfo): void;
  /**
   * The W3C trace context of a handle, to keep in the session's transcript so that a turn answered in
   * another process continues the same trace; `undefined` when there is none.
   */
  carrierOf?(handle: TelemetryHandle): TraceCarrier | undefined;
  /** A handle standing for a parent kept as a carrier (from the transcript, or sent with a message). */
  fromCarrier?(carrier: TraceCarrier): TelemetryHandle;
  /** The trace context active where the caller is (`SessionClient.send` carries it to the worker). */
  activeCarrier?(): TraceCarrier | undefined;
}

/** What a start hook returned: opaque to the agent, which only gives it back. */
export type TelemetryHandle = unknown;

/** A W3C trace context (https://www.w3.org/TR/trace-context/) as text. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** What a turn starts with. */
export interface TurnStartInfo {
  sessionId: string;
  agentName: string;
  /** The model requested. */
  model: string;
  /** The model server's base URL (for `server.address` / `server.port`). */
  baseUrl: string;
  /** `message`: a user message; `resume`: RESUME or EXTEND_LIMIT; `continuation`: after an approval answered. */
  kind: 'message' | 'resume' | 'continuation';
  /** The user's message (content capture only). */
  input?: string;
  /** An explicit parent: a subagent's tool call, the approval a continuation follows, a carried context. */
  parent?: TelemetryHandle;
  /** The agent's redaction: content a backend records goes through it. */
  redact: <T>(value: T) => T;
}

/** Why a turn stopped: a `TerminateReason` of the machine, as text. */
export interface TurnEndInfo {
  /** Set when the turn came to rest: `completed`, `question`, `max_iterations`, `timeout`, `error`, ... */
  terminateReason?: string;
  /** The turn waits for an approval its agent will not see answered (it stops): another process continues it. */
  suspended?: boolean;
  iterations: number;
  usage: TelemetryUsage;
  /** The time the turn spent waiting for approvals (ms). */
  approvalWaitMs: number;
  /** The turn's answer (content capture only). */
  response?: string;
  /** The error, for `error` and `timeout`. */
  error?: { message: string; code?: string };
}

/** Token counts. */
export interface TelemetryUsage {
  inputTokens: number;
  outputTokens: number;
  /** The part of the input served from the prompt cache, when the server said. */
  cachedInputTokens?: number;
  /** The part of the output spent reasoning, when the server said. */
  reasoningTokens?: number;
}

/** One HTTP attempt of a model call, as it begins. */
export interface ModelCallStartInfo {
  /** `chat-completions` or `responses`. */
  wire: string;
  model: string;
  baseUrl: string;
  /** The attempt, counted from 1. */
  attempt: number;
  stream: boolean;
  /** Request parameters sent beside the messages (temperature, max tokens, ...). */
  request: Readonly<Record<string, unknown>>;
  /** The messages sent (content capture only; read them lazily: they are not copied). */
  messages: readonly unknown[];
  /** The tools offered, as OpenAI JSON. */
  tools: readonly unknown[];
}

/** How one HTTP attempt ended. */
export interface ModelCallEndInfo {
  /** Set when the attempt failed (its kind: `rate_limit`, `server_error`, `timeout`, `aborted`, ...). */
  errorType?: string;
  errorMessage?: string;
  responseId?: string;
  responseModel?: string;
  finishReason?: string;
  usage?: TelemetryUsage;
  /** Streamed: ms from the request to the first chunk. */
  firstChunkMs?: number;
  /** The assistant's answer (content capture only). */
  output?: { content: string; toolCalls: readonly { id: string; name: string; arguments: string }[] };
}

/** A tool call about to run. */
export interface ToolStartInfo {
  name: string;
  toolCallId: string;
  /** The arguments text the model sent (content capture only). */
  arguments: string;
  idempotencyKey: string;
  /** It started while the model's stream still ran. */
  startedEarly: boolean;
  /** Its result came from the transcript's ledger after a restore: nothing ran. */
  fromLedger?: boolean;
  /** The tool comes from an MCP server. */
  mcp?: { server: string; tool: string };
  description?: string;
}

/** How a tool call ended. */
export interface ToolEndInfo {
  /** Set when it failed: `timeout`, `tool_error`, `interrupted`, `invalid_arguments`, `unknown_tool`. */
  errorType?: string;
  /** Why it failed, as the model is told (a span's status message; redact it before recording it). */
  errorMessage?: string;
  /** The result text the model gets (content capture only). */
  result: string;
}

/** A call waiting for approval. */
export interface ApprovalRequestInfo {
  sessionId: string;
  name: string;
  toolCallId: string;
  /** When the wait began (epoch ms). */
  requestedAt: number;
}

/** How a wait ended. */
export interface ApprovalResolvedInfo {
  /** `approved`, `rejected`, or `unanswered` (the turn ended otherwise: an interrupt, a limit). */
  decision: 'approved' | 'rejected' | 'unanswered';
  /** Who answered: `local` (this process's `approve` / `reject`) or `inbox` (a message to the session). */
  answeredBy?: 'local' | 'inbox';
  /** Approved for the rest of the session. */
  always?: boolean;
}
