import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type AgentCard, SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { afterEach } from 'vitest';
import { FileSessionStore } from '../../src/index.js';
import { type A2aServerOptions, type StartedA2aServer, startA2aServer } from '../../src/server/a2a/index.js';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../../src/testing/index.js';

const open: { servers: StartedA2aServer[]; models: ScriptedServer[]; dirs: string[] } = {
  servers: [],
  models: [],
  dirs: [],
};

afterEach(async () => {
  await Promise.all(open.servers.splice(0).map((s) => s.close()));
  await Promise.all(open.models.splice(0).map((s) => s.close()));
  await Promise.all(open.dirs.splice(0).map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

/** A scripted model, a file store in a temp folder and an A2A server on 127.0.0.1; all closed after the test. */
export async function a2aServer(
  scenario: Scenario,
  options: Partial<A2aServerOptions> & { dir?: string } = {},
): Promise<{
  url: string;
  server: StartedA2aServer;
  model: ScriptedServer;
  store: FileSessionStore;
  dir: string;
}> {
  const model = await startScriptedServer({ scenario });
  open.models.push(model);
  const dir = options.dir ?? (await mkdtemp(path.join(tmpdir(), 'a2a-')));
  if (!options.dir) open.dirs.push(dir);
  const store = new FileSessionStore({ dir });
  const server = await startA2aServer({
    agent: () => ({ instructions: 'You help.', loopControlTools: false }),
    store,
    runtime: { baseURL: model.url, apiKey: 'test-key' },
    ...options,
  });
  open.servers.push(server);
  return { url: server.url, server, model, store, dir };
}

/** A temp folder removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'a2a-'));
  open.dirs.push(dir);
  return dir;
}

export type Version = '1.0' | '0.3';

/** The SDK's own client for `url`, speaking `version` (0.3 through the SDK's compat transport). */
export async function sdkClient(url: string, version: Version, token?: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const resolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } });
  const card = (await resolver.resolve(url)) as AgentCard;
  const only = {
    ...card,
    supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === version),
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
  });
  return factory.createFromAgentCard(only);
}

/** A send request with a text message (and optional context and task ids, data parts). */
export function textMessage(
  text: string,
  ids: { contextId?: string; taskId?: string } = {},
  data: Record<string, unknown>[] = [],
  configuration?: Record<string, unknown>,
): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: `m-${Math.random().toString(16).slice(2)}`,
      role: 'ROLE_USER',
      parts: [...(text ? [{ text }] : []), ...data.map((d) => ({ data: d }))],
      ...ids,
    },
    ...(configuration ? { configuration } : {}),
  });
}

/** The events of a stream, read to its end. */
export async function drain(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** A stream event's kind and, for a status, its state name. */
export function kindOf(event: StreamResponse): string {
  const payload = event.payload;
  if (!payload) return 'none';
  if (payload.$case === 'statusUpdate') return `status:${payload.value.status?.state}`;
  return payload.$case;
}
