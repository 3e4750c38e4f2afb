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

/** What the SDK's constructor reads from the environment besides the key and the server. */
const SDK_ENVIRONMENT = [
  'OPENAI_ADMIN_KEY',
  'OPENAI_ORG_ID',
  'OPENAI_PROJECT_ID',
  'OPENAI_WEBHOOK_SECRET',
  'OPENAI_LOG',
  'OPENAI_CUSTOM_HEADERS',
] as const;

/** Clients made by {@link sharedOpenAIClient}, by what made them; the oldest goes past `SHARED_MAX`. */
const shared = new Map<string, { fetch: unknown; client: OpenAI }>();
const SHARED_MAX = 16;

/**
 * The client {@link createOpenAIClient} would make, shared by the agents that would make the same one
 * (the same key, server, SDK environment and global `fetch`). The SDK's constructor builds some thirty
 * resource objects: made per agent, it was the largest part of `createAgent` (bench/README.md,
 * "agentcpu"). A client holds no state between requests, so agents can share it; at most
 * `SHARED_MAX` are kept (a process that talks to many servers makes the others again).
 */
export function sharedOpenAIClient(options: ClientOptions = {}): OpenAI {
  if (options.client) return options.client;
  const env = process.env;
  const key = JSON.stringify([
    options.apiKey ?? env.OPENAI_API_KEY,
    options.baseURL ?? env.OPENAI_BASE_URL,
    ...SDK_ENVIRONMENT.map((name) => env[name]),
  ]);
  const found = shared.get(key);
  if (found && found.fetch === globalThis.fetch) return found.client;
  const client = createOpenAIClient(options);
  shared.delete(key);
  shared.set(key, { fetch: globalThis.fetch, client });
  if (shared.size > SHARED_MAX) shared.delete(shared.keys().next().value as string);
  return client;
}
