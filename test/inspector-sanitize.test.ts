import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createMachine } from 'xstate';
import { z } from 'zod';
import { agentMachine, createAgent, defineTool } from '../src/index.js';
import { statelyInspection } from '../src/inspector/index.js';
import { startInspectorServer } from '../src/inspector/inspector-server.js';
import { activeNodeIds, machineChart } from '../src/inspector/machine-graph.js';
import { createSanitizer, cutString, REDACTED } from '../src/inspector/sanitize.js';
import { type Scenario, startScriptedServer } from '../src/testing/index.js';
import { socketUrl, upgradeStatus } from './support/inspector-page.js';

const API_KEY = 'sk-test-APIKEY-0123456789abcdef';
const SECRET = 'hunter2-configured-secret';
const LONG = 'x'.repeat(6000);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A turn that puts the API key and the secret everywhere it can: user text, tool arguments, tool results, the answer. */
const leakyScenario: Scenario = {
  turns: [
    {
      content: `I see ${SECRET}.`,
      toolCalls: [{ name: 'echo', arguments: { text: `key ${API_KEY} and ${SECRET}` } }],
    },
    { content: `Done: ${API_KEY} ${SECRET} ${'y'.repeat(3000)}`, chunkSize: 5 },
  ],
};

const echo = defineTool({
  name: 'echo',
  description: 'Echoes text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => `${text} ${LONG} ${API_KEY}`,
});

async function leakyRun(inspect: Parameters<typeof createAgent>[0]['inspect']) {
  const server = await startScriptedServer({ scenario: leakyScenario });
  cleanups.push(() => server.close());
  const agent = createAgent({
    baseURL: server.url,
    apiKey: API_KEY,
    secrets: [SECRET],
    instructions: `System prompt mentioning ${SECRET}`,
    tools: [echo],
    inspect,
  });
  cleanups.push(() => agent.stop());
  return { agent, run: () => agent.send(`please use ${API_KEY} and ${SECRET}`) };
}

function assertNoSecrets(frames: string[]) {
  expect(frames.length).toBeGreaterThan(0);
  const leaks = (needle: string) =>
    frames.flatMap((frame) => {
      const at = frame.indexOf(needle);
      return at === -1 ? [] : [frame.slice(Math.max(0, at - 150), at + needle.length + 20)];
    });
  expect(leaks(API_KEY)).toEqual([]);
  expect(leaks(SECRET)).toEqual([]);
  // Not even a recognisable head of the key.
  expect(leaks(API_KEY.slice(0, 16))).toEqual([]);
  expect(frames.join('\n').toLowerCase()).toContain(REDACTED);
}

describe('sanitizer', () => {
  it('redacts secrets anywhere, hides secret-looking keys, cuts long strings and survives cycles', () => {
    const sanitize = createSanitizer({ secrets: ['abcd-secret', 'x'], maxStringChars: 50 });
    const cyclic: Record<string, unknown> = { a: 'has abcd-secret inside', apiKey: 'anything', n: 3 };
    cyclic.self = cyclic;
    const out = sanitize({
      cyclic,
      long: 'z'.repeat(500),
      error: new Error('boom abcd-secret'),
      fn: () => 1,
    }) as Record<string, Record<string, unknown>>;
    expect(out.cyclic!.a).toBe(`has ${REDACTED} inside`);
    expect(out.cyclic!.apiKey).toBe(REDACTED);
    expect(out.cyclic!.self).toBe('[circular]');
    expect(String(out.long).length).toBeLessThanOrEqual(50);
    expect(out.error).toEqual({ name: 'Error', message: `boom ${REDACTED}` });
    expect('fn' in out).toBe(false);
    // Cutting is idempotent, so a value sanitized twice is the same.
    const once = cutString('q'.repeat(1000), 300);
    expect(cutString(once, 300)).toBe(once);
  });
});

describe('the local inspector server', () => {
  it('never sends the API key or a configured secret, and sends no token chunks', async () => {
    const inspector = await startInspectorServer({ port: 0, flushMs: 10 });
    cleanups.push(() => inspector.close());
    const frames: string[] = [];
    const ws = new WebSocket(socketUrl(inspector.url));
    ws.on('message', (data) => frames.push(data.toString()));
    await new Promise((resolve) => ws.once('open', resolve));
    cleanups.push(() => ws.close());

    const { agent, run } = await leakyRun(inspector.inspect);
    inspector.attach(agent, { name: 'leaky' });
    const result = await run();
    expect(result.success).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Reconnecting gets a full sync, which must be just as clean.
    const again = new WebSocket(socketUrl(inspector.url));
    again.on('message', (data) => frames.push(data.toString()));
    await new Promise((resolve) => again.once('open', resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    again.close();

    assertNoSecrets(frames);
    const all = frames.join('\n');
    expect(all).not.toContain('"type":"LLM.DELTA"');
    expect(all).toContain('@xstate.snapshot');
    expect(all).toContain('"k":"bus"');
    expect(all).toContain('"type":"tool_call_end"');
  });

  it('refuses WebSocket connections from another origin', async () => {
    const inspector = await startInspectorServer({ port: 0 });
    cleanups.push(() => inspector.close());
    // With the token: the origin alone is what refuses it.
    expect(await upgradeStatus(socketUrl(inspector.url), { origin: 'https://evil.example' })).toBe(403);
  });

  it('serializes nothing while no page is open', async () => {
    const inspector = await startInspectorServer({ port: 0, flushMs: 10 });
    cleanups.push(() => inspector.close());
    const { agent, run } = await leakyRun(inspector.inspect);
    inspector.attach(agent);
    const stringify = JSON.stringify;
    let calls = 0;
    JSON.stringify = ((...args: Parameters<typeof stringify>) => {
      // Any call made from the server's files (src/inspector/*) counts.
      if (/[\\/]src[\\/]inspector[\\/]/.test(new Error().stack ?? '')) calls++;
      return stringify(...args);
    }) as typeof JSON.stringify;
    try {
      await run();
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      JSON.stringify = stringify;
    }
    expect(calls).toBe(0);
  });
});

describe('the Stately inspector option', () => {
  it('sends sanitized inspection events over its WebSocket, without token chunks or long bodies', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => wss.once('listening', resolve));
    cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
    const frames: string[] = [];
    wss.on('connection', (socket) => socket.on('message', (data) => frames.push(data.toString())));
    const port = (wss.address() as AddressInfo).port;

    const { agent, run } = await leakyRun(
      statelyInspection({ url: `ws://127.0.0.1:${port}`, serve: false, maxStringChars: 300 }),
    );
    expect((await run()).success).toBe(true);
    // The inspector converts and sends on a timer after the run: wait (up to 10 s on a loaded machine)
    // until the machine's definition and a snapshot of the finished turn have arrived.
    const arrived = () =>
      frames.some((f) => f.includes('"@xstate.actor"') && f.includes('WaitingApproval')) &&
      frames.some((f) => f.includes('"@xstate.snapshot"') && f.includes('Completed'));
    for (let waited = 0; !arrived() && waited < 10_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    assertNoSecrets(frames);
    const events = frames.map(
      (f) => JSON.parse(f) as { type: string; event?: { type: string }; definition?: string },
    );
    expect(events.some((e) => e.type === '@xstate.actor' && e.definition?.includes('WaitingApproval'))).toBe(
      true,
    );
    expect(events.some((e) => e.type === '@xstate.snapshot')).toBe(true);
    expect(events.filter((e) => e.event?.type === 'LLM.DELTA')).toEqual([]);
    // Message bodies and tool results are cut (the machine definition is the one long string kept).
    for (const e of events) {
      const { definition: _d, ...rest } = e;
      const longest = Math.max(
        ...(JSON.stringify(rest).match(/"(?:[^"\\]|\\.)*"/g) ?? ['']).map((s) => s.length),
      );
      expect(longest).toBeLessThan(400);
    }
    agent.stop();
  });
});

describe('the chart', () => {
  it('is read from the machine definition, eventless and invoke transitions included', () => {
    const chart = machineChart(agentMachine);
    const keys = chart.root.children.map((c) => c.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'Initializing',
        'AwaitingInput',
        'Thinking',
        'ExecutingTool',
        'WaitingApproval',
        'Completed',
        'Error',
        'Interrupted',
      ]),
    );
    const edge = (from: string, to: string) =>
      chart.edges
        .filter((e) => e.source === `agent.${from}` && e.target === `agent.${to}`)
        .map((e) => e.label);
    expect(edge('WaitingApproval', 'ExecutingTool')).toContain('always');
    expect(edge('Thinking', 'ExecutingTool')).toContain('done: callLlm');
    expect(edge('AwaitingInput', 'Thinking')).toContain('USER_MESSAGE');
    expect(chart.root.children.find((c) => c.key === 'Thinking')?.internal).toContain('LLM.DELTA');
  });

  it('draws sub-states and marks them active', () => {
    const machine = createMachine({
      id: 'm',
      initial: 'a',
      states: { a: { initial: 'x', states: { x: { on: { NEXT: 'y' } }, y: {} }, on: { GO: 'b' } }, b: {} },
    });
    const chart = machineChart(machine);
    expect(chart.root.children[0]!.children.map((c) => c.id)).toEqual(['m.a.x', 'm.a.y']);
    expect(chart.root.children[0]!.initial).toBe('m.a.x');
    expect(chart.edges).toContainEqual({ source: 'm.a.x', target: 'm.a.y', event: 'NEXT', label: 'NEXT' });
    expect(activeNodeIds('m', { a: 'y' })).toEqual(['m.a', 'm.a.y']);
  });
});
