import { type AgentCard, SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import type { FileSessionStore } from '../../src/index.js';
import { type A2aServerOptions, type StartedA2aServer, startA2aServer } from '../../src/server/a2a/index.js';
import type { Scenario, ScriptedServer } from '../../src/testing/index.js';
import { testDir } from './harness.js';
import { closedAfterTest, serverBase } from './server-fixture.js';

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
  const base = await serverBase(scenario, 'a2a-', options.dir);
  const { model, store, dir } = base;
  const server = closedAfterTest(await startA2aServer({ ...base.options, ...options }));
  return { url: server.url, server, model, store, dir };
}

/** A temp folder removed after the test. */
export function tempDir(): Promise<string> {
  return testDir('a2a-');
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
