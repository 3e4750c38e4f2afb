// Who can reach the local inspector: the page and its WebSocket need the server's token (from the
// URL it prints), requests must name this machine, sockets must come from the page's own origin.
// Real HTTP and WebSockets on 127.0.0.1.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runInspectCommand } from '../src/cli/commands/inspect-command.js';
import { type InspectorServer, startInspectorServer } from '../src/inspector/inspector-server.js';
import { connectPage, httpGet, socketUrl, upgradeStatus } from './support/inspector-page.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function inspectorOn(): Promise<InspectorServer> {
  const inspector = await startInspectorServer({ port: 0 });
  cleanups.push(() => inspector.close());
  return inspector;
}

const tokenOf = (url: string) => new URL(url).searchParams.get('token');

describe('the inspector token', () => {
  it('is random, per server, and in the url the server gives', async () => {
    const one = await inspectorOn();
    const two = await inspectorOn();
    expect(one.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    expect(tokenOf(one.url)).not.toBe(tokenOf(two.url));
  });

  it('is needed for the page: 401 without it or with a wrong one', async () => {
    const inspector = await inspectorOn();
    const token = tokenOf(inspector.url)!;
    const withToken = await httpGet(inspector.port, `/?token=${token}`);
    expect(withToken.status).toBe(200);
    expect(withToken.body).toContain('agentloop inspector');
    expect((await httpGet(inspector.port, `/index.html?token=${token}`)).status).toBe(200);
    for (const bare of ['/', '/index.html', '/?token=', `/?token=${token.slice(0, -1)}x`, `/?tok=${token}`]) {
      const res = await httpGet(inspector.port, bare);
      expect(res.status, bare).toBe(401);
      expect(res.body, bare).not.toContain('agentloop inspector');
    }
    // HEAD too: the status says whether the token is right.
    expect((await httpGet(inspector.port, '/', { method: 'HEAD' })).status).toBe(401);
    // The page's static files are the package's public code: served without the token (see docs/security.md).
    expect((await httpGet(inspector.port, '/style.css')).status).toBe(200);
  });

  it('is needed for the WebSocket: 401 without it or with a wrong one', async () => {
    const inspector = await inspectorOn();
    const ws = socketUrl(inspector.url);
    const token = tokenOf(inspector.url)!;
    const bare = `ws://127.0.0.1:${inspector.port}/ws`;
    expect(await upgradeStatus(bare)).toBe(401);
    expect(await upgradeStatus(`${bare}?token=`)).toBe(401);
    expect(await upgradeStatus(`${bare}?token=${token.toUpperCase()}`)).toBe(401);
    expect(await upgradeStatus(`${bare}?token=${token}${token}`)).toBe(401);
    // A browser page without the token, from the right origin, is refused as well.
    expect(await upgradeStatus(bare, { origin: `http://127.0.0.1:${inspector.port}` })).toBe(401);
    expect(await upgradeStatus(ws)).toBe(101);
    expect(await upgradeStatus(ws, { origin: `http://127.0.0.1:${inspector.port}` })).toBe(101);
    // With the token, the page gets its greeting.
    const page = await connectPage(inspector.url);
    expect((await page.waitFor((m) => m.t === 'hello')).t).toBe('hello');
  });

  it('does not replace the Host and Origin checks', async () => {
    const inspector = await inspectorOn();
    const token = tokenOf(inspector.url)!;
    const ws = socketUrl(inspector.url);
    expect((await httpGet(inspector.port, `/?token=${token}`, { host: 'evil.example' })).status).toBe(403);
    expect(await upgradeStatus(ws, { host: 'evil.example' })).toBe(403);
    expect(await upgradeStatus(ws, { origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(ws, { origin: `http://127.0.0.1:${inspector.port + 1}` })).toBe(403);
  });
});

describe('framing', () => {
  it("forbids framing the page and every other answer: frame-ancestors 'none', X-Frame-Options DENY", async () => {
    const inspector = await inspectorOn();
    const token = new URL(inspector.url).search;
    const answers = {
      page: await httpGet(inspector.port, `/${token}`),
      'page (HEAD)': await httpGet(inspector.port, `/${token}`, { method: 'HEAD' }),
      stylesheet: await httpGet(inspector.port, '/style.css'),
      script: await httpGet(inspector.port, '/js/inspector/src/main.js'),
      'no token': await httpGet(inspector.port, '/'),
      'not found': await httpGet(inspector.port, '/missing.js'),
      'bad path': await httpGet(inspector.port, '/%'),
      'bad method': await httpGet(inspector.port, `/${token}`, { method: 'POST' }),
      'foreign host': await httpGet(inspector.port, `/${token}`, { host: 'evil.example' }),
    };
    for (const [name, res] of Object.entries(answers)) {
      expect(res.headers['x-frame-options'], name).toBe('DENY');
      expect(String(res.headers['content-security-policy']), name).toMatch(
        /(^|;\s*)frame-ancestors 'none'(;|$)/,
      );
    }
    expect(answers.page.status).toBe(200);
    expect(answers.script.status).toBe(200);
  });
});

describe('agentloop inspect', () => {
  it('prints the page url with its token', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-inspect-'));
    const stop = new AbortController();
    let stdout = '';
    const io = {
      stdout: (s: string) => {
        stdout += s;
      },
      stderr: () => {},
    };
    const done = runInspectCommand(['--dir', dir, '--inspector-port', '0', '--poll', '0'], io, stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await done;
    });
    while (!stdout.includes('press Ctrl-C')) await new Promise((resolve) => setTimeout(resolve, 10));
    const printed = /inspector: (\S+)/.exec(stdout)?.[1];
    expect(printed).toMatch(/\/\?token=[A-Za-z0-9_-]{43}$/);
    const url = new URL(printed!);
    const port = Number(url.port);
    expect((await httpGet(port, `${url.pathname}${url.search}`)).status).toBe(200);
    expect((await httpGet(port, '/')).status).toBe(401);
    expect(await upgradeStatus(socketUrl(printed!))).toBe(101);
    stop.abort();
    expect(await done).toBe(0);
  });
});
