import path from 'node:path';
import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aServer, drain, kindOf, sdkClient, tempDir, textMessage } from './support/a2a-server.js';
import { type OAuthControl, startOAuthServer } from './support/mcp-remote-servers.mjs';

/**
 * A2A `auth-required`: the agent's remote MCP server (a real Streamable HTTP server with the MCP
 * SDK's OAuth) needs sign-in, so the task rests `auth-required` naming the server and the sign-in
 * URL; the test plays the browser, and the next message on the task runs the task's first message
 * with the server's tools. Without the sign-in, the next message fails the task saying why.
 */
let oauth: { url: string; control: OAuthControl; stop(): Promise<void> };

beforeAll(async () => {
  oauth = await startOAuthServer();
});
afterAll(async () => {
  await oauth?.stop();
});

async function signingServer() {
  const auth = path.join(await tempDir(), 'auth');
  return a2aServer(
    {
      turns: [
        { toolCalls: [{ name: 'remote__echo', arguments: { text: 'from A2A' } }] },
        { content: 'Echoed remotely.' },
      ],
    },
    {
      agent: () => ({
        instructions: 'You help.',
        loopControlTools: false,
        mcpServers: { remote: { url: oauth.url, approval: 'never' } },
        mcpAuth: { dir: auth },
      }),
    },
  );
}

/** The status message of a status event: its text and data parts. */
function statusParts(event: StreamResponse | undefined): {
  texts: string[];
  data: Record<string, unknown>[];
} {
  const parts =
    event?.payload?.$case === 'statusUpdate' ? (event.payload.value.status?.message?.parts ?? []) : [];
  return {
    texts: parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])),
    data: parts.flatMap((p) =>
      p.content?.$case === 'data' ? [p.content.value as Record<string, unknown>] : [],
    ),
  };
}

describe('A2A auth-required for an MCP server that needs sign-in', () => {
  it('rests auth-required with the URL, and goes on with the first message once signed in (1.0)', async () => {
    const { url, model } = await signingServer();
    const client = await sdkClient(url, '1.0');
    const events = await drain(client.sendMessageStream(textMessage('echo it remotely')));
    expect(events.map(kindOf)).toEqual(['task', `status:${TaskState.TASK_STATE_AUTH_REQUIRED}`]);
    const taskId = (events[0]!.payload as { value: { id: string } }).value.id;
    const { texts, data } = statusParts(events.at(-1));
    expect(data).toEqual([{ type: 'mcp_sign_in', server: 'remote', url: expect.any(String) }]);
    const signInUrl = data[0]!.url as string;
    expect(texts[0]).toContain(`MCP server "remote" needs you to sign in: open ${signInUrl}`);
    expect(model.requests).toHaveLength(0); // nothing was sent to the model yet
    const got = await client.getTask({ tenant: '', id: taskId });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);

    // The browser: the authorization page consents and sends it back to the server's loopback listener.
    const consent = await fetch(signInUrl, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    expect((await fetch(consent.headers.get('location')!)).status).toBe(200);

    const done = await client.sendMessage(textMessage('signed in', { taskId }));
    const task = done as { id: string; status?: { state: TaskState }; artifacts: { parts: unknown[] }[] };
    expect(task.id).toBe(taskId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(JSON.stringify(task.artifacts)).toContain('Echoed remotely.');
    // The model got the task's first message, and the remote tool ran with the new token.
    expect(JSON.stringify(model.requests[0])).toContain('echo it remotely');
    expect(JSON.stringify(model.requests[1])).toContain('echo: from A2A');
    for (const token of oauth.control.issued) expect(JSON.stringify(task)).not.toContain(token);
  });

  it('fails the task when the next message comes before the sign-in, and cancels one resting (0.3)', async () => {
    const { url, model } = await signingServer();
    const client = await sdkClient(url, '0.3');
    const first = await client.sendMessage(textMessage('echo it remotely'));
    const taskId = (first as { id: string }).id;
    expect((first as { status?: { state: TaskState } }).status?.state).toBe(
      TaskState.TASK_STATE_AUTH_REQUIRED,
    );
    const events = await drain(client.sendMessageStream(textMessage('go on', { taskId })));
    expect(events.map(kindOf).at(-1)).toBe(`status:${TaskState.TASK_STATE_FAILED}`);
    expect(statusParts(events.at(-1)).texts[0]).toMatch(/MCP server "remote" is still not signed in/);
    expect(model.requests).toHaveLength(0);

    const second = await client.sendMessage(textMessage('echo again'));
    const secondId = (second as { id: string }).id;
    expect((second as { status?: { state: TaskState } }).status?.state).toBe(
      TaskState.TASK_STATE_AUTH_REQUIRED,
    );
    const canceled = await client.cancelTask({ tenant: '', id: secondId, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(model.requests).toHaveLength(0);
  });
});
