import type { Client as A2aClient } from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, FileSessionStore, MemorySessionStore, type SessionStore } from '../src/index.js';
import { startMcpHttpServer } from '../src/server/mcp/index.js';
import { watchInbox } from '../src/server/run-cancel-inbox.js';
import { hasInbox } from '../src/session/session-inbox.js';
import type { TranscriptEntryInput } from '../src/session/transcript.js';
import type { Scenario, ScriptedTurn } from '../src/testing/index.js';
import { config, push, storePairs } from './support/a2a-push.js';
import { a2aServer, sdkClient, tempDir, textMessage } from './support/a2a-server.js';
import { agUiServer, clientWith, runThrough, userMessage } from './support/ag-ui-server.js';
import { deferred, serve } from './support/harness.js';
import { closedAfterTest } from './support/server-fixture.js';
import { waitUntil } from './support/wait-until.js';
import { gateScenario, gateTool } from './support/waiting-tool.js';

// Every server run that carries a session writes the entries other processes post to its inbox (an
// A2A push config set on a server that does not carry the session), not only A2A turns: an AG-UI run
// held in a tool, and an MCP `ask_` turn held on an approval question, each on a store it shares with
// an A2A server that sets a push config for the session's task. Without the carrier writing it, the
// set waits 10 s and answers -32004.

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
});

/**
 * An A2A server on the setter's store (on `dir`) and a task it ran to the end there: the context
 * (session) another protocol carries next, and the task a push config is set for.
 */
async function a2aTask(dir: string, setter: SessionStore) {
  const a2a = await a2aServer({ turns: [{ content: 'Four.' }] }, { dir, store: setter, push, pollMs: 20 });
  const client = await sdkClient(a2a.url, '1.0');
  const task = await client.sendMessage(textMessage('2 + 2?'));
  if (!('status' in task)) throw new Error('expected a task');
  return { client, taskId: task.id, contextId: task.contextId };
}

/** A scenario going on after the task's turn (the scripted model counts the turns the session holds). */
const afterTheTask = (turns: ScriptedTurn[]): Scenario => ({ turns: [{ content: 'Four.' }, ...turns] });

/**
 * Sets a push config for `taskId` through `client` (a server that does not carry the session) and
 * checks it was answered, is read back and listed, and that the setter wrote nothing to the session.
 */
async function setWhileCarried(
  client: A2aClient,
  setter: SessionStore & { appendedTo: string[] },
  taskId: string,
  contextId: string,
) {
  const before = setter.appendedTo.length;
  const url = 'http://127.0.0.1:9/hook';
  const set = await client.createTaskPushNotificationConfig(config(taskId, url));
  expect(set.url).toBe(url);
  expect((await client.getTaskPushNotificationConfig({ tenant: '', taskId, id: set.id })).url).toBe(url);
  const { configs } = await client.listTaskPushNotificationConfig({
    tenant: '',
    taskId,
    pageSize: 0,
    pageToken: '',
  });
  expect(configs.map((c) => c.url)).toEqual([url]);
  // The carrier wrote it: the setter appended nothing to the session meanwhile.
  expect(setter.appendedTo.slice(before)).not.toContain(contextId);
}

/** The session's `a2a_push` entries, and its inbox (both once the carrier has let it go). */
async function afterwards(store: SessionStore, contextId: string) {
  if (!hasInbox(store)) throw new Error('a store with inboxes');
  const { entries } = await store.readTranscript(contextId);
  return {
    pushes: entries.filter((e) => e.kind === 'event' && e.event === 'a2a_push'),
    inbox: await store.readInbox(contextId),
  };
}

describe.each(storePairs)(
  'an A2A push config set while another protocol carries the session, on %s',
  (_name, stores) => {
    it('is written by an AG-UI run held in a tool', async () => {
      const dir = await tempDir();
      const { carrier, setter } = stores(dir);
      const { client, taskId, contextId } = await a2aTask(dir, setter);
      const { tool, started, release } = gateTool();
      const agUi = await agUiServer(afterTheTask(gateScenario.turns), {
        agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
        dir,
        pollMs: 20,
        ...(carrier ? { store: carrier } : {}),
      });
      const run = clientWith(agUi.runs, contextId);
      run.addMessage(userMessage('2 + 2?'));
      run.addMessage(userMessage('go'));
      const ran = runThrough(run);
      await started.promise;
      await setWhileCarried(client, setter, taskId, contextId);
      release.resolve('waited');
      const { events, error } = await ran;
      expect(error).toBeUndefined();
      expect(events.at(-1)?.type).toBe('RUN_FINISHED');
      const { pushes, inbox } = await afterwards(carrier ?? agUi.store, contextId);
      expect(pushes).toHaveLength(1);
      expect(inbox).toEqual([]);
    });

    it('is written by an MCP ask_ turn waiting for its approval question to be answered', async () => {
      const dir = await tempDir();
      const { carrier, setter } = stores(dir);
      const { client, taskId, contextId } = await a2aTask(dir, setter);
      const model = await serve(
        afterTheTask([
          { toolCalls: [{ name: 'write_note', arguments: { text: 'hi' } }] },
          { content: 'Noted.' },
        ]),
      );
      const writeNote = defineTool({
        name: 'write_note',
        description: 'writes a note',
        parameters: z.object({ text: z.string() }),
        needsApproval: true,
        execute: ({ text }) => `wrote ${text}`,
      });
      const store = carrier ?? new FileSessionStore({ dir });
      const mcp = closedAfterTest(
        await startMcpHttpServer({
          name: 'helper',
          agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [writeNote] }),
          store,
          runtime: { baseURL: model.url, apiKey: 'test-key' },
          pollMs: 20,
        }),
      );
      const asked = deferred();
      const answer = deferred<{ action: 'accept'; content: { decision: 'approve' } }>();
      const mcpClient = new Client(
        { name: 'test-client', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } } },
      );
      mcpClient.setRequestHandler(ElicitRequestSchema, () => {
        asked.resolve();
        return answer.promise;
      });
      await mcpClient.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
      clients.push(mcpClient);
      const called = mcpClient.callTool({
        name: 'ask_helper',
        arguments: { message: 'note it', session: contextId },
      }) as Promise<CallToolResult>;
      await asked.promise;
      await setWhileCarried(client, setter, taskId, contextId);
      answer.resolve({ action: 'accept', content: { decision: 'approve' } });
      const result = await called;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ state: 'Completed' });
      const { pushes, inbox } = await afterwards(store, contextId);
      expect(pushes).toHaveLength(1);
      expect(inbox).toEqual([]);
    });
  },
);

describe('watchInbox', () => {
  it('without `cancel` writes the event items and leaves interrupts for the carrier that hears them; its stop waits for the write under way', async () => {
    const store = new MemorySessionStore();
    await store.postInbox('s', { kind: 'interrupt', reason: 'stop' });
    await store.postInbox('s', { kind: 'event', event: 'a2a_push', data: { taskId: 't' } });
    const writing = deferred();
    const wrote = deferred();
    const written: TranscriptEntryInput[] = [];
    const { stop } = watchInbox(store, 's', {
      pollMs: 10,
      write: async (entries) => {
        writing.resolve();
        await wrote.promise;
        written.push(...entries);
      },
    });
    await writing.promise;
    const stopped = stop();
    wrote.resolve();
    await stopped;
    expect(written).toEqual([{ kind: 'event', event: 'a2a_push', data: { taskId: 't' } }]);
    expect((await store.readInbox('s')).map((item) => item.kind)).toEqual(['interrupt']);
  });

  it('with `cancel`, takes what its first look reads for left over and hears an interrupt posted after `ready`, however slow that look is', async () => {
    const firstRead = deferred();
    const reads: number[] = [];
    // A real store whose first inbox read is held (a busy connection pool) until the test lets it go.
    class SlowFirstRead extends MemorySessionStore {
      override async readInbox(sessionId: string) {
        reads.push(reads.length);
        if (reads.length === 1) await firstRead.promise;
        return super.readInbox(sessionId);
      }
    }
    const store = new SlowFirstRead();
    await store.postInbox('s', { kind: 'interrupt', reason: 'from an earlier turn' });
    const heard: string[] = [];
    const watch = watchInbox(store, 's', {
      pollMs: 5,
      write: async () => {},
      cancel: { runId: 'run-1', onCancel: (reason) => heard.push(reason) },
    });
    let ready = false;
    void watch.ready.then(() => (ready = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(ready).toBe(false); // the run may not start yet
    firstRead.resolve();
    await watch.ready;
    expect(heard).toEqual([]);
    await store.postInbox('s', { kind: 'interrupt', reason: 'stop this turn' });
    await waitUntil(() => heard.length > 0);
    await watch.stop();
    expect(heard).toEqual(['stop this turn']);
    expect(await store.readInbox('s')).toEqual([]);
  });
});
