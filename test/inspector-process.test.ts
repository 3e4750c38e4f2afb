// The agent's process stays up whatever a local client sends its inspectors. The servers run in a
// child process (dist/, as users run it), so a crash is the process exiting, not a test error.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startInspectorServer, startStatelyBridge } from '../src/inspector/index.js';
import { buildDist, repoRoot } from './support/build-dist.js';
import { httpGet, socketUrl, upgradeStatus } from './support/inspector-page.js';

let child: ChildProcess;
let exited: string | undefined;
let pageUrl: string;
let bridgeUrl: string;

beforeAll(async () => {
  await buildDist();
  const entry = pathToFileURL(path.join(repoRoot, 'dist', 'inspector', 'index.js')).href;
  const script = `
    const { startInspectorServer, startStatelyBridge } = await import(${JSON.stringify(entry)});
    const inspector = await startInspectorServer({ port: 0 });
    const bridge = await startStatelyBridge(0);
    console.log(JSON.stringify({ pageUrl: inspector.url, bridgeUrl: bridge.wsUrl }));`;
  child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  child.once('exit', (code, signal) => {
    exited = `exited (${code ?? signal}): ${stderr}`;
  });
  const first = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk) => resolve(String(chunk)));
    child.once('exit', () => reject(new Error(exited)));
  });
  ({ pageUrl, bridgeUrl } = JSON.parse(first) as { pageUrl: string; bridgeUrl: string });
}, 180_000);

afterAll(() => {
  child?.kill();
});

/** Opens a socket, sends one frame, waits until the server answered or closed the socket. */
async function sendFrame(url: string, frame: string | Buffer, options: { binary?: boolean } = {}) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const outcome = new Promise<string>((resolve) => {
    ws.once('message', (data) => resolve(`answered ${String(data).slice(0, 80)}`));
    ws.once('close', (code) => resolve(`closed ${code}`));
  });
  ws.send(frame, { binary: options.binary ?? false });
  const result = await Promise.race([
    outcome,
    new Promise<string>((resolve) => setTimeout(() => resolve('no answer'), 500)),
  ]);
  ws.terminate();
  return result;
}

async function stillUp() {
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(exited).toBeUndefined();
  const page = new URL(pageUrl);
  expect((await httpGet(Number(page.port), `${page.pathname}${page.search}`)).status).toBe(200);
  expect(await upgradeStatus(socketUrl(pageUrl))).toBe(101);
  expect(await upgradeStatus(bridgeUrl)).toBe(101);
}

describe("the agent's process", () => {
  it('survives hostile frames on the local inspector', async () => {
    // The page's socket greets first: skip the hello by reading answers after it (any message counts).
    const ws = socketUrl(pageUrl);
    for (const frame of [
      '{"t":"sync","session":{"toString":1}}',
      '{"t":"sync","id":1,"session":{"toString":1}}',
      'null',
      '{"t":"nuke","id":2,"session":"s","toolCallId":"c"}',
    ]) {
      await sendFrame(ws, frame);
      await stillUp();
    }
    expect(await sendFrame(ws, Buffer.from([0xff, 0xfe, 0x80]))).toMatch(/answered|closed 1007/);
    await stillUp();
    expect(await sendFrame(ws, 'x'.repeat(70 * 1024))).toMatch(/answered|closed 1009/);
    await stillUp();
  });

  it('survives malformed HTTP paths', async () => {
    const port = Number(new URL(pageUrl).port);
    for (const p of ['/%', '/%E0%A4%A', '//', '/..%2f..%2f', `/%00${new URL(pageUrl).search}`]) {
      expect([400, 401, 404]).toContain((await httpGet(port, p)).status);
    }
    await stillUp();
  });

  it('survives malformed frames on the Stately bridge', async () => {
    expect(await sendFrame(bridgeUrl, Buffer.from([0xff, 0xfe, 0x80]))).toBe('closed 1007');
    await stillUp();
  });
});

describe('a port already taken', () => {
  it('makes startInspectorServer reject with EADDRINUSE instead of throwing', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(startInspectorServer({ port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
      // The bridge joins whatever holds the port (another process's bridge, it assumes).
      const bridge = await startStatelyBridge(port);
      expect(bridge.owned).toBe(false);
      await bridge.release();
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  }, 10_000);
});
