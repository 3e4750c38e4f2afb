import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { buildChatPage } from './support/chat-page.js';

// The package as a user gets it: `npm pack`, installed from the tarball into an empty folder (real
// npm, the registry for the dependencies), then the CLI, an ESM, a CommonJS and a TypeScript consumer
// run there. The one slow test of the suite (the install takes 5-60 s).

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a user with no model configured and no npm settings inherited from `npm test`. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|OPENAI_|INIT_CWD$|NODE_OPTIONS$|VITEST|DEBUG$)/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, NO_COLOR: '1', CI: '1' };
}

function run(command: string, args: string[], cwd: string, timeout = 120_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: userEnv(), timeout, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function explain(r: Run): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout.slice(-4000)}\n--- stderr\n${r.stderr.slice(-4000)}`;
}

let work: string;
let app: string;
let packed: string[];

beforeAll(async () => {
  await buildDist();
  // The inspector page's script ships too; `npm run build` makes it (CI builds before testing).
  if (!existsSync(path.join(repoRoot, 'inspector', 'public', 'js', 'inspector', 'src', 'main.js'))) {
    const tsc = await run(
      process.execPath,
      [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'inspector/tsconfig.json'],
      repoRoot,
    );
    expect(tsc.code, explain(tsc)).toBe(0);
  }
  // So does the chat page's bundle (`agentloop serve` serves it at /).
  await buildChatPage();
  work = await mkdtemp(path.join(tmpdir(), 'agentloop-package-'));
  // Scripts off: dist/ is built above; `prepack` would rebuild it under other tests' running processes.
  const pack = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], repoRoot);
  expect(pack.code, explain(pack)).toBe(0);
  const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  packed = info!.files.map((f) => f.path);
  app = path.join(work, 'app');
  await mkdir(app);
  await writeFile(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  // Peers install as npm installs them by default (zod), whatever a user config says. One retry: the
  // registry is on the network.
  const args = [
    'install',
    path.join(work, info!.filename),
    '--no-audit',
    '--no-fund',
    '--legacy-peer-deps=false',
  ];
  let install = await run('npm', args, app, 240_000);
  if (install.code !== 0) install = await run('npm', args, app, 240_000);
  expect(install.code, explain(install)).toBe(0);
}, 600_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

// Generous: on 2 cores beside the rest of the suite, the type check of every declaration takes a while.
describe('the packed package', { timeout: 180_000 }, () => {
  it('ships what the demo and the inspector need, and no source maps to missing sources', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/index.d.ts',
        'dist/cli/main.js',
        'examples/notes/meeting-2026-11-02.md',
        'bundles/requirements-workflow/agents/intake-facilitator.md',
        'inspector/public/index.html',
        'inspector/public/js/inspector/src/main.js',
        'chat-page/public/index.html',
        'chat-page/public/js/chat.js',
      ]),
    );
    expect(packed.filter((f) => f.endsWith('.map') || f.startsWith('src/') || f.startsWith('test/'))).toEqual(
      [],
    );
  });

  it('installs without the optional Stately bridge, the MCP SDK and @types/node', () => {
    const installed = (name: string) => existsSync(path.join(app, 'node_modules', name, 'package.json'));
    expect(installed('agentloop')).toBe(true);
    expect(installed('gpt-tokenizer')).toBe(true);
    expect(installed('zod')).toBe(true);
    expect(installed('@statelyai/inspect')).toBe(false);
    expect(installed('superjson')).toBe(false);
    expect(installed('@modelcontextprotocol/sdk')).toBe(false);
    expect(installed('express')).toBe(false);
    expect(installed('@types/node')).toBe(false);
  });

  it('runs `npx agentloop demo` on the scripted model, answering from what the tools read', async () => {
    const demo = await run('npx', ['--no', '--', 'agentloop', 'demo'], app);
    expect(demo.code, explain(demo)).toBe(0);
    expect(demo.stdout).toContain('scripted model');
    expect(demo.stdout).toMatch(/✓ list_notes .*meeting-2026-11-02\.md/);
    expect(demo.stdout).toMatch(/✓ search_notes .*meeting-2026-11-02\.md:7: - Open:/);
    expect(demo.stdout).toContain(
      'Still open: how long should the default tool timeout be? Ana suggests 60 seconds. (meeting-2026-11-02.md, line 7)',
    );
    expect(demo.stdout).toMatch(/✓ save_output .*"success":true/);
    expect(demo.stdout).toMatch(/saved .*intake-promise-tracker-\d{4}-\d{2}-\d{2}\.md:/);
    expect(demo.stdout).not.toContain('✗');
  });

  it('runs the example eval suite as shipped: its agent module imports agentloop and zod from the install', async () => {
    const suite = path.join(app, 'node_modules', 'agentloop', 'examples', 'evals');
    const evals = await run('npx', ['--no', '--', 'agentloop', 'eval', suite], app);
    expect(evals.code, explain(evals)).toBe(0);
    expect(evals.stdout.trimEnd().split('\n').at(-1)).toBe('3 passed, 0 failed');
  });

  it('shows a broken demo as broken: without examples/ the answer names the error and the exit is 1', async () => {
    const examples = path.join(app, 'node_modules', 'agentloop', 'examples');
    await rename(examples, `${examples}.away`);
    try {
      const demo = await run('npx', ['--no', '--', 'agentloop', 'demo'], app);
      expect(demo.code, explain(demo)).toBe(1);
      expect(demo.stdout).toMatch(/✗ list_notes .*ENOENT/);
      expect(demo.stdout).toMatch(/I could not list the notes:\nlist_notes \{\}: Error: ENOENT/);
      expect(demo.stdout).not.toContain('Still open');
      expect(demo.stderr).toContain('tool call(s) failed (list_notes)');
    } finally {
      await rename(`${examples}.away`, examples);
    }
  });

  it('says how to install @statelyai/inspect when --inspect is used without it', async () => {
    const demo = await run('npx', ['--no', '--', 'agentloop', 'demo', '--inspect'], app, 60_000);
    expect(demo.code, explain(demo)).not.toBe(0);
    expect(demo.code).not.toBeNull(); // exited, not killed by the timeout
    expect(demo.stderr).toContain('needs the optional package @statelyai/inspect');
    expect(demo.stderr).toContain('npm install @statelyai/inspect');
    expect(demo.stdout).not.toContain('Part 1');
  });

  it('prints usage for --help of every command', async () => {
    const top = await run('npx', ['--no', '--', 'agentloop', '--help'], app);
    expect(top.code, explain(top)).toBe(0);
    const commands = [
      ...new Set([...top.stdout.matchAll(/^ {2}agentloop ([a-z][a-z0-9]*)/gm)].map((m) => m[1]!)),
    ];
    expect(commands).toEqual(
      expect.arrayContaining(['demo', 'run', 'chat', 'sessions', 'validate', 'inspect', 'worker', 'send']),
    );
    // The bin npx ran above, without npm's start-up for each of the twenty-odd commands.
    const bin = path.join(app, 'node_modules', '.bin', 'agentloop');
    for (const command of commands.filter((c) => c !== 'help')) {
      const help = await run(bin, [command, '--help'], app);
      expect(help.code, `${command} --help: ${explain(help)}`).toBe(0);
      expect(help.stdout, `${command} --help printed no usage`).toContain('agentloop');
    }
  });

  it('says how to install pg when --store is a postgres:// URL without it (pg is an optional peer)', async () => {
    const url = 'postgres://app:pw-no-pg-5@127.0.0.1:1/app';
    const send = await run(
      'npx',
      ['--no', '--', 'agentloop', 'send', '--store', url, '--session', 's1', 'hi'],
      app,
    );
    expect(send.code, explain(send)).toBe(1);
    expect(send.stderr).toContain('npm install pg');
    expect(send.stderr).toContain('postgres://app:***@127.0.0.1:1/app');
    expect(send.stderr).not.toContain('pw-no-pg-5');
    // One line of ours (npx may add its own warnings about the user's npm config).
    const ours = send.stderr.split('\n').filter((line) => line && !line.startsWith('npm warn'));
    expect(ours, explain(send)).toEqual([
      'agentloop send: --store postgres://app:***@127.0.0.1:1/app: PostgresSessionStore needs the `pg` package (8.x): npm install pg',
    ]);
  });

  it('says how to install the MCP SDK when an agent has MCP servers without it (an optional peer)', async () => {
    await writeFile(path.join(app, 'mcp.mjs'), MCP_WITHOUT_SDK);
    const r = await run(process.execPath, ['mcp.mjs'], app, 60_000);
    expect(r.code, explain(r)).toBe(0);
    const report = JSON.parse(r.stdout) as { answer: string; servers: unknown; errors: string[] };
    // The agent still answers; the server is failed with the reason, reported once as an error event.
    expect(report.answer).toBe('Fine without notes.');
    expect(report.servers).toMatchObject([{ name: 'notes', state: 'failed' }]);
    expect(report.errors).toEqual([
      'MCP server "notes" failed to start: MCP servers need the optional dependency @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk',
    ]);
  });

  it('runs an ESM consumer against the scripted server from agentloop/testing', async () => {
    await writeFile(path.join(app, 'esm.mjs'), ESM_CONSUMER);
    const esm = await run(process.execPath, ['esm.mjs'], app);
    expect(esm.code, explain(esm)).toBe(0);
    const report = JSON.parse(esm.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      success: true,
      response: 'The sum is 5.',
      states: ['AwaitingInput', 'Thinking', 'ExecutingTool', 'Thinking', 'Completed'],
      // The tokenizer loads only when a conversation nears its window, and only the model's encoding.
      encodingsBeforeLongConversation: [],
      encodingsAfter: ['o200k_base.js'],
      statelyError: expect.stringContaining('npm install @statelyai/inspect'),
    });
  });

  it('runs a CommonJS consumer: require() of every entry point', async () => {
    await writeFile(path.join(app, 'cjs.cjs'), CJS_CONSUMER);
    const cjs = await run(process.execPath, ['cjs.cjs'], app);
    expect(cjs.code, explain(cjs)).toBe(0);
    expect(JSON.parse(cjs.stdout)).toEqual({
      entries: ['function', 'function', 'function', 'function', 'function', 'function'],
      name: 'agentloop',
      success: true,
      response: 'Hello from CommonJS.',
    });
  });

  it("runs a store author's tests: the example JSON-file store through agentloop/testing/stores, in vitest", async () => {
    // The kit takes the runner's functions: vitest is the author's dependency, never agentloop's.
    const manifest = JSON.parse(
      await readFile(path.join(app, 'node_modules', 'agentloop', 'package.json'), 'utf8'),
    ) as Record<string, Record<string, string> | undefined>;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      expect(Object.keys(manifest[field] ?? {}), field).not.toContain('vitest');
    }
    const { version } = JSON.parse(
      await readFile(path.join(repoRoot, 'node_modules', 'vitest', 'package.json'), 'utf8'),
    ) as { version: string };
    const args = ['install', '--save-dev', `vitest@${version}`, '--no-audit', '--no-fund'];
    let install = await run('npm', args, app, 240_000);
    if (install.code !== 0) install = await run('npm', args, app, 240_000);
    expect(install.code, explain(install)).toBe(0);
    const dir = path.join(app, 'store');
    await mkdir(dir);
    for (const file of ['json-file-session-store.ts', 'json-file-session-store.test.ts']) {
      await copyFile(path.join(repoRoot, 'docs', 'examples', file), path.join(dir, file));
    }
    const vitest = await run(
      'npx',
      ['--no', '--', 'vitest', 'run', '--reporter=verbose', 'store/'],
      app,
      170_000,
    );
    expect(vitest.code, explain(vitest)).toBe(0);
    expect(vitest.stdout).toContain('SessionStore conformance: JsonFileSessionStore');
    // Every group ran, the crash cases (the example can be reopened) and the lease cases included.
    for (const group of [
      'save and load',
      'transcript',
      'session ids',
      'ownership and inbox',
      'after a crash',
    ]) {
      expect(vitest.stdout).toContain(`JsonFileSessionStore > ${group} >`);
    }
    const passed = Number(/Tests\s+(\d+) passed/.exec(vitest.stdout)?.[1]);
    expect(passed).toBeGreaterThan(45);
    expect(vitest.stdout).not.toMatch(/failed|skipped/);
  }, 420_000);

  it('type-checks a strict TypeScript consumer without @types/node, our declarations included', async () => {
    const dir = path.join(app, 'ts');
    await mkdir(dir);
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TS_CONFIG, null, 2));
    await writeFile(path.join(dir, 'consumer.ts'), TS_CONSUMER);
    await writeFile(path.join(dir, 'require-consumer.cts'), TS_REQUIRE_CONSUMER);
    const tsc = await run(
      process.execPath,
      [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir],
      app,
    );
    expect(tsc.code, explain(tsc)).toBe(0);
    // The check is meaningful: the consumer did read agentloop's declarations.
    const listed = await run(
      process.execPath,
      [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir, '--listFilesOnly'],
      app,
    );
    expect(listed.stdout).toContain('node_modules/agentloop/dist/index.d.ts');
    expect(listed.stdout).toContain('node_modules/agentloop/dist/inspector/index.d.ts');
    expect(listed.stdout).not.toContain('@types/node');
  });
});

const MCP_WITHOUT_SDK = `
import { createAgent } from 'agentloop';
import { startScriptedServer } from 'agentloop/testing';

const server = await startScriptedServer({ scenario: { turns: [{ content: 'Fine without notes.' }] } });
try {
  const agent = createAgent({
    baseURL: server.url, apiKey: 'test', model: 'gpt-4o', loopControlTools: false,
    mcpServers: { notes: { command: process.execPath, args: ['-e', ''] } },
  });
  const errors = [];
  agent.on('error', (e) => errors.push(e.message));
  await agent.ready();
  const result = await agent.send('Anything in my notes?');
  const servers = agent.mcpServers;
  await agent.close();
  console.log(JSON.stringify({ answer: result.response, servers, errors }));
} finally {
  await server.close();
}
`;

const ESM_CONSUMER = `
import { createRequire } from 'node:module';
import { createAgent, defineTool } from 'agentloop';
import { statelyInspection } from 'agentloop/inspector';
import { startScriptedServer } from 'agentloop/testing';
import { z } from 'zod';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});
const server = await startScriptedServer({
  scenario: {
    turns: [
      { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
      (request) => ({ content: 'The sum is ' + request.messages.at(-1).content + '.' }),
    ],
  },
});
const encodings = () =>
  Object.keys(createRequire(import.meta.url).cache)
    .filter((f) => f.includes('gpt-tokenizer') && f.includes('bpeRanks'))
    .map((f) => f.split(/[\\\\/]/).pop())
    .sort();
try {
  const agent = createAgent({ baseURL: server.url, apiKey: 'test', model: 'gpt-4o', tools: [add], loopControlTools: false });
  const states = [];
  agent.on('state_change', (e) => states.push(e.state));
  const result = await agent.send('What is 2 + 3?');
  agent.stop();
  const encodingsBeforeLongConversation = encodings();

  // A window so small that the first request nears it: real token counts are needed.
  const counted = createAgent({
    baseURL: server.url, apiKey: 'test', model: 'gpt-4o', tools: [add], loopControlTools: false,
    contextWindow: { contextWindow: 100_000, warnShare: 0.001 },
  });
  await counted.send('What is 2 + 3?');
  counted.stop();

  let statelyError;
  const watched = createAgent({
    baseURL: server.url, apiKey: 'test', tools: [add], loopControlTools: false,
    inspect: statelyInspection({ serve: false, onError: (error) => { statelyError = error.message; } }),
  });
  await watched.send('What is 2 + 3?');
  for (let i = 0; i < 100 && statelyError === undefined; i++) await new Promise((r) => setTimeout(r, 20));
  watched.stop();

  console.log(JSON.stringify({
    success: result.success, response: result.response, states,
    encodingsBeforeLongConversation, encodingsAfter: encodings(), statelyError,
  }));
} finally {
  await server.close();
}
`;

const CJS_CONSUMER = `
const { createAgent } = require('agentloop');
const { startScriptedServer } = require('agentloop/testing');
const entries = [
  createAgent,
  require('agentloop/bundle').loadBundleAgent,
  require('agentloop/evals').trajectoryMatch,
  require('agentloop/inspector').startInspectorServer,
  startScriptedServer,
  require('agentloop/unstable').TokenCounter,
].map((f) => typeof f);
const { name } = require('agentloop/package.json');

(async () => {
  const server = await startScriptedServer({ scenario: { turns: [{ content: 'Hello from CommonJS.' }] } });
  try {
    const agent = createAgent({ baseURL: server.url, apiKey: 'test' });
    const result = await agent.send('Hi');
    agent.stop();
    console.log(JSON.stringify({ entries, name, success: result.success, response: result.response }));
  } finally {
    await server.close();
  }
})();
`;

const TS_CONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    // No @types/node: the globals a non-Node consumer (a browser bundle, Deno, Bun) has.
    lib: ['ES2023', 'DOM'],
    types: [],
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  },
  include: ['*.ts', '*.cts'],
};

const TS_CONSUMER = `
import { type AgentEvent, type AgentStateName, createAgent, defineTool, MemorySessionStore } from 'agentloop';
import { loadBundleAgent } from 'agentloop/bundle';
import { trajectoryMatch, trajectoryOf } from 'agentloop/evals';
import { startInspectorServer, statelyInspection } from 'agentloop/inspector';
import { startScriptedServer } from 'agentloop/testing';
import { describeSessionStoreConformance, type TestApi } from 'agentloop/testing/stores';
import { TokenCounter } from 'agentloop/unstable';
import { z } from 'zod';

// The kit's declarations need neither vitest nor @types/node.
export const registerKit = (api: TestApi): void =>
  describeSessionStoreConformance(api, { name: 'memory', create: () => new MemorySessionStore() });

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

export async function main(): Promise<string> {
  const server = await startScriptedServer({ scenario: { turns: [{ content: 'Hi.' }] } });
  const agent = createAgent({ baseURL: server.url, apiKey: 'test', tools: [add], inspect: statelyInspection() });
  agent.on('state_change', (e) => {
    const state: AgentStateName = e.state;
    const previous: AgentStateName | null = e.previous;
    // @ts-expect-error not a state of the machine
    if (e.state === 'Sleeping') return;
    void [state, previous];
  });
  agent.on('limit_warning', (e: AgentEvent<'limit_warning'>) => {
    // @ts-expect-error not a limit the runtime emits
    if (e.limit === 'disk_space') return;
    const limit: 'max_iterations' | 'timeout' | 'repeated_calls' | 'consecutive_errors' | 'context_window' | 'cost_budget' =
      e.limit;
    void limit;
  });
  const result = await agent.send('Hello');
  const verdict = trajectoryMatch(trajectoryOf(result.messages), [], { mode: 'superset', args: 'subset' });
  if (!verdict.ok) throw new Error(verdict.reason);
  void [loadBundleAgent, startInspectorServer, new TokenCounter('o200k_base').countText('x')];
  await server.close();
  return result.response;
}
`;

const TS_REQUIRE_CONSUMER = `
import agentloop = require('agentloop');
import testing = require('agentloop/testing');

export const started: Promise<unknown> = testing.startScriptedServer({ scenario: { turns: [] } });
export const create: typeof agentloop.createAgent = agentloop.createAgent;
`;
