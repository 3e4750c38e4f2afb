// The Stately bridge (statelyInspection's page on 127.0.0.1:8080) takes the same Host and Origin
// checks as the local inspector: another site open in the browser can neither read the relayed
// inspection events nor inject its own. Real HTTP and WebSockets on 127.0.0.1, a real agent.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createAgent } from '../src/index.js';
import { startStatelyBridge } from '../src/inspector/index.js';
import { statelyInspection } from '../src/inspector/stately-inspector.js';
import { startScriptedServer } from '../src/testing/index.js';
import { httpGet, upgradeStatus } from './support/inspector-page.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function bridgeOn() {
  const bridge = await startStatelyBridge(0);
  cleanups.push(() => bridge.release());
  expect(bridge.owned).toBe(true);
  return bridge;
}

describe('the Stately bridge', () => {
  it('serves its page only to requests that name this machine, and never in a frame', async () => {
    const bridge = await bridgeOn();
    const page = await httpGet(bridge.port, '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('stately.ai/inspect');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(String(page.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    expect((await httpGet(bridge.port, '/', { host: `localhost:${bridge.port}` })).status).toBe(200);
    const foreign = await httpGet(bridge.port, '/', { host: 'evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).not.toContain('stately.ai/inspect');
  });

  it('refuses WebSockets with a foreign Host or Origin (403), takes the agent and its own page', async () => {
    const bridge = await bridgeOn();
    const own = `http://127.0.0.1:${bridge.port}`;
    expect(await upgradeStatus(bridge.wsUrl, { origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(bridge.wsUrl, { origin: 'null' })).toBe(403);
    expect(await upgradeStatus(bridge.wsUrl, { origin: `http://127.0.0.1:${bridge.port + 1}` })).toBe(403);
    expect(await upgradeStatus(bridge.wsUrl, { host: 'evil.example' })).toBe(403);
    expect(await upgradeStatus(bridge.wsUrl, { host: 'evil.example', origin: 'http://evil.example' })).toBe(
      403,
    );
    // The agent's inspector (Node: no Origin) and the bridge page itself (its own origin).
    expect(await upgradeStatus(bridge.wsUrl)).toBe(101);
    expect(await upgradeStatus(bridge.wsUrl, { origin: own })).toBe(101);
  });

  it('closes a socket that sends a malformed frame and stays up', async () => {
    const bridge = await bridgeOn();
    const ws = new WebSocket(bridge.wsUrl);
    cleanups.push(() => ws.terminate());
    await new Promise((resolve) => ws.once('open', resolve));
    const closed = new Promise<number>((resolve) => ws.once('close', resolve));
    ws.send(Buffer.from([0xff, 0xfe, 0x80]), { binary: false }); // a text frame that is not UTF-8
    expect(await closed).toBe(1007);
    expect((await httpGet(bridge.port, '/')).status).toBe(200);
    expect(await upgradeStatus(bridge.wsUrl)).toBe(101);
  });

  it("relays an agent's events to its own page and to no other site", async () => {
    const bridge = await bridgeOn();
    const page = new WebSocket(bridge.wsUrl, { origin: `http://127.0.0.1:${bridge.port}` });
    cleanups.push(() => page.terminate());
    const frames: string[] = [];
    page.on('message', (data) => frames.push(data.toString()));
    await new Promise((resolve, reject) => {
      page.once('open', resolve);
      page.once('error', reject);
    });
    const scripted = await startScriptedServer({ scenario: { turns: [{ content: 'Hello.' }] } });
    cleanups.push(() => scripted.close());
    const agent = createAgent({
      baseURL: scripted.url,
      apiKey: 'sk-bridge-test',
      inspect: statelyInspection({ url: bridge.wsUrl, serve: false, onError: () => {} }),
    });
    cleanups.push(() => agent.stop());
    expect((await agent.send('hi')).response).toBe('Hello.');
    const deadline = Date.now() + 5000;
    while (!frames.some((f) => f.includes('@xstate.snapshot')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(frames.some((f) => f.includes('@xstate.snapshot'))).toBe(true);
    // A foreign page would get the replay of those events on connecting: it is not let in.
    expect(await upgradeStatus(bridge.wsUrl, { origin: 'https://evil.example' })).toBe(403);
  });
});
