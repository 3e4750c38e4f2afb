import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { type ZodObject, type ZodRawShape, z } from 'zod';
import type { Message } from '../llm/message.js';
import type { ToolTelemetry } from '../telemetry/trace-parent.js';

/**
 * What a running tool reports through `ctx.progress`: any of the fields, each optional. It reaches
 * listeners as a `tool_progress` event (the CLI, the inspector, AG-UI clients, an MCP client calling
 * the agent); the model never sees it and the transcript does not keep it.
 */
export interface ToolProgress {
  /** What the tool is doing now, or a piece of what it streams (a remote agent's answer). */
  message?: string;
  /** How far it is, in `total`'s unit (or a count that only grows, without `total`). */
  progress?: number;
  /** The amount `progress` counts to, when known. */
  total?: number;
  /** Anything else worth showing (JSON-serializable); redacted like every event. */
  data?: unknown;
}

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the turn is interrupted, the tool times out or the agent stops. */
  signal: AbortSignal;
  /** The `tool_call_id` the model gave this call. */
  toolCallId: string;
  /**
   * `<session id>:<tool call id>`: the same on every run of this call (a retry, a re-run of an
   * `idempotent` tool after a crash, a restore on another worker) and never given to another call.
   * Hand it to the service the tool changes (an `Idempotency-Key` header, a unique column) so that a
   * second run is recognised there.
   */
  idempotencyKey: string;
  /** The session the call belongs to. */
  sessionId: string;
  /** Turn and iteration numbers of the call. */
  turn: number;
  iteration: number;
  /**
   * The conversation when the call started (read-only; the assistant message holding this call is
   * the last one with tool calls). Absent when a custom `runTools` effect gives none. What earlier
   * calls recorded in it (an activated skill) is session state that is saved and restored with it.
   */
  messages?: readonly Message[];
  /**
   * The telemetry handle of this call's run (`createAgent({ telemetry })`), opaque: a subagent started
   * by the tool passes it on as its turn's parent. Absent without telemetry.
   */
  telemetry?: ToolTelemetry;
  /**
   * Reports progress while the call runs (`{ message?, progress?, total?, data? }`): a `tool_progress`
   * event on the agent's bus. No event is built while nobody listens; ignored once the call has ended.
   * Throws a TypeError naming the tool when a field has the wrong type.
   */
  progress(report: ToolProgress): void;
}

/** Decides per call whether a tool needs the user's approval before it runs. */
export type NeedsApproval<A> =
  | boolean
  | ((args: A, ctx: { toolCallId: string; sessionId: string }) => boolean);

/** A tool the model can call: a zod schema for its arguments and the function that runs it. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every argument type; execute is contravariant in A.
export interface Tool<A = any> {
  name: string;
  description: string;
  /** The zod object schema of the arguments; sent to the model as JSON Schema. */
  parameters: ZodObject<ZodRawShape>;
  /** Runs the call; returns a string or any JSON-serializable value (sent to the model as JSON). */
  execute: (args: A, ctx: ToolContext) => unknown | Promise<unknown>;
  needsApproval?: NeedsApproval<A>;
  /** Per-call timeout in ms; defaults to the agent's `limits.toolTimeoutMs`. */
  timeoutMs?: number;
  /**
   * Ends the turn at once when called: its result text becomes the turn's response
   * (`task_completion`, `ask_question`, `converse`). Other calls of the same batch still get results.
   */
  loopBreaking?: 'completed' | 'question';
  /**
   * Safe to run again after a crash when no result was recorded: it runs again with the same
   * `idempotencyKey`. Any other tool cut off by a crash gets an "outcome unknown" result telling the
   * model to check (docs/scale-out.md).
   */
  idempotent?: boolean;
  /**
   * A successful call's arguments are the agent's new plan (`update_plan`): the machine keeps them in
   * its context and emits `plan_updated`.
   */
  updatesPlan?: boolean;
  /**
   * The JSON Schema sent to the model, when it is not the one `parameters` gives (tools whose schema
   * comes from elsewhere, such as an MCP server's; `parameters` then validates it).
   */
  jsonSchema?: Record<string, unknown>;
  /** The MCP server and tool it calls, for a tool an MCP server lists (telemetry names them). */
  mcp?: { server: string; tool: string };
  /** Cached JSON form sent to the model. */
  readonly json: ChatCompletionFunctionTool;
}

/** The fields `defineTool` takes. */
export interface ToolSpec<S extends ZodRawShape> {
  name: string;
  description: string;
  parameters: ZodObject<S>;
  execute: (args: z.infer<ZodObject<S>>, ctx: ToolContext) => unknown | Promise<unknown>;
  needsApproval?: NeedsApproval<z.infer<ZodObject<S>>>;
  timeoutMs?: number;
  loopBreaking?: 'completed' | 'question';
  idempotent?: boolean;
  updatesPlan?: boolean;
  jsonSchema?: Record<string, unknown>;
  mcp?: { server: string; tool: string };
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool from a zod object schema. The JSON Schema sent to the model is computed once here,
 * not on every request.
 */
export function defineTool<S extends ZodRawShape>(spec: ToolSpec<S>): Tool<z.infer<ZodObject<S>>> {
  if (!TOOL_NAME.test(spec.name)) {
    throw new Error(
      `defineTool: invalid tool name ${JSON.stringify(spec.name)} (letters, digits, _ and -, 1-64)`,
    );
  }
  if (!(spec.parameters instanceof z.ZodObject)) {
    throw new Error(`defineTool(${spec.name}): parameters must be a zod object schema`);
  }
  const { $schema: _ignored, ...schema } =
    spec.jsonSchema ?? (z.toJSONSchema(spec.parameters, { io: 'input' }) as Record<string, unknown>);
  const json: ChatCompletionFunctionTool = {
    type: 'function',
    function: { name: spec.name, description: spec.description, parameters: schema },
  };
  return { ...spec, json } as Tool<z.infer<ZodObject<S>>>;
}
