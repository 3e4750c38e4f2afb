import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** A chat message in the OpenAI Chat Completions format: what the conversation is made of. */
export type Message = ChatCompletionMessageParam;

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
