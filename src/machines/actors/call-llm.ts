import { DEFAULTS } from '../../defaults.js';
import type { AssistantMessage, Message, Usage } from '../../llm/message.js';
import { callModel, type ModelRetryInfo } from '../../llm/model-call.js';
import type { ModelCallRecord, ModelToolCall } from '../../llm/model-reply.js';
import type { ModelOptions } from '../../llm/model-request.js';
import { callIdIndex } from '../../llm/tool-call-ids.js';
import { copyWith } from '../../object-copy.js';
import { type CompactionRecord, compactedRequest, compactionCut } from '../../prompt/compaction.js';
import { type ContextBlock, planBlock } from '../../prompt/context-blocks.js';
import { callCostUsd, type ModelPrice } from '../../prompt/model-prices.js';
import type { TelemetryScope } from '../../telemetry/telemetry-scope.js';
import { type ApprovalPolicy, planToolCall, type ToolCallRequest } from '../../tools/tool-call.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';
import type { Plan } from '../../tools/update-plan-tool.js';
import type { EffectIO } from '../effect-io.js';
import type { AgentEventMap } from '../emitted-events.js';

export { DeadlineExceededError } from '../../llm/call-abort.js';

/** Input of the `callLlm` actor. */
export interface LlmCallInput {
  sessionId: string;
  turn: number;
  iteration: number;
  messages: Message[];
  /** The agent's plan: shown to the model as a block after the system prompt (none while `null`). */
  plan?: Plan | null;
  /** The summary sent in place of the older conversation (docs/context-window.md, "Compaction"). */
  compaction?: CompactionRecord | null;
  /** Whether this model call may still compact first (at most one compaction a turn). */
  mayCompact?: boolean;
  /** `false` for the final answer call at a limit: `tool_choice: 'none'`, calls ignored. */
  toolsEnabled: boolean;
  /** Epoch ms at which the call is aborted with a `deadline_exceeded` error; `null` for none. */
  deadline: number | null;
}

/** What the `callLlm` actor resolves with. */
export interface LlmCallOutput {
  /** The assistant message as it goes into the conversation. */
  message: AssistantMessage;
  /** Its tool calls, planned (parsed arguments, approval, loop-breaking). */
  calls: ToolCallRequest[];
  finishReason: string;
  usage: Usage | null;
  /** Reasoning text (`reasoning_content` deltas or `<thinking>` blocks), when the model sent any. */
  reasoning?: string;
  /** When the reply was complete (epoch ms): a wait for approval stops the turn's clock from here. */
  at: number;
  /** How the call went (the wire, the request's hash, the attempt, timings): the `model_call` event. */
  record?: ModelCallRecord;
}

/** Options of the LLM actor: how model calls are made (`ModelOptions`), and what the actor adds. */
export interface LlmActorOptions extends ModelOptions {
  registry: ToolRegistry;
  approval?: ApprovalPolicy;
  /** Start calls whose arguments are certainly complete before the stream ends (default true). */
  eagerToolStart?: boolean;
  /**
   * Turns the conversation into the request's messages (context-window pruning); identity by default.
   * A warning or a prune report it returns is told to the machine (`limit_warning`, `context_pruned`).
   */
  prepareMessages?: (messages: Message[], input: LlmCallInput) => PreparedMessages;
  /**
   * More blocks shown after the system prompt for this call (context providers), after the plan's.
   * They go into the request before `prepareMessages`, so the context window counts them.
   */
  contextBlocks?: (input: LlmCallInput, signal: AbortSignal) => Promise<ContextBlock[]> | ContextBlock[];
  /** The model's price: the reply's usage gets its `costUsd` (none when the price is unknown). */
  price?: ModelPrice | undefined;
  /**
   * Whether the conversation is compacted by summary when `prepareMessages` says the request is past
   * `compactAt` (the machine's Compacting state runs the `compact` effect). Default false: it prunes.
   */
  compacts?: boolean;
  /** The agent's telemetry: each HTTP attempt of the call is reported. */
  telemetry?: TelemetryScope | undefined;
}

/** The request view of the conversation, with what the context window noticed. */
export interface PreparedMessages {
  messages: Message[];
  warning?: Pick<AgentEventMap['limit_warning'], 'used' | 'max'>;
  pruned?: AgentEventMap['context_pruned'];
  /** Set when the request is past the compaction threshold (`contextWindow.compactAt`). */
  overCompactAt?: { tokens: number; max: number };
}

/**
 * The `callLlm` effect: one model call (`callModel`, src/llm/model-call.ts: the SDK, streaming, the
 * retry policy, the turn deadline) with the actor's abort signal. It tells the machine the streamed
 * text (`LLM.DELTA`), calls that can start before the stream ends (`LLM.TOOL_CALL_READY`), retries
 * (`LLM.RETRY`, `LLM.RESET`) and what the context window noticed (`LLM.CONTEXT`), and resolves with
 * the reply's calls planned (parsed arguments, whether their tool asks for approval, loop-breaking).
 * Whether a call waits for the user is the machine's decision (it knows the tools allowed for the
 * session).
 */
export function callLlmEffect(
  options: LlmActorOptions,
): (input: LlmCallInput, io: EffectIO) => Promise<LlmCallOutput> {
  const { registry } = options;
  const eager = options.eagerToolStart ?? DEFAULTS.eagerToolStart;
  const xml = options.toolFormat === 'xml';
  // One conversation's call ids, read once and extended by each reply's new messages.
  const callIds = callIdIndex();

  const streamed = options.stream !== false;
  // What no call has is not made per call: the plan's block only with a plan, the stream's callbacks
  // only when streaming (bench/README.md, issue 37).
  const noBlocks: readonly ContextBlock[] = [];

  return async (input, io) => {
    const plan = (call: ModelToolCall) => planToolCall(call, registry, options.approval, input.sessionId);
    let blocks: readonly ContextBlock[] = input.plan?.steps.length ? [planBlock(input.plan)] : noBlocks;
    if (options.contextBlocks) blocks = [...blocks, ...(await options.contextBlocks(input, io.signal))];
    const compaction = input.compaction ?? null;
    let messages = compactedRequest(input.messages, compaction, blocks);
    if (options.prepareMessages) {
      const prepared = options.prepareMessages(messages, input);
      if (
        prepared.overCompactAt &&
        options.compacts &&
        input.mayCompact &&
        compactionCut(input.messages, compaction) !== undefined
      ) {
        // The machine goes to Compacting, which stops this call; the call comes again afterwards.
        if (prepared.warning) io.send({ type: 'LLM.CONTEXT', warning: prepared.warning });
        io.send({ type: 'LLM.COMPACT' });
        return new Promise<never>((_, reject) => {
          if (io.aborted) reject(io.reason);
          else io.onAbort(() => reject(io.reason));
        });
      }
      messages = prepared.messages;
      if (prepared.warning || prepared.pruned) {
        io.send({
          type: 'LLM.CONTEXT',
          ...(prepared.warning ? { warning: prepared.warning } : {}),
          ...(prepared.pruned ? { pruned: prepared.pruned } : {}),
        });
      }
    }
    const reply = await callModel(
      options,
      {
        messages,
        tools: registry.toJSON(),
        toolsEnabled: input.toolsEnabled,
        deadline: input.deadline,
        usedCallIds: callIds.lookup(input.messages),
        // Ids made for calls without a usable one name the reply by its place in the conversation
        // (XML calls, which never have one, by turn and iteration).
        callIdStem: xml ? `xml_${input.turn}_${input.iteration}` : `call_m${input.messages.length}`,
      },
      {
        // The effect's own stop notice: no signal is made for the call's caller (bench/README.md, lean36).
        stop: io,
        onText: streamed ? (delta) => io.send({ type: 'LLM.DELTA', delta }) : undefined,
        // The machine keeps streamed text for a stream cut short (an interrupt, the deadline) and for
        // `content_chunk`: text that came with the stream's end is in the reply, so it costs a machine
        // step only when someone reads the chunks (docs/agent-loop.md, "Streamed text").
        endText: streamed && io.hears?.('content_chunk') !== false,
        onCallReady:
          streamed && eager
            ? (call) => {
                const planned = plan(call);
                if (startsEarly(planned, registry)) io.send({ type: 'LLM.TOOL_CALL_READY', call: planned });
              }
            : undefined,
        onRetry: (info) => retried(io, info),
        onReset: ({ reason, attempt }) => io.send({ type: 'LLM.RESET', reason, attempt }),
        telemetry: options.telemetry,
      },
    );
    return copyWith(reply, {
      usage: priced(reply.usage, options.price),
      calls: reply.calls.length > 0 ? reply.calls.map(plan) : [],
      at: Date.now(),
    });
  };
}

/** Tells the machine a model call is retried (`LLM.RETRY`). */
function retried(io: EffectIO, { attempt, maxAttempts, delayMs, error }: ModelRetryInfo): void {
  io.send({
    type: 'LLM.RETRY',
    attempt,
    maxAttempts,
    delayMs,
    kind: error.kind,
    ...(error.status !== undefined ? { status: error.status } : {}),
    message: error.message,
  });
}

/** The usage with what it cost at `price`; as it was when the price is unknown. */
export function priced(usage: Usage | null, price: ModelPrice | undefined): Usage | null {
  if (!usage || !price) return usage;
  const tokens = {
    inputTokens: usage.promptTokens,
    cachedInputTokens: usage.cachedPromptTokens ?? 0,
    outputTokens: usage.completionTokens,
  };
  return copyWith(usage, { costUsd: callCostUsd(tokens, price) });
}

/**
 * Calls that name an unknown tool or have unparseable arguments wait for the stream's end (they fail
 * without running); the machine holds back those that end the turn or wait for approval.
 */
function startsEarly(call: ToolCallRequest, registry: ToolRegistry): boolean {
  return call.args !== undefined && registry.get(call.name) !== undefined;
}
