import type { AssistantMessage, ReasoningItem, Usage } from './message.js';
import type { ModelApi } from './model-request.js';
import { reasoningOf } from './reasoning.js';
import type { UsageCounts } from './reply-fields.js';
import type { ResponseIdentity } from './response-identity.js';

/** One tool call as the model made it: its id as the conversation keeps it, its name, its raw arguments. */
export interface ModelToolCall {
  id: string;
  name: string;
  /** The arguments text as sent (not parsed: it may be invalid JSON). */
  argsText: string;
  /** Why the call cannot be run (the server sent it without a function name): its result says so. */
  problem?: string;
}

/** What one attempt of a model call yields, streamed or not, before it is shaped for the conversation. */
export interface Completion extends ResponseIdentity {
  content: string;
  /** `reasoning_content` the server sent alongside the text ('' for none). */
  reasoning: string;
  /** A refusal the model sent instead of an answer ('' for none). */
  refusal: string;
  calls: ModelToolCall[];
  finishReason: string;
  usage: UsageCounts | null | undefined;
  /** Reasoning items of a Responses API reply, to send back on the next call (none on Chat Completions). */
  reasoningItems?: ReasoningItem[];
  /** Streamed: ms from the request to the first chunk of the stream. */
  firstChunkMs?: number;
  /**
   * The body this attempt sent (set by the wire). The call's record hashes it (`requestHash`) and
   * takes its settings (`requestSettings`) only when they are read: most agents never read them.
   */
  requestBody?: object;
}

/** How one model call went: what the transcript's `model_call` entry records beside the reply. */
export interface ModelCallRecord extends ResponseIdentity {
  /** The API the call spoke. */
  wire: ModelApi;
  /**
   * `requestHash` of the body as sent (src/llm/request-hash.ts). Computed when first read (a saved
   * session's `model_call` entry, a listener of the `model_call` event, a replay), then kept.
   */
  requestHash: string;
  /**
   * The body's `requestSettings` (model, tools, parameters: all but the conversation). Not written
   * in the `model_call` entry, and left out of the `model_call` event listeners get: a saved session
   * writes it as `request_settings` when it changes.
   */
  settings?: Record<string, unknown>;
  /** The attempt that was answered, counted from 1 (later than 1 after retries). */
  attempt: number;
  /** ms from the start of the answered attempt to its complete reply. */
  durationMs: number;
  /** Streamed: ms from the start of the answered attempt to its first chunk. */
  firstChunkMs?: number;
}

/** What `callModel` resolves with. */
export interface ModelReply {
  /** The assistant message as it goes into the conversation. */
  message: AssistantMessage;
  /** Its tool calls, with the ids `message.tool_calls` holds; empty when tools were disabled. */
  calls: ModelToolCall[];
  finishReason: string;
  usage: Usage | null;
  /** Reasoning text (`reasoning_content` deltas or `<thinking>` blocks), when the model sent any. */
  reasoning?: string;
  /** How the call went (set by `callModel`). */
  record?: ModelCallRecord;
}

/**
 * Shapes a completion for the conversation: the assistant message (`content: null` only beside tool
 * calls; a refusal's text as the content when there is no other), the calls (none when tools were disabled: a model may call them anyway), usage in our terms
 * and the reasoning.
 */
export function toModelReply(completion: Completion, toolsEnabled: boolean): ModelReply {
  const calls = toolsEnabled ? completion.calls : [];
  const refusal = completion.refusal;
  const message: AssistantMessage = {
    role: 'assistant',
    // A refusal is the answer the user sees; the message keeps it as `refusal` too.
    content: completion.content || refusal || null,
  };
  if (refusal) message.refusal = refusal;
  if (completion.reasoningItems?.length) message.reasoning_items = completion.reasoningItems;
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.argsText },
    }));
  } else if (message.content === null) {
    message.content = '';
  }
  const usage = completion.usage;
  const reply: ModelReply = {
    message,
    calls,
    finishReason: completion.finishReason,
    usage: usage
      ? {
          promptTokens: usage.prompt_tokens,
          completionTokens: usage.completion_tokens,
          totalTokens: usage.total_tokens,
          ...(usage.cached_tokens ? { cachedPromptTokens: usage.cached_tokens } : {}),
        }
      : null,
  };
  const reasoning = reasoningOf(completion.reasoning, completion.content);
  if (reasoning) reply.reasoning = reasoning;
  return reply;
}

/** What assembles one wire's stream events into a completion (`CompletionAssembler`, `ResponseAssembler`). */
export interface StreamAssembler {
  push(event: unknown): void;
  /** Whether the stream said it ended (a finish reason, a completed response): else it was cut. */
  readonly ended: boolean;
  toCompletion(): Completion;
}
