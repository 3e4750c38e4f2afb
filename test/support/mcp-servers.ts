import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { McpServerConfig } from '../../src/mcp/index.js';

const require = createRequire(import.meta.url);

/** server-everything's entry point, as installed from the registry (a devDependency). */
export const everythingBin = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** The tests' own small server (crash, hang, list change, failing start). */
export const testServerFile = path.join(__dirname, 'mcp-test-server.mjs');

/** server-everything over stdio. */
export function everythingStdio(extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { command: process.execPath, args: [everythingBin, 'stdio'], ...extra } as McpServerConfig;
}

/**
 * The test server over stdio; `log` is the file it appends what it saw to. Its tools run unasked
 * (`approval: 'never'`) unless `approval` says otherwise: most lifecycle tests are not about approval.
 */
export function testServer(
  log: string,
  env: Record<string, string> = {},
  approval: 'always' | 'never' | 'readonly' = 'never',
): McpServerConfig {
  return { command: process.execPath, args: [testServerFile], env: { MCP_TEST_LOG: log, ...env }, approval };
}

/** Whether a process is still alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The text of each tool message among `messages`, in order. */
export const toolTexts = (messages: readonly { role: string; content?: unknown }[]): string[] =>
  messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

/**
 * The browser at an OAuth server's consent (startOAuthServer's, which consents at once): opens the
 * authorization URL, is redirected; returns where it was sent back to.
 */
export async function consent(url: URL): Promise<URL> {
  const answer = await fetch(url, { redirect: 'manual' });
  const location = answer.headers.get('location');
  if (answer.status !== 302 || !location)
    throw new Error(`the authorization URL answered ${answer.status}, not a redirect`);
  return new URL(location);
}

/**
 * server-everything in its own Streamable HTTP mode on 127.0.0.1, on a port the OS picks (PORT=0;
 * test/support/listen-local.mjs keeps it local and prints the port it got).
 */
export async function startEverythingHttp(): Promise<{
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}> {
  const child = spawn(
    process.execPath,
    ['--import', path.join(__dirname, 'listen-local.mjs'), everythingBin, 'streamableHttp'],
    { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen: ${stderr}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += String(chunk);
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
