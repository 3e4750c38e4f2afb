import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionClient, FileSessionStore, type SessionStore } from '../src/index.js';
import { type AskOutput, type StartedMcpHttpServer, startMcpHttpServer } from '../src/server/mcp/index.js';
import type { SessionInboxStore } from '../src/session/session-inbox.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { routedModel } from './support/mcp-agent-server.js';
import { dropSchema, freshSchema, postgresStore } from './support/postgres.js';
import { waitUntil } from './support/wait-until.js';

// An `ask_<agent>` turn on a named session ends Interrupted when another process posts an interrupt to
// the session's inbox (`agentloop send --session <id> --interrupt`: `createSessionClient().interrupt`
// on a store of its own over the same folder or schema), as AG-UI runs and A2A tasks do.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

/**
 * The `helper` agent served over Streamable HTTP on `store` (inbox looks every 20 ms) against a scripted
 * model, and an MCP client's `ask_helper` call; all closed after the test.
 */
async function serveHelper(store: SessionStore) {
  const model: ScriptedServer = await startScriptedServer({ respond: routedModel('write_note', {}) });
  cleanups.push(() => model.close());
  const server: StartedMcpHttpServer = await startMcpHttpServer({
    name: 'helper',
    agent: () => ({ instructions: 'You help.', loopControlTools: false }),
    store,
    runtime: { baseURL: model.url, apiKey: 'test-key' },
    pollMs: 20,
  });
  cleanups.push(() => server.close());
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  cleanups.push(() => client.close().catch(() => {}));
  const ask = async (args: Record<string, unknown>) =>
    (await client.callTool({ name: 'ask_helper', arguments: args })) as CallToolResult;
  return { model, ask };
}

type Stores = { carrier: SessionStore & SessionInboxStore; other: SessionStore & SessionInboxStore };

const storeKinds: [string, () => Promise<Stores>][] = [
  [
    'a file store',
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'mcp-interrupt-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
      return { carrier: new FileSessionStore({ dir }), other: new FileSessionStore({ dir }) };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const schema = freshSchema('mcp_interrupt');
      const carrier = postgresStore(schema);
      const other = postgresStore(schema);
      cleanups.push(async () => {
        await Promise.all([carrier.close(), other.close()]);
        await dropSchema(schema);
      });
      return { carrier, other };
    },
  ],
];

describe.each(storeKinds)(
  'an interrupt posted to the inbox of a session an ask_ turn runs on, %s',
  (_, make) => {
    it('ends the turn Interrupted (the result says so); one posted while no turn runs does not cut the next', async () => {
      const { carrier, other } = await make();
      const { model, ask } = await serveHelper(carrier);
      const outputOf = (result: CallToolResult) => result.structuredContent as AskOutput;
      const textOf = (result: CallToolResult) =>
        result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

      const { session } = outputOf(await ask({ message: 'hello' }));
      const sender = createSessionClient({ store: other });
      await sender.interrupt(session); // no turn runs: left over
      expect(outputOf(await ask({ message: 'again', session }))).toMatchObject({
        state: 'Completed',
        response: 'echo: again',
      });

      const call = ask({ message: 'please hang', session });
      await waitUntil(() => model.requestCount === 3);
      await sender.interrupt(session);
      const cut = await call;
      expect(cut.isError).toBe(true);
      expect(textOf(cut)).toMatch(
        /^ask_helper: the turn ended interrupted: interrupted through the session inbox\n/,
      );
      expect(outputOf(cut)).toMatchObject({
        session,
        state: 'Interrupted',
        success: false,
        terminateReason: 'interrupted',
      });
      expect((await carrier.load(session))?.state).toBe('Interrupted');
      expect(await carrier.readInbox(session)).toEqual([]);

      const next = await ask({ message: 'still there?', session });
      expect(outputOf(next)).toMatchObject({ state: 'Completed', response: 'echo: still there?' });
    });
  },
);

describe('an ask_ turn whose first look at the inbox is slow (a busy pool)', () => {
  it('starts only once that look has set aside left-over interrupts, so one posted during the turn still ends it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mcp-interrupt-slow-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
    // The carrier's inbox reads come 300 ms late: before the fix the turn reached the model first, and
    // an interrupt posted then was read by the first look and taken for a left-over one.
    class SlowInboxReads extends FileSessionStore {
      override async readInbox(sessionId: string) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        return super.readInbox(sessionId);
      }
    }
    const { model, ask } = await serveHelper(new SlowInboxReads({ dir }));
    const { session } = (await ask({ message: 'hello' })).structuredContent as AskOutput;

    const call = ask({ message: 'please hang', session });
    await waitUntil(() => model.requestCount === 2);
    await createSessionClient({ store: new FileSessionStore({ dir }) }).interrupt(session);
    const cut = await call;
    expect(cut.structuredContent).toMatchObject({
      session,
      state: 'Interrupted',
      terminateReason: 'interrupted',
    });
  }, 15_000);
});
