import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/index.js';
import { agentOn } from './support/harness.js';

// Request fields the Responses API has no equivalent for are refused when the agent is created,
// naming the field and the API, not on the first call (a deployed agent failing its first turn).
describe("createAgent({ api: 'responses', request })", () => {
  it('refuses seed and stop at once, naming the field and the API', () => {
    for (const request of [{ seed: 7 }, { stop: ['END'] }, { temperature: 0.2, seed: 1 }])
      expect(() =>
        createAgent({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k', api: 'responses', request }),
      ).toThrow(
        /^createAgent: request\.(seed|stop) has no equivalent in the Responses API \(api: 'responses'\)/,
      );
  });

  it('takes the fields the API has, and Chat Completions takes seed and stop', async () => {
    const responses = await agentOn(
      { turns: [{ content: 'hi' }] },
      { api: 'responses', request: { temperature: 0.2, max_tokens: 50, seed: undefined } },
    );
    expect((await responses.agent.send('hello')).response).toBe('hi');
    const chat = await agentOn(
      { turns: [{ content: 'hi' }] },
      { api: 'chat-completions', request: { seed: 7, stop: ['END'] } },
    );
    expect((await chat.agent.send('hello')).response).toBe('hi');
    expect(chat.server.requests[0]).toMatchObject({ seed: 7, stop: ['END'] });
  });
});
