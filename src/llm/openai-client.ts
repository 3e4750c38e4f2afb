import OpenAI from 'openai';

/** How to reach an OpenAI-compatible server. */
export interface ClientOptions {
  /** A ready client; the other fields are ignored when given. */
  client?: OpenAI;
  /** Defaults to `OPENAI_BASE_URL`, then the SDK's default (api.openai.com). */
  baseURL?: string;
  /** Defaults to `OPENAI_API_KEY`. */
  apiKey?: string;
}

/**
 * Creates the OpenAI SDK client. The SDK's own retries are off (`maxRetries: 0`): our retry policy
 * (src/llm/retry-policy.ts) is the one that rules, with events the UI can show.
 */
export function createOpenAIClient(options: ClientOptions = {}): OpenAI {
  if (options.client) return options.client;
  const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
  const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
  if (!apiKey && !baseURL) {
    throw new Error(
      'no model server configured: pass apiKey or baseURL (or set OPENAI_API_KEY / OPENAI_BASE_URL); ' +
        'for tests use startScriptedServer() from agentloop/testing',
    );
  }
  return new OpenAI({ apiKey: apiKey ?? 'not-needed', ...(baseURL ? { baseURL } : {}), maxRetries: 0 });
}
