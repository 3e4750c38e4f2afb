/**
 * `createOpenAIClient`: where the server and the key come from (options, then the environment), the
 * SDK's own retries off (the retry policy rules), and a clear error when nothing says where to go.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOpenAIClient } from '../src/llm/openai-client.js';
import { startScriptedServer } from '../src/testing/index.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

/** No OPENAI_* variable set, whatever the machine running the tests has. */
function withoutEnvironment(): void {
  vi.stubEnv('OPENAI_API_KEY', undefined);
  vi.stubEnv('OPENAI_BASE_URL', undefined);
}

describe('createOpenAIClient', () => {
  it('returns a client it is given as it is', () => {
    const client = new OpenAI({ apiKey: 'k', baseURL: 'http://127.0.0.1:1/v1' });
    expect(createOpenAIClient({ client, apiKey: 'other', baseURL: 'http://elsewhere/v1' })).toBe(client);
  });

  it('takes the server and key from the options before the environment, with the SDK retries off', () => {
    vi.stubEnv('OPENAI_API_KEY', 'env-key');
    vi.stubEnv('OPENAI_BASE_URL', 'http://env.invalid/v1');
    const client = createOpenAIClient({ apiKey: 'opt-key', baseURL: 'http://127.0.0.1:9/v1' });
    expect(client.apiKey).toBe('opt-key');
    expect(client.baseURL).toBe('http://127.0.0.1:9/v1');
    expect(client.maxRetries).toBe(0);
  });

  it('falls back to OPENAI_API_KEY and OPENAI_BASE_URL', () => {
    withoutEnvironment();
    vi.stubEnv('OPENAI_API_KEY', 'env-key');
    vi.stubEnv('OPENAI_BASE_URL', 'http://env.invalid/v1');
    const client = createOpenAIClient();
    expect(client.apiKey).toBe('env-key');
    expect(client.baseURL).toBe('http://env.invalid/v1');
    expect(client.maxRetries).toBe(0);
  });

  it("uses the SDK's default server for a key alone", () => {
    withoutEnvironment();
    const client = createOpenAIClient({ apiKey: 'k' });
    expect(client.baseURL).toBe('https://api.openai.com/v1');
    expect(client.maxRetries).toBe(0);
  });

  it('talks to a local server without a key (one the server does not check)', async () => {
    withoutEnvironment();
    const server = await startScriptedServer({ scenario: { turns: [{ content: 'hello' }] } });
    try {
      const client = createOpenAIClient({ baseURL: server.url });
      expect(client.apiKey).toBe('not-needed');
      const reply = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(reply.choices[0]?.message.content).toBe('hello');
    } finally {
      await server.close();
    }
  });

  it('refuses to guess when neither a key nor a server is configured, naming both ways', () => {
    withoutEnvironment();
    expect(() => createOpenAIClient({})).toThrow(/apiKey or baseURL.*OPENAI_API_KEY \/ OPENAI_BASE_URL/);
  });
});
