import type OpenAI from 'openai';
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageFunctionToolCall,
} from 'openai/resources/chat/completions';
import { DEFAULTS } from '../../defaults.js';
import { CompletionAssembler } from '../../llm/completion-assembler.js';
import { StreamCutError } from '../../llm/error-classification.js';
import type { Message, Usage } from '../../llm/message.js';
import { type RetryOptions, resolveRetryPolicy, withRetry } from '../../llm/retry-policy.js';
import { parseXmlToolCalls, toXmlRequestMessages, xmlToolInstructions } from '../../llm/xml-tool-calls.js';
import { type ApprovalPolicy, planToolCall, type ToolCallRequest } from '../../tools/tool-call.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';
import type { EffectIO } from '../agent-effects.js';
import type { AgentActorEvent } from '../agent-events.js';
import type { AgentEventMap } from '../emitted-events.js';

/** Input of the `callLlm` actor. */
export interface LlmCallInput {
  sessionId: string;
  turn: number;
  iteration: number;
  messages: Message[];
  /** `false` for the final answer call at a limit: `tool_choice: 'none'`, calls ignored. */
  toolsEnabled: boolean;
  /** Epoch ms at which the call is aborted with a `deadline_exceeded` error; `null` for none. */
  deadline: number | null;
}

/** What the `callLlm` actor resolves with. */
export interface LlmCallOutput {
  /** The assistant message as it goes into the conversation. */
  message: ChatCompletionAssistantMessageParam;
  /** Its tool calls, planned (parsed arguments, approval, loop-breaking). */
  calls: ToolCallRequest[];
  finishReason: string;
  usage: Usage | null;
  /** Reasoning text (`reasoning_content` deltas or `<thinking>` blocks), when the model sent any. */
  reasoning?: string;
  /** When the reply was complete (epoch ms): a wait for approval stops the turn's clock from here. */
  at: number;
}

/** Options of the LLM actor. */
export interface LlmActorOptions {
  client: OpenAI;
  model: string;
  registry: ToolRegistry;
  /** Stream the answer (default true). */
  stream?: boolean;
  approval?: ApprovalPolicy;
  /** Start calls whose arguments are complete before the stream ends (default true). */
  eagerToolStart?: boolean;
  /** Extra request fields (temperature, max_completion_tokens, ...). */
  request?: Partial<Omit<ChatCompletionCreateParamsBase, 'model' | 'messages' | 'tools' | 'stream'>>;
  retry?: Omit<RetryOptions, 'signal' | 'deadline' | 'onRetry'>;
  /**
   * `native` (default): OpenAI function calling. `xml`: tools are described in the prompt and called
   * with `<tool>` blocks in the text, for models without function calling (src/tools/xml-tool-protocol.ts).
   */
  toolFormat?: 'native' | 'xml';
  /** A stream (or a wait for the first byte) silent this long is cut and retried (default 120 s). */
  streamIdleTimeoutMs?: number;
  /**
   * Turns the conversation into the request's messages (context-window pruning); identity by default.
   * A warning or a prune report it returns is told to the machine (`limit_warning`, `context_pruned`).
   */
  prepareMessages?: (messages: Message[], input: LlmCallInput) => PreparedMessages;
}

/** The request view of the conversation, with what the context window noticed. */
export interface PreparedMessages {
  messages: Message[];
  warning?: Pick<AgentEventMap['limit_warning'], 'used' | 'max'>;
  pruned?: AgentEventMap['context_pruned'];
}

/** Thrown when the turn's deadline passes during the call. */
export class DeadlineExceededError extends Error {
  readonly code = 'deadline_exceeded';
  constructor() {
    super("the turn's time limit was reached during the model call");
  }
}

type Parent = { send(event: AgentActorEvent): void } | undefined;

/**
 * The `callLlm` effect: one Chat Completions call through the OpenAI SDK, streaming or not, with the
 * actor's abort signal, the retry policy (the SDK's own retries should be off: `maxRetries: 0`), and
 * the turn deadline. Streams text to the machine as `LLM.DELTA` and announces calls whose arguments
 * are complete as `LLM.TOOL_CALL_READY` so they can start before the stream ends.
 */
export function callLlmEffect(
  options: LlmActorOptions,
): (input: LlmCallInput, io: EffectIO) => Promise<LlmCallOutput> {
  const { client, model, registry } = options;
  const stream = options.stream ?? true;
  const eager = options.eagerToolStart ?? DEFAULTS.eagerToolStart;
  const idleMs = options.streamIdleTimeoutMs ?? DEFAULTS.streamIdleTimeoutMs;
  const maxAttempts = resolveRetryPolicy(options.retry).maxAttempts;
  const xml = options.toolFormat === 'xml';
  let xmlInstructions: string | undefined;
  const plan = (call: { id: string; name: string; argsText: string }, sessionId: string) =>
    planToolCall(call, registry, options.approval, sessionId);

  return async (input, io) => {
    const signal = io.signal;
    const send = io;
    // Without a deadline the actor's own signal is used as it is: an AbortController and an
    // AbortSignal.any per call cost more than the rest of the call's bookkeeping (bench/README.md).
    let deadline: AbortController | undefined;
    let timer: NodeJS.Timeout | undefined;
    if (input.deadline !== null) {
      const controller = new AbortController();
      deadline = controller;
      timer = setTimeout(
        () => controller.abort(new DeadlineExceededError()),
        Math.max(0, input.deadline - Date.now()),
      );
    }
    const combined = deadline ? AbortSignal.any([signal, deadline.signal]) : signal;
    let messages = input.messages;
    if (options.prepareMessages) {
      const prepared = options.prepareMessages(input.messages, input);
      messages = prepared.messages;
      if (prepared.warning || prepared.pruned) {
        send.send({
          type: 'LLM.CONTEXT',
          ...(prepared.warning ? { warning: prepared.warning } : {}),
          ...(prepared.pruned ? { pruned: prepared.pruned } : {}),
        });
      }
    }
    const tools = registry.size > 0 && !xml ? registry.toJSON() : undefined;
    if (xml && registry.size > 0) {
      xmlInstructions ??= xmlToolInstructions(registry.toJSON());
      messages = toXmlRequestMessages(messages, xmlInstructions);
    }
    const body: ChatCompletionCreateParamsBase = {
      ...options.request,
      model,
      messages,
      ...(tools ? { tools, tool_choice: input.toolsEnabled ? 'auto' : 'none' } : {}),
    };
    const attempt = async (attemptNumber: number) => {
      if (attemptNumber > 1) send.send({ type: 'LLM.RESET', reason: 'retry', attempt: attemptNumber });
      return stream
        ? streamOnce(
            client,
            body,
            combined,
            send,
            eager && input.toolsEnabled && !xml,
            (c) => plan(c, input.sessionId),
            idleMs,
          )
        : createOnce(client, body, combined);
    };
    try {
      const raw = await withRetry(attempt, {
        ...options.retry,
        signal: combined,
        ...(input.deadline !== null ? { deadline: input.deadline } : {}),
        onRetry: ({ attempt, delayMs, error }) =>
          send.send({
            type: 'LLM.RETRY',
            attempt,
            maxAttempts,
            delayMs,
            kind: error.kind,
            ...(error.status !== undefined ? { status: error.status } : {}),
            message: error.message,
          }),
      });
      return finish(xml ? withXmlCalls(raw, input) : raw, input, plan);
    } catch (error) {
      if (deadline?.signal.aborted && !signal.aborted) throw new DeadlineExceededError();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
}

interface RawCompletion {
  content: string;
  reasoning: string;
  toolCalls: { id: string; name: string; argsText: string }[];
  finishReason: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null | undefined;
}

async function streamOnce(
  client: OpenAI,
  body: ChatCompletionCreateParamsBase,
  signal: AbortSignal,
  parent: Parent,
  eager: boolean,
  plan: (call: { id: string; name: string; argsText: string }) => ToolCallRequest,
  idleMs: number,
): Promise<RawCompletion> {
  // A server that stops sending mid-stream would hang the read forever: an idle timer cuts it (retried).
  // One timer per attempt: a chunk only notes the time, and the timer, when it fires, re-arms itself
  // for what is left of the idle window (re-arming a timer per chunk cost more than reading the chunk).
  const idle = new AbortController();
  const forward = () => idle.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  let lastData = Date.now();
  const touch = () => {
    lastData = Date.now();
  };
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    const quiet = Date.now() - lastData;
    if (quiet >= idleMs) idle.abort(new StreamCutError(`no data from the model server for ${idleMs} ms`));
    else timer = setTimeout(check, idleMs - quiet);
  };
  timer = setTimeout(check, idleMs);
  try {
    return await readStream(client, body, idle.signal, parent, eager, plan, touch);
  } catch (error) {
    if (idle.signal.aborted && !signal.aborted) throw idle.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', forward);
  }
}

async function readStream(
  client: OpenAI,
  body: ChatCompletionCreateParamsBase,
  signal: AbortSignal,
  parent: Parent,
  eager: boolean,
  plan: (call: { id: string; name: string; argsText: string }) => ToolCallRequest,
  touch: () => void,
): Promise<RawCompletion> {
  const response = await client.chat.completions.create(
    { ...body, stream: true, stream_options: { include_usage: true } },
    { signal },
  );
  const assembler = new CompletionAssembler();
  // Text deltas parsed from one network read are sent to the machine as one LLM.DELTA: the pending
  // text goes out when the event loop turns (setImmediate), before a call is announced, and at the
  // end. Each LLM.DELTA is a full machine step plus an event, so a burst of small deltas cost more
  // than the rest of the stream (bench/README.md). Joined, the deltas are the same text; a stream
  // that fails drops its pending text (a retry's stream_reset discards the text shown anyway).
  let pending = '';
  let flushAt: NodeJS.Immediate | undefined;
  const flush = () => {
    if (flushAt !== undefined) clearImmediate(flushAt);
    flushAt = undefined;
    if (!pending) return;
    const delta = pending;
    pending = '';
    parent?.send({ type: 'LLM.DELTA', delta });
  };
  try {
    for await (const chunk of response) {
      touch();
      const { text, completed } = assembler.push(chunk);
      if (text) {
        pending += text;
        flushAt ??= setImmediate(flush);
      }
      if (eager) {
        for (const call of completed) {
          const planned = plan(call);
          if (
            planned.args !== undefined &&
            !planned.needsApproval &&
            !planned.loopBreaking &&
            isKnown(planned, body)
          ) {
            flush();
            parent?.send({ type: 'LLM.TOOL_CALL_READY', call: planned });
          }
        }
      }
    }
    // An aborted stream ends quietly in the SDK; a stream closed early by the server is a cut (retried).
    signal.throwIfAborted();
    if (assembler.finishReason === null) throw new StreamCutError();
    flush();
  } finally {
    if (flushAt !== undefined) clearImmediate(flushAt);
  }
  return {
    content: assembler.content,
    reasoning: assembler.reasoning,
    toolCalls: assembler.toolCalls,
    finishReason: assembler.finishReason,
    usage: assembler.usage,
  };
}

async function createOnce(
  client: OpenAI,
  body: ChatCompletionCreateParamsBase,
  signal: AbortSignal,
): Promise<RawCompletion> {
  const completion = await client.chat.completions.create({ ...body, stream: false }, { signal });
  const choice = completion.choices[0];
  if (!choice) throw new Error('the completion has no choices');
  const message = choice.message;
  return {
    content: message.content ?? '',
    reasoning: (message as { reasoning_content?: string }).reasoning_content ?? '',
    toolCalls: (message.tool_calls ?? [])
      .filter((c): c is ChatCompletionMessageFunctionToolCall => c.type === 'function')
      .map((c) => ({ id: c.id, name: c.function.name, argsText: c.function.arguments })),
    finishReason: choice.finish_reason,
    usage: completion.usage,
  };
}

const THINKING = /<thinking>([\s\S]*?)<\/thinking>/g;

/** In XML mode the calls are the `<tool>` blocks of the text; ids are made up, stable per turn and call. */
function withXmlCalls(raw: RawCompletion, input: LlmCallInput): RawCompletion {
  const toolCalls = parseXmlToolCalls(raw.content).map((c, i) => ({
    id: `xml_${input.turn}_${input.iteration}_${i}`,
    name: c.name,
    argsText: c.argsText,
  }));
  return { ...raw, toolCalls };
}

function finish(
  raw: RawCompletion,
  input: LlmCallInput,
  plan: (call: { id: string; name: string; argsText: string }, sessionId: string) => ToolCallRequest,
): LlmCallOutput {
  const toolCalls = input.toolsEnabled ? raw.toolCalls : [];
  const message: ChatCompletionAssistantMessageParam = { role: 'assistant', content: raw.content || null };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.argsText },
    }));
  } else if (message.content === null) {
    message.content = '';
  }
  let reasoning = raw.reasoning;
  if (!reasoning && raw.content.includes('<thinking>')) {
    reasoning = [...raw.content.matchAll(THINKING)].map((m) => m[1]!.trim()).join('\n');
  }
  const output: LlmCallOutput = {
    message,
    calls: toolCalls.map((c) => plan(c, input.sessionId)),
    finishReason: raw.finishReason,
    at: Date.now(),
    usage: raw.usage
      ? {
          promptTokens: raw.usage.prompt_tokens,
          completionTokens: raw.usage.completion_tokens,
          totalTokens: raw.usage.total_tokens,
        }
      : null,
  };
  if (reasoning) output.reasoning = reasoning;
  return output;
}

function isKnown(call: ToolCallRequest, body: ChatCompletionCreateParamsBase): boolean {
  return (body.tools ?? []).some((t) => t.type === 'function' && t.function.name === call.name);
}
