import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';

/**
 * A reasoning item of OpenAI's Responses API, kept in the conversation on the assistant message it
 * came with and sent back before that message on the next call (`store: false`: the server keeps
 * nothing, so a restored session keeps its reasoning). `encrypted_content` is opaque.
 */
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  /** The reasoning summary the model gave ([] for none). */
  summary: Array<{ type: 'summary_text'; text: string }>;
  encrypted_content?: string | null;
  /** Reasoning text, when the server sends it (open-weight models). */
  content?: Array<{ type: 'reasoning_text'; text: string }>;
}

/**
 * An assistant message: Chat Completions' shape, plus the reasoning items a Responses API reply came
 * with (`reasoning_items`, absent on the Chat Completions wire, never sent on it).
 */
export type AssistantMessage = ChatCompletionAssistantMessageParam & { reasoning_items?: ReasoningItem[] };

/** A chat message in the OpenAI Chat Completions format: what the conversation is made of. */
export type Message =
  | Exclude<ChatCompletionMessageParam, ChatCompletionAssistantMessageParam>
  | AssistantMessage;

/** Token counts as the API reports them. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** The part of `promptTokens` the server served from its prompt cache, when it said. */
  cachedPromptTokens?: number;
  /**
   * What these tokens cost in USD, from the agent's price table (src/prompt/model-prices.ts); never
   * set by the wire. `undefined` when the model's price is unknown.
   */
  costUsd?: number;
}
