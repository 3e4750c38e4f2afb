import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentEvent,
  createAgent,
  createRedactor,
  defineTool,
  FileSessionStore,
  REDACTED,
} from '../src/index.js';
import { startScriptedServer } from '../src/testing/index.js';

/** Issue 15: secrets used as object keys (tool arguments `{ "<key>": 1 }`). See docs/security.md. */
const API_KEY = 'sk-proj-Zq4v9TcXw2LmN8bYr6HsK1fJ3dGpQ0aE';
const OTHER_KEY = 'sk-Hq81LmZx0Pw7TbR3nVc5YdK2sJ9fGe4A';

describe('secrets used as object keys', () => {
  const redactor = createRedactor({ knownSecrets: [API_KEY, OTHER_KEY], env: false });

  it('are replaced, nested too, and the copy is a plain object', () => {
    const value = { args: { [API_KEY]: 1, path: 'a.md' }, list: [{ [`x ${OTHER_KEY}`]: 'v' }] };
    const out = redactor.redactValue(value);
    expect(JSON.stringify(out)).not.toContain(API_KEY);
    expect(JSON.stringify(out)).not.toContain(OTHER_KEY);
    expect(out.args).toEqual({ [REDACTED]: 1, path: 'a.md' });
    expect(out.list[0]).toEqual({ [`x ${REDACTED}`]: 'v' });
    expect(Object.getPrototypeOf(out.args)).toBe(Object.prototype);
    // The original is untouched.
    expect(Object.keys(value.args)).toEqual([API_KEY, 'path']);
  });

  it('keep every value when two keys redact to the same text: later ones get #2, #3 (plain keys keep their names)', () => {
    const out = redactor.redactValue({
      [API_KEY]: 1,
      [REDACTED]: 'plain',
      [OTHER_KEY]: 2,
      [`${REDACTED}#2`]: 3,
    });
    expect(out).toEqual({
      [`${REDACTED}#3`]: 1,
      [REDACTED]: 'plain',
      [`${REDACTED}#4`]: 2,
      [`${REDACTED}#2`]: 3,
    });
    expect(Object.values(out)).toEqual([1, 'plain', 2, 3]);
  });

  it('a "__proto__" key next to a secret stays an own key (the copy gets no prototype from it)', () => {
    const value = JSON.parse(`{"__proto__": {"polluted": true}, "${API_KEY}": 1}`) as Record<string, unknown>;
    const out = redactor.redactValue(value);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', REDACTED]);
    expect((out as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('objects with clean keys and values are returned as they are', () => {
    const value = { a: { b: ['c'] } };
    expect(redactor.redactValue(value)).toBe(value);
  });
});

describe('a tool call whose argument key is the API key', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  it('reaches no event, audit record or transcript entry with the key', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-redact-keys-'));
    dirs.push(dir);
    const server = await startScriptedServer({
      scenario: {
        turns: [{ toolCalls: [{ name: 'store', arguments: { [API_KEY]: 1 } }] }, { content: 'Stored.' }],
      },
    });
    const store = defineTool({
      name: 'store',
      description: 'stores numbers under names',
      parameters: z.object({}).catchall(z.number()),
      execute: (args) => ({ stored: args }),
    });
    const auditFile = path.join(dir, 'audit.jsonl');
    const agent = createAgent({
      baseURL: server.url,
      apiKey: API_KEY,
      tools: [store],
      loopControlTools: false,
      auditLog: auditFile,
      store: new FileSessionStore({ dir: path.join(dir, 'sessions') }),
      session: 'keys-1',
    });
    const events: AgentEvent[] = [];
    agent.on('*', (e) => events.push(e));
    try {
      expect((await agent.send('store it')).terminateReason).toBe('completed');
      await agent.flush();
    } finally {
      agent.stop();
      await server.close();
    }
    // The key did travel as a key (the test would prove nothing otherwise)...
    expect(JSON.stringify(server.requests)).toContain(API_KEY);
    const start = events.find((e) => e.type === 'tool_call_start') as AgentEvent<'tool_call_start'>;
    expect(start.args).toEqual({ [REDACTED]: 1 });
    const outputs = {
      events: JSON.stringify(events),
      audit: await readFile(auditFile, 'utf8'),
      transcript: await readFile(path.join(dir, 'sessions', 'keys-1', 'transcript.jsonl'), 'utf8'),
    };
    for (const [where, text] of Object.entries(outputs)) {
      expect(text.includes(API_KEY), `${where} holds the key`).toBe(false);
      expect(text, where).toContain(REDACTED);
    }
  });
});
