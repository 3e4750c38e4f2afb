import type OpenAI from 'openai';
import type { Actor } from 'xstate';
import type { ZodRawShape, ZodType } from 'zod';
import type { AuditLog } from '../events/audit-log.js';
import type { DebugOption } from '../events/debug-log.js';
import type { AgentLimits } from '../limits.js';
import type { Message, Usage } from '../llm/message.js';
import type { RetryOptions } from '../llm/retry-policy.js';
import type { LlmActorOptions } from '../machines/actors/call-llm.js';
import type { ToolRunHooks } from '../machines/actors/run-tools.js';
import type { InitializeOutput } from '../machines/agent-effects.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import type { DurableSteps } from '../machines/durable-effects.js';
import type { TerminateReason } from '../machines/emitted-events.js';
import type { McpAuthOptions } from '../mcp/mcp-auth.js';
import type { McpServersConfig } from '../mcp/mcp-config.js';
import { type AgentDefinition, renderInstructions } from '../prompt/agent-definition.js';
import type { ContextProvider } from '../prompt/context-blocks.js';
import type { ContextGuardOptions } from '../prompt/context-guard.js';
import type { ModelPricing } from '../prompt/model-prices.js';
import type { SessionOptions } from '../session/session-options.js';
import type { AgentTelemetry } from '../telemetry/agent-telemetry.js';
import type { Tool } from '../tools/define-tool.js';
import type { ApprovalPolicy } from '../tools/tool-call.js';
import type { InspectOption } from './agent-inspection.js';
import type { SkillsOption } from './agent-skills.js';

// The types of the Agent facade's API: what createAgent takes and what a turn gives back.

/** How the agent compacts its conversation (`compaction`). */
export interface CompactionOptions {
  /** The model that writes the summary (default: the agent's model), over the same client and wire. */
  model?: string;
  /** Time the summary call has, in ms (default 120 s); past it, the agent prunes instead. */
  timeoutMs?: number;
  /** The most tokens a summary may take (default: a quarter of the prompt budget); a longer one is refused. */
  maxSummaryTokens?: number;
}

/**
 * Everything `createAgent` takes. Only a way to reach a model is required. With `session` (and/or
 * `store`) the session is saved at every rest point and `session: id` continues a saved one.
 */
export interface AgentOptions<TOutput = unknown> extends SessionOptions {
  /** A name for logs and UIs. */
  name?: string;
  /** Model id (default `DEFAULTS.model`). */
  model?: string;
  /** OpenAI-compatible server URL; defaults to `OPENAI_BASE_URL`. */
  baseURL?: string;
  /** Defaults to `OPENAI_API_KEY`. */
  apiKey?: string;
  /** A ready OpenAI client (give it `maxRetries: 0`: agentloop's retry policy rules). */
  client?: OpenAI;
  /** The system prompt. */
  instructions?: string;
  /** More leading messages (for example critical-action context from a bundle). */
  contextMessages?: Message[];
  /** Runs once before the first turn; the messages it returns are added. A throw ends in the Error state. */
  initialize?: () => Promise<InitializeOutput> | InitializeOutput;
  tools?: Tool[];
  /**
   * Agent Skills: folders of skills (searched after the project's `.agents/skills` and `.claude/skills`),
   * or `{ dirs, projectRoot, outputFolder }`. The system prompt gets the catalog (names and
   * descriptions), the tools `activate_skill`, `read_file` and `save_output` (docs/skills.md).
   */
  skills?: SkillsOption;
  /** Add `task_completion`, `ask_question` and `converse` (default true). */
  loopControlTools?: boolean;
  /**
   * MCP servers whose tools the agent offers as `<server>__<tool>`, in the shape of an `mcp.json`'s
   * `mcpServers`: `{ command, args?, env?, cwd? }` (stdio) or `{ url, headers? }` (Streamable HTTP),
   * each with an optional `approval` ('readonly' by default: tools not annotated read-only ask).
   * They start with the agent (`ready()` waits until each has listed its tools or failed); `close()`
   * ends them. See docs/mcp.md.
   */
  mcpServers?: McpServersConfig;
  /**
   * How remote MCP servers sign in (OAuth): where tokens are kept (default `auth/` beside the
   * sessions folder), `signIn(server, url)` to send the user to sign in (without it a server that
   * needs one is an `error` event naming `agentloop mcp login <name>`), your own providers by server.
   */
  mcpAuth?: McpAuthOptions;
  /** Offer `update_plan`, the plan the agent keeps and the model sees before every call (default true). */
  planning?: boolean;
  /**
   * Context evaluated before every model call and shown after the system prompt like the plan
   * (retrieved documents, the state of the world); counted in the context window's budget.
   */
  contextProviders?: ContextProvider[];
  /** Time each context provider has before a model call (default `DEFAULTS.contextProviderTimeoutMs`); a late one is left out and reported. */
  contextProviderTimeoutMs?: number;
  /** Stream responses (default true). */
  stream?: boolean;
  limits?: Partial<AgentLimits> & { toolTimeoutMs?: number; maxToolResultChars?: number };
  /**
   * Prices by model name (USD per million input, cached input and output tokens) over the built-in
   * table (src/prompt/model-prices.ts): results, `usage` events and sessions then say what calls cost,
   * and `limits.maxCostUsd` can apply. A model in neither has an unknown cost, never 0.
   */
  pricing?: ModelPricing;
  /** Which calls need the user's approval (default: each tool's `needsApproval`). */
  approval?: ApprovalPolicy;
  /** Retry policy for model calls (429, 5xx, connection errors, cut streams). */
  retry?: Omit<RetryOptions, 'signal' | 'deadline' | 'onRetry'>;
  /** Extra request fields (temperature, max_completion_tokens, ...). */
  request?: LlmActorOptions['request'];
  /** Start calls whose arguments are certainly complete before the stream ends (default true). */
  eagerToolStart?: boolean;
  /** `native` function calling (default), or `xml` `<tool>` blocks for models without it. */
  toolFormat?: 'native' | 'xml';
  /**
   * The API the model server is spoken to with: `chat-completions` (default, every OpenAI-compatible
   * server) or `responses` (OpenAI's Responses API: reasoning kept between calls; docs/providers.md).
   */
  api?: 'chat-completions' | 'responses';
  /**
   * The context window requests are kept inside: warnings past a share of it, pruning of old tool
   * results past the budget (see docs/context-window.md). `false` sends the conversation as it is.
   */
  contextWindow?: false | ContextGuardOptions;
  /**
   * Compaction by summary: past `contextWindow.compactAt` (default 0.8 of the window), a model call
   * summarizes the older conversation and requests send the summary in its place; if it fails, the
   * context window prunes (docs/context-window.md). `false` prunes only. Off with `contextWindow: false`
   * or `prepareMessages`.
   */
  compaction?: false | CompactionOptions;
  /** Builds the request's messages yourself (replaces `contextWindow`; no compaction). */
  prepareMessages?: LlmActorOptions['prepareMessages'];
  /** Hooks around each tool call (persistence). */
  toolHooks?: ToolRunHooks;
  /**
   * A JSONL audit trail of tool calls, one record before each call runs and one after it returns
   * (`createAuditLog`): a file path (redacted with this agent's redactor) or a log you made.
   */
  auditLog?: string | AuditLog;
  /** Validates the final response (parsed as JSON) into `result.output`. */
  outputSchema?: ZodType<TOutput>;
  /** Session id (default: a random UUID). */
  sessionId?: string;
  /** One log line per iteration and tool call: `true` for stderr, or a function. Also `DEBUG=agentloop`. */
  debug?: DebugOption;
  /**
   * Watch the statechart: `statelyInspection()` sends it to the Stately inspector (sanitized, see
   * docs/inspector.md); the local inspector's `server.inspect`, an XState inspection observer or an
   * inspector object (`createWebSocketInspector()`) is used as given.
   */
  inspect?: InspectOption;
  /**
   * Telemetry hooks called at each turn, model-call attempt, tool run and approval wait (no
   * OpenTelemetry types: `otelTelemetry()` from `agentloop/otel` maps them onto GenAI spans;
   * docs/telemetry.md). A hook that throws is reported once as an `error` event; the turn goes on.
   */
  telemetry?: AgentTelemetry;
  /**
   * Secrets that never appear in events, debug lines, the audit log or inspectors (and that the
   * transcript writer redacts through `agent.redactor`), besides `apiKey` and `OPENAI_API_KEY` (those
   * only when they look like keys: docs/security.md): strings (tokens, passwords; redacted as given,
   * however short) or patterns. `sk-...` keys and `Bearer ...` tokens are redacted by default.
   */
  secrets?: (string | RegExp)[];
  /** A persisted snapshot to restore instead of starting fresh (not with `session`: that restores from the store). */
  snapshot?: ReturnType<Actor<AgentMachine>['getPersistedSnapshot']>;
  /**
   * Runs each effect (model call, tool call, compaction) as a step of a durable engine, so that a
   * replay gets the recorded outcome (`agentloop/restate`, `agentloop/dbos` set it; docs/engines.md).
   */
  durableSteps?: DurableSteps;
}

/** The outcome of one turn. */
export interface ExecutionResult<TOutput = unknown> {
  /** The turn ended by the model's own choice (`completed` or `question`). */
  success: boolean;
  /** The answer (or question) for the user. */
  response: string;
  /** Model calls made in the turn. */
  iterations: number;
  /** The whole conversation so far. */
  messages: Message[];
  terminateReason: TerminateReason;
  /**
   * Tokens used by the turn, and `costUsd`: what they cost from the price table (`pricing`),
   * `undefined` when the model has no price.
   */
  usage: Usage;
  error?: string;
  /** The response validated by `outputSchema`. */
  output?: TOutput;
  /** Why the response did not validate against `outputSchema`. */
  outputError?: string;
}

/**
 * The `createAgent` options that run a definition with these inputs, plus runtime options (model server,
 * events). `runtime.name` and `runtime.model` win over the definition's (a UI may show a display name).
 */
export function toAgentOptions<TInput extends ZodRawShape, TOutput>(
  definition: AgentDefinition<TInput, TOutput>,
  inputs: Record<string, unknown> = {},
  runtime: Omit<AgentOptions<TOutput>, 'instructions' | 'tools' | 'outputSchema'> = {},
): AgentOptions<TOutput> {
  const options: AgentOptions<TOutput> = {
    ...runtime,
    name: runtime.name ?? definition.name,
    instructions: renderInstructions(definition, inputs),
    tools: definition.tools ?? [],
    contextMessages: [...(definition.contextMessages ?? []), ...(runtime.contextMessages ?? [])],
    limits: { ...definition.limits, ...runtime.limits },
  };
  const model = runtime.model ?? definition.model;
  if (model !== undefined) options.model = model;
  if (definition.outputSchema) options.outputSchema = definition.outputSchema;
  return options;
}
