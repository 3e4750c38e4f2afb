import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HttpAgent, type Message } from '@ag-ui/client';
import { expect } from 'vitest';
import { z } from 'zod';
import { defineTool, type FileSessionStore } from '../../src/index.js';
import {
  type AgentServerOptions,
  type StartedAgentServer,
  startAgentServer,
} from '../../src/server/index.js';
import type { Scenario, ScriptedServer } from '../../src/testing/index.js';
import { deferred } from './harness.js';
import { closedAfterTest, serverBase } from './server-fixture.js';

/**
 * A scripted model, a file store in a temp folder (or in `dir`) and an AG-UI server on 127.0.0.1; all
 * closed after the test.
 */
export async function agUiServer(
  scenario: Scenario,
  options: Partial<AgentServerOptions> & { dir?: string } = {},
): Promise<{
  url: string;
  runs: string;
  server: StartedAgentServer;
  model: ScriptedServer;
  store: FileSessionStore;
  dir: string;
}> {
  const base = await serverBase(scenario, 'agui-', options.dir);
  const { model, store, dir } = base;
  const server = closedAfterTest(await startAgentServer({ ...base.options, ...options }));
  return { url: server.url, runs: `${server.url}/agents/default/runs`, server, model, store, dir };
}

/**
 * An AG-UI server ({@link agUiServer}) whose model calls the tool `slow` once, then answers `answer`:
 * `slow` notes its start (`started`) and runs until its call is stopped (result "stopped") or the test
 * releases it (`release`, result "finished"). For tests that cancel a run while it is in a tool.
 */
export async function slowRunServer(
  answer = 'never',
  options: Partial<AgentServerOptions> = {},
): Promise<Awaited<ReturnType<typeof agUiServer>> & { started: Promise<void>; release: () => void }> {
  const started = deferred();
  const released = deferred();
  const slow = defineTool({
    name: 'slow',
    description: 'waits until stopped',
    parameters: z.object({}),
    execute: (_args, ctx) =>
      new Promise((resolve) => {
        started.resolve();
        ctx.signal.addEventListener('abort', () => resolve('stopped'));
        void released.promise.then(() => resolve('finished'));
      }),
  });
  const server = await agUiServer(
    { turns: [{ toolCalls: [{ name: 'slow', arguments: {} }] }, { content: answer }] },
    { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [slow] }), ...options },
  );
  return { ...server, started: started.promise, release: () => released.resolve() };
}

/** An event as tests read it. */
// biome-ignore lint/suspicious/noExplicitAny: tests read event-specific fields
export type AnyEvent = Record<string, any>;

/** Runs one AG-UI run through the real `HttpAgent` (its event verifier is part of every run) and records the events. */
export async function runThrough(
  agent: HttpAgent,
  parameters: Parameters<HttpAgent['runAgent']>[0] = {},
): Promise<{ events: AnyEvent[]; error?: unknown }> {
  const events: AnyEvent[] = [];
  try {
    await agent.runAgent(parameters, { onEvent: ({ event }) => void events.push(event) });
    return { events };
  } catch (error) {
    return { events, error };
  }
}

/** A client on `runs` for `threadId`, with a user message added. */
export function clientWith(
  runs: string,
  threadId: string,
  text?: string,
  headers?: Record<string, string>,
): HttpAgent {
  const agent = new HttpAgent({ url: runs, threadId, ...(headers ? { headers } : {}) });
  if (text !== undefined) agent.addMessage(userMessage(text));
  return agent;
}

let counter = 0;
/** A user message with a client-made id. */
export function userMessage(text: string): Message {
  counter += 1;
  return { id: `user-${counter}`, role: 'user', content: text };
}

/**
 * An event sequence as a golden fixture compares it: types, with the fields that are stable run to
 * run. Steps and state come from the bus and messages from the transcript, two sources whose
 * interleaving depends on the disk; they are left out (the client's verifier checks that steps pair).
 */
export function shape(events: readonly AnyEvent[]): string[] {
  const kept = events.filter((e) => !/^(STEP_|STATE_)/.test(String(e.type)));
  return kept.map((event) => {
    const e = event as Record<string, unknown>;
    const parts = [String(e.type)];
    for (const key of [
      'stepName',
      'messageId',
      'toolCallId',
      'toolCallName',
      'delta',
      'content',
      'code',
      'result',
    ]) {
      if (e[key] !== undefined && !(key === 'delta' && typeof e[key] !== 'string'))
        parts.push(`${key}=${JSON.stringify(e[key])}`);
    }
    if (e.outcome && typeof e.outcome === 'object')
      parts.push(`outcome=${(e.outcome as { type: string }).type}`);
    return parts.join(' ');
  });
}

/** A raw run POST (for inputs the real client would not send): the status and, for a stream, its events. */
export async function postRun(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; events: Record<string, unknown>[]; text: string; ids: string[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const events: Record<string, unknown>[] = [];
  const ids: string[] = [];
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    for (const block of text.split('\n\n')) {
      const id = /^id: (.*)$/m.exec(block);
      const data = /^data: (.*)$/m.exec(block);
      if (id) ids.push(id[1]!);
      if (data) events.push(JSON.parse(data[1]!));
    }
  }
  return { status: res.status, events, text, ids };
}

/** Compares `actual` with the golden file `test/fixtures/ag-ui/<name>.json` (`GOLDEN_UPDATE=1` writes it). */
export function expectGolden(name: string, actual: string[]): void {
  const file = path.join(import.meta.dirname, '..', 'fixtures', 'ag-ui', `${name}.json`);
  if (process.env.GOLDEN_UPDATE === '1') writeFileSync(file, `${JSON.stringify(actual, null, 2)}\n`);
  expect(actual).toEqual(JSON.parse(readFileSync(file, 'utf8')));
}
