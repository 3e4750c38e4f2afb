import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentEvent,
  createAgent,
  createRedactor,
  defineTool,
  MemorySessionStore,
  REDACTED,
} from '../src/index.js';
import { startScriptedServer } from '../src/testing/index.js';
import { ForwardingStore } from './support/forwarding-store.js';
import { serve } from './support/harness.js';
import { pushedInPieces } from './support/stream-pieces.js';

const API_KEY = 'sk-proj-Zq4v9TcXw2LmN8bYr6HsK1fJ3dGpQ0aE';
const ENV_KEY = 'sk-envkey-7Hn2Qx9LmW4vBz8KcY1tR5pD';
const PASSWORD = 'correct horse battery';
const TOKEN = 'tok_a1b2c3d4e5';

describe('createRedactor', () => {
  const redactor = createRedactor({
    knownSecrets: [API_KEY, 'short', 'not-needed', undefined],
    secrets: [PASSWORD, /tok_[a-z0-9]{10}/],
    env: { OPENAI_API_KEY: ENV_KEY },
  });

  it('replaces known keys, the env key, configured strings and patterns, and default patterns', () => {
    const text = `key ${API_KEY}, env ${ENV_KEY}, pw ${PASSWORD}, ${TOKEN}, Authorization: Bearer abc.DEF-123_xyz, other sk-${'x'.repeat(24)}`;
    const out = redactor.redact(text);
    for (const secret of [API_KEY, ENV_KEY, PASSWORD, TOKEN, 'abc.DEF-123_xyz', 'x'.repeat(24)]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toBe(
      `key ${REDACTED}, env ${REDACTED}, pw ${REDACTED}, ${REDACTED}, Authorization: ${REDACTED}, other ${REDACTED}`,
    );
  });

  it('ignores short and placeholder known secrets, and leaves clean text and values untouched', () => {
    expect(redactor.redact('a short note, not-needed here')).toBe('a short note, not-needed here');
    const value = { a: ['plain', { b: 1 }], c: null };
    expect(redactor.redactValue(value)).toBe(value);
  });

  it('redacts deep inside values without touching the original', () => {
    const value = { args: { headers: [`Bearer ${API_KEY}`] }, n: 1, error: new Error(`bad key ${API_KEY}`) };
    const out = redactor.redactValue(value);
    expect(JSON.stringify(out)).not.toContain(API_KEY);
    expect((out.error as Error).message).toBe(`bad key ${REDACTED}`);
    expect(value.args.headers[0]).toContain(API_KEY);
  });

  it('catches a secret split across stream deltas, whatever the split (property)', () => {
    const words = fc.constantFrom(
      'hello',
      'the',
      'key:',
      API_KEY,
      ENV_KEY,
      PASSWORD,
      TOKEN,
      `Bearer ${'q'.repeat(12)}`,
      'sk-',
      'Bearer',
      'tok_',
      'correct',
    );
    fc.assert(
      fc.property(
        fc.array(words, { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 40 }),
        (parts, sizes) => {
          const text = parts.join(' ');
          const shown = pushedInPieces(redactor.stream(), text, sizes);
          const joined = shown.join('');
          expect(joined).toBe(redactor.redact(text));
          for (const secret of [API_KEY, ENV_KEY, PASSWORD, TOKEN, 'q'.repeat(12)]) {
            expect(joined).not.toContain(secret);
            for (const piece of shown) expect(piece).not.toContain(secret);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds back no more than the last two words of ordinary text', () => {
    const stream = createRedactor({ env: false }).stream();
    expect(stream.push('one two three four')).toBe('one two ');
    expect(stream.push(' five')).toBe('three ');
    expect(stream.flush()).toBe('four five');
  });
});

describe('events nobody listens to', () => {
  it('are not published, and a content_chunk listener alone still gets the whole answer, redacted', async () => {
    const server = await startScriptedServer({
      scenario: {
        turns: [
          { toolCalls: [{ name: 'echo', arguments: { text: API_KEY } }] },
          { content: `All done; the key was ${API_KEY}`, chunkSize: 4 },
        ],
      },
    });
    const echo = defineTool({
      name: 'echo',
      description: 'echoes its text',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    });
    const agent = createAgent({
      baseURL: server.url,
      apiKey: API_KEY,
      tools: [echo],
      loopControlTools: false,
    });
    const chunks: string[] = [];
    const published: string[] = [];
    agent.on('content_chunk', (e) => chunks.push(e.delta));
    const publish = agent.bus.publish.bind(agent.bus);
    agent.bus.publish = (event) => {
      published.push(event.type);
      publish(event);
    };
    try {
      const result = await agent.send('go');
      expect(result.response).toBe(`All done; the key was ${API_KEY}`);
    } finally {
      agent.stop();
      await server.close();
    }
    // The answer ends in a secret: its held-back tail is flushed by events no one hears.
    expect(chunks.join('')).toBe(`All done; the key was ${REDACTED}`);
    expect(new Set(published)).toEqual(new Set(['content_chunk']));
    expect(agent.bus.hears('tool_call_end')).toBe(false);
    agent.on('*', () => {});
    expect(agent.bus.hears('tool_call_end')).toBe(true);
  });
});

describe('no secret reaches an event, a debug line or the audit log', () => {
  const dirs: string[] = [];
  const saved = process.env.OPENAI_API_KEY;
  afterEach(async () => {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  for (const stream of [true, false]) {
    it(`with a tool that echoes the key and a model that says it (${stream ? 'streaming' : 'non-streaming'})`, async () => {
      process.env.OPENAI_API_KEY = ENV_KEY;
      const dir = await mkdtemp(join(tmpdir(), 'agentloop-redact-'));
      dirs.push(dir);
      const auditFile = join(dir, 'audit.jsonl');
      const revealKey = defineTool({
        name: 'reveal_key',
        description: 'returns the configuration, secrets included',
        parameters: z.object({ which: z.string() }),
        execute: ({ which }) => ({ which, apiKey: API_KEY, env: process.env.OPENAI_API_KEY, pw: PASSWORD }),
      });
      const failing = defineTool({
        name: 'login',
        description: 'fails, quoting its token',
        parameters: z.object({ token: z.string() }),
        execute: ({ token }) => {
          throw new Error(`login refused for token ${token} (key ${API_KEY})`);
        },
      });
      const server = await startScriptedServer({
        scenario: {
          turns: [
            {
              content: `Sure. Your key is ${API_KEY} and the password is ${PASSWORD}.`,
              chunkSize: 3,
              toolCalls: [
                { name: 'reveal_key', arguments: { which: API_KEY } },
                { name: 'login', arguments: { token: TOKEN } },
              ],
            },
            {
              error: { status: 429, message: `Rate limit reached for key ${API_KEY}` },
              times: 1,
              content: `Done: env key ${ENV_KEY}, header Bearer ${'z'.repeat(16)}, token ${TOKEN}.`,
              chunkSize: 5,
            },
            { error: { status: 401, message: `Incorrect API key provided: ${API_KEY}` } },
          ],
        },
      });
      const lines: string[] = [];
      const agent = createAgent({
        baseURL: server.url,
        apiKey: API_KEY,
        stream,
        tools: [revealKey, failing],
        secrets: [PASSWORD, /tok_[a-z0-9]{10}/],
        retry: { baseDelayMs: 1, maxDelayMs: 2 },
        auditLog: auditFile,
        debug: (line) => lines.push(line),
      });
      const events: AgentEvent[] = [];
      agent.on('*', (e) => events.push(e));
      try {
        const first = await agent.send(`my key is ${API_KEY}, what is it?`);
        expect(first.terminateReason).toBe('completed');
        const second = await agent.send('again');
        expect(second.terminateReason).toBe('error');
      } finally {
        agent.stop();
        await server.close();
      }

      // The secrets did flow through the conversation (the test would prove nothing otherwise)...
      const sent = JSON.stringify(server.requests);
      for (const secret of [API_KEY, ENV_KEY, PASSWORD, TOKEN]) expect(sent).toContain(secret);
      expect(events.some((e) => e.type === 'retry')).toBe(true);
      expect(events.some((e) => e.type === 'error')).toBe(true);
      // ...but none reached an event, a debug line or the audit log.
      const audit = await readFile(auditFile, 'utf8');
      const outputs = { events: JSON.stringify(events), debug: lines.join('\n'), audit };
      for (const [where, text] of Object.entries(outputs)) {
        for (const secret of [API_KEY, ENV_KEY, PASSWORD, TOKEN, 'z'.repeat(16)]) {
          expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
        }
        expect(text, where).toContain(REDACTED);
      }
      // The UI still gets the whole answer, redacted, in order.
      if (stream) {
        const firstTurn = events.filter(
          (e) => e.type === 'content_chunk' && e.turn === 1 && e.iteration === 1,
        );
        expect(firstTurn.map((e) => (e as AgentEvent<'content_chunk'>).delta).join('')).toBe(
          `Sure. Your key is ${REDACTED} and the password is ${REDACTED}.`,
        );
      }
      expect(agent.redactor.redact(`x ${API_KEY}`)).toBe(`x ${REDACTED}`);
    });
  }
});

describe('what an embedder may log holds no secret a server or a store echoed', () => {
  it('a 401 body quoting the key: the result, the context, the snapshot and the error event', async () => {
    const server = await serve({
      turns: [{ error: { status: 401, message: `Incorrect API key provided: ${API_KEY} (${PASSWORD})` } }],
    });
    const agent = createAgent({ baseURL: server.url, apiKey: API_KEY, secrets: [PASSWORD] });
    const events: AgentEvent[] = [];
    agent.on('error', (e) => events.push(e));
    try {
      const result = await agent.send('hi');
      // The server did say it (the test would prove nothing otherwise)...
      expect(result.terminateReason).toBe('error');
      expect(result.error).toContain('Incorrect API key provided');
      expect(events).toHaveLength(1);
      // ...but no field an embedder logs repeats it.
      const logged = {
        result: JSON.stringify(result),
        context: JSON.stringify(agent.context.error),
        snapshot: JSON.stringify(agent.getPersistedSnapshot()),
        events: JSON.stringify(events),
      };
      for (const [where, text] of Object.entries(logged)) {
        expect(text.includes(API_KEY), `${where} holds the key`).toBe(false);
        expect(text.includes(PASSWORD), `${where} holds the password`).toBe(false);
      }
      expect(result.error).toContain(REDACTED);
      expect(agent.context.error?.code).toBe('invalid_api_key');
    } finally {
      agent.stop();
    }
  });

  it('an initialize that fails quoting a secret: the error send() throws', async () => {
    const server = await serve({ turns: [{ content: 'unused' }] });
    const agent = createAgent({
      baseURL: server.url,
      apiKey: API_KEY,
      secrets: [PASSWORD],
      initialize: () => Promise.reject(new Error(`cannot log in as admin/${PASSWORD} with ${API_KEY}`)),
    });
    try {
      await agent.ready();
      const thrown = await agent.send('hi').catch((error: Error) => error);
      expect(thrown).toBeInstanceOf(Error);
      expect((thrown as Error).message).toContain('cannot log in as admin/');
      expect((thrown as Error).message).not.toContain(PASSWORD);
      expect((thrown as Error).message).not.toContain(API_KEY);
    } finally {
      agent.stop();
    }
  });

  it('a store that fails to load, quoting a secret: ready() and send() reject, agent.actor throws, redacted', async () => {
    const store = new (class extends ForwardingStore {
      override load(): never {
        throw new Error(`connection to postgres://app:${PASSWORD}@db refused`);
      }
    })(new MemorySessionStore());
    const agent = createAgent({ apiKey: API_KEY, secrets: [PASSWORD], store, session: 's1' });
    const rejected = await agent.ready().catch((error: Error) => error);
    expect(String(rejected)).toContain('postgres://app:');
    expect(String(rejected)).not.toContain(PASSWORD);
    await expect(agent.send('hi')).rejects.not.toThrow(PASSWORD);
    const thrown = (() => {
      try {
        return agent.actor;
      } catch (error) {
        return error as Error;
      }
    })() as Error;
    expect(thrown.message).toContain('postgres://app:');
    expect(thrown.message).not.toContain(PASSWORD);
    expect(String((thrown.cause as Error).message)).not.toContain(PASSWORD);
    agent.stop();
  });
});
