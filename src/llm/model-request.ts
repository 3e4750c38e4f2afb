import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Message } from './message.js';
import type { ReplyNotice } from './reply-fields.js';
import type { RetryOptions } from './retry-policy.js';
import type { CallIdScope } from './tool-call-ids.js';

// The types both wires share (a model call's request, the options it is made with, which API it speaks),
// at the bottom of llm/: the request builders, the wires and the call import them, and they import
// nothing above them.

/** One model call's request: what is sent, and what the reply's call ids must not collide with. */
export interface ModelRequest extends CallIdScope {
  /** The messages to send (the conversation, or a pruned view of it). */
  messages: readonly Message[];
  /** The tools as OpenAI JSON; empty for none. */
  tools: readonly ChatCompletionTool[];
  /** `false` for an answer without tools: `tool_choice: 'none'`, and calls made anyway are dropped. */
  toolsEnabled: boolean;
  /** Epoch ms at which the call is aborted with a `DeadlineExceededError`; `null` for none. */
  deadline: number | null;
}

/** What a request body is made with besides the request itself. */
export interface ChatRequestOptions {
  model: string;
  /** Extra request fields (temperature, max_completion_tokens, ...). */
  request?: Partial<Omit<ChatCompletionCreateParamsBase, 'model' | 'messages' | 'tools' | 'stream'>>;
  /**
   * `native` (default): OpenAI function calling. `xml`: the tools are described in a system message
   * and called with `<tool>` blocks in the text, for models without function calling (xml-tool-calls.ts).
   */
  toolFormat?: 'native' | 'xml';
}

/** Which API a model server is spoken to with. */
export type ModelApi = 'chat-completions' | 'responses';

/** How model calls are made: the client, the body's fixed fields, streaming, retries. */
export interface ModelOptions extends ChatRequestOptions {
  /** The SDK client. Give it `maxRetries: 0`: the retry policy here is the one that rules. */
  client: OpenAI;
  /**
   * `chat-completions` (default: every OpenAI-compatible server) or `responses` (OpenAI's Responses API:
   * reasoning items kept between calls and in the conversation; docs/providers.md).
   */
  api?: ModelApi;
  /** Stream the answer (default true). */
  stream?: boolean;
  retry?: Omit<RetryOptions, 'signal' | 'deadline' | 'onRetry'>;
  /** A stream (or a wait for the first byte) silent this long is cut and retried (default 120 s). */
  streamIdleTimeoutMs?: number;
  /** Hears what a reply held that was left out of the answer (unknown content part types): the debug log. */
  onNotice?: ReplyNotice;
}
