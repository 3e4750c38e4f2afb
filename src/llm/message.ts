import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** A chat message in the OpenAI Chat Completions format: what the conversation is made of. */
export type Message = ChatCompletionMessageParam;

/** Token counts as the API reports them. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}
