import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe } from 'vitest';
import type { Agent, AgentEvent, AgentOptions } from '../../src/index.js';
import { createAgent } from '../../src/index.js';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../../src/testing/index.js';

const open: { servers: ScriptedServer[]; agents: Agent<unknown>[]; dirs: string[] } = {
  servers: [],
  agents: [],
  dirs: [],
};

afterEach(async () => {
  for (const agent of open.agents.splice(0)) agent.stop();
  await Promise.all(open.servers.splice(0).map((s) => s.close()));
  await Promise.all(open.dirs.splice(0).map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

/** The model APIs an agent speaks; the scripted server answers both from one scenario. */
export const WIRES = ['chat-completions', 'responses'] as const;
export type Wire = (typeof WIRES)[number];
let wire: Wire | undefined;

/**
 * Runs the tests `body` declares once per wire (`describe.each(WIRES)`): agents made by `agentAt` and
 * `agentOn` in them speak that wire unless their options say otherwise.
 */
export function eachWire(body: (api: Wire) => void): void {
  describe.each(WIRES)('over %s', (api) => {
    beforeEach(() => {
      wire = api;
    });
    afterEach(() => {
      wire = undefined;
    });
    body(api);
  });
}

/** Starts a scripted server; it is closed after the test. */
export async function serve(scenario: Scenario): Promise<ScriptedServer> {
  const server = await startScriptedServer({ scenario });
  open.servers.push(server);
  return server;
}

/** An agent on `server` through the real SDK; it is stopped after the test. */
export function agentAt(
  server: ScriptedServer,
  options: Omit<AgentOptions, 'baseURL' | 'apiKey'> = {},
): Agent {
  const agent = createAgent({
    baseURL: server.url,
    apiKey: 'test-key',
    ...(wire ? { api: wire } : {}),
    ...options,
  }) as Agent<unknown>;
  open.agents.push(agent);
  return agent;
}

/** A fresh temp folder; it is removed after the test, once the test's agents have stopped. */
export async function testDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  open.dirs.push(dir);
  return dir;
}

/** Starts a scripted server and an agent on it through the real SDK; both are closed after the test. */
export async function agentOn(
  scenario: Scenario,
  options: Omit<AgentOptions, 'baseURL' | 'apiKey'> = {},
): Promise<{ agent: Agent<unknown>; server: ScriptedServer; events: AgentEvent[] }> {
  const server = await serve(scenario);
  const agent = agentAt(server, options);
  const events: AgentEvent[] = [];
  agent.on('*', (e) => events.push(e));
  return { agent, server, events };
}

/** A promise with the functions that settle it, for tools and effects whose completion a test controls. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves with the first event of `type` (already seen or future). */
export function nextEvent<T extends AgentEvent['type']>(
  agent: Agent<unknown>,
  type: T,
): Promise<AgentEvent<T>> {
  return new Promise((resolve) => {
    const off = agent.on(type, (e) => {
      off();
      resolve(e as AgentEvent<T>);
    });
  });
}

/** Checks the append-only conversation invariant: every tool call answered once, in order, before the next assistant message. */
export function assertToolCallsAnswered(messages: readonly import('../../src/index.js').Message[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    const ids = m.tool_calls.map((c) => c.id);
    const answers: string[] = [];
    for (let j = i + 1; j < messages.length && messages[j]!.role !== 'assistant'; j++) {
      const n = messages[j]!;
      if (n.role === 'tool') answers.push(n.tool_call_id);
    }
    if ([...answers].sort().join() !== [...ids].sort().join()) {
      throw new Error(`tool calls ${ids.join(', ')} at message ${i} were answered by ${answers.join(', ')}`);
    }
  }
}
