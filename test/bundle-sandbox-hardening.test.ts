import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { cp, link, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadBundleAgent } from '../src/bundle/bundle-agent.js';
import type { BundleAgent, LoadBundleAgentOptions } from '../src/bundle/bundle-agent-types.js';
import { BundleError } from '../src/bundle/bundle-error.js';
import { Sandbox } from '../src/bundle/sandbox/sandbox.js';
import { main } from '../src/cli/main.js';
import { FileSessionStore } from '../src/session/file-store/file-session-store.js';
import { resolveSessionsDir } from '../src/sessions-dir.js';

// Issue 15, the items besides the race (see bundle-sandbox-race.test.ts): only regular files are read,
// hard links in the output folder are never written through, and the session store's folder is out of
// reach of the tools wherever it is configured. Real files, real FIFOs, a real session store.

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLE = path.join(REPO, 'bundles', 'requirements-workflow');

let dir: string;
let bundle: string;
let project: string;
let out: string;
let outside: string;
const fifos: string[] = [];

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-hardening-')));
  bundle = path.join(dir, 'bundle');
  project = path.join(dir, 'project');
  out = path.join(project, 'out');
  outside = path.join(dir, 'outside');
  await cp(EXAMPLE, bundle, { recursive: true });
  await mkdir(out, { recursive: true });
  await mkdir(outside);
});
afterEach(async () => {
  // A read blocked in open() on a FIFO (the bug) is released by opening the FIFO for writing.
  for (const fifo of fifos.splice(0)) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader waiting: nothing blocked.
    }
  }
  await rm(dir, { recursive: true, force: true });
});

function load(extra: Partial<LoadBundleAgentOptions> = {}): Promise<BundleAgent> {
  return loadBundleAgent({
    bundleRoot: bundle,
    agent: 'intake-facilitator',
    projectRoot: project,
    outputFolder: out,
    env: {},
    ...extra,
  });
}

function call(agent: BundleAgent, name: string, args: Record<string, unknown>): Promise<unknown> {
  const found = agent.definition.tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return Promise.resolve(found.execute(args, {} as never));
}

/** The call's error, or a note that it neither answered nor failed within `ms` (it is blocked). */
async function failureOf(run: Promise<unknown>, ms = 2000): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const blocked = new Promise((resolve) => {
    timer = setTimeout(() => resolve(new Error(`blocked: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([
      run.then(
        () => new Error('succeeded'),
        (error: unknown) => error,
      ),
      blocked,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function mkfifo(p: string): void {
  execFileSync('mkfifo', [p]);
  fifos.push(p);
}

describe('only regular files are read or written', () => {
  test('read_file on a named pipe is refused at once, naming the path', async () => {
    const agent = await load();
    mkfifo(path.join(project, 'pipe'));
    const error = await failureOf(call(agent, 'read_file', { file_path: 'pipe' }));
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toMatch(/Not a regular file: .*pipe.* named pipe/);
  });

  test('save_output onto a named pipe is refused at once, naming the path', async () => {
    const agent = await load();
    mkfifo(path.join(out, 'pipe.md'));
    const error = await failureOf(call(agent, 'save_output', { file_path: 'pipe.md', content: 'x' }));
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toMatch(/pipe\.md/);
  });

  test('read_file on a folder says it is not a regular file', async () => {
    const agent = await load();
    await mkdir(path.join(project, 'folder'));
    await expect(call(agent, 'read_file', { file_path: 'folder' })).rejects.toThrow(
      /Not a regular file: .*folder.* folder/,
    );
  });
});

describe('hard links in the output folder', () => {
  test('save_output refuses a target with more than one link and leaves the other name untouched', async () => {
    const agent = await load();
    await writeFile(path.join(outside, 'victim.md'), 'ORIGINAL');
    await link(path.join(outside, 'victim.md'), path.join(out, 'hard.md'));
    await expect(
      call(agent, 'save_output', { file_path: 'hard.md', content: 'overwritten' }),
    ).rejects.toThrow(/Write refused: .*hard\.md.* hard link/);
    expect(await readFile(path.join(outside, 'victim.md'), 'utf8')).toBe('ORIGINAL');
  });

  test('an ordinary file in the output folder is still replaced', async () => {
    const agent = await load();
    await writeFile(path.join(out, 'doc.md'), 'a much longer first version');
    await call(agent, 'save_output', { file_path: 'doc.md', content: 'second' });
    expect(await readFile(path.join(out, 'doc.md'), 'utf8')).toBe('second');
  });
});

describe('the session store folder is out of reach of the tools', () => {
  async function saveSession(store: FileSessionStore, id: string): Promise<string> {
    await store.save({ id, state: 'AwaitingInput', snapshot: { secret: 'other session' } });
    return path.join(store.dir, id, 'snapshot.json');
  }

  test('the default folder, <project>/.agentloop/sessions, is refused for read_file and execute_workflow', async () => {
    const store = new FileSessionStore({ projectRoot: project, env: {}, fsync: false });
    const file = await saveSession(store, 'other-1');
    expect(await readFile(file, 'utf8')).toContain('other session');
    const agent = await load();
    for (const file_path of [
      '.agentloop/sessions/other-1/snapshot.json',
      '{project-root}/.agentloop/sessions/other-1/snapshot.json',
      file,
      'docs/../.agentloop/sessions/other-1/snapshot.json',
    ]) {
      await expect(call(agent, 'read_file', { file_path })).rejects.toThrow(
        /Access denied: .* inside the sessions folder/,
      );
    }
    await expect(call(agent, 'read_file', { file_path: '.agentloop/sessions' })).rejects.toThrow(
      /sessions folder/,
    );
    await expect(
      call(agent, 'execute_workflow', { workflow_path: '.agentloop/sessions/other-1/snapshot.json' }),
    ).rejects.toThrow(/sessions folder/);
  });

  test('$AGENTLOOP_HOME/sessions is refused when AGENTLOOP_HOME lies inside the roots', async () => {
    const env = { AGENTLOOP_HOME: path.join(project, 'home') };
    const store = new FileSessionStore({ projectRoot: project, env, fsync: false });
    expect(store.dir).toBe(path.join(project, 'home', 'sessions'));
    const file = await saveSession(store, 'other-2');
    const agent = await load({ env });
    await expect(call(agent, 'read_file', { file_path: file })).rejects.toThrow(/sessions folder/);
    await expect(
      call(agent, 'read_file', { file_path: 'home/sessions/other-2/snapshot.json' }),
    ).rejects.toThrow(/sessions folder/);
  });

  test('a sessions folder given as an option (chat --sessions-dir) is refused too', async () => {
    const store = new FileSessionStore({ dir: path.join(project, 'my-sessions'), fsync: false });
    const file = await saveSession(store, 'other-3');
    const agent = await load({ sessionsDir: store.dir });
    await expect(call(agent, 'read_file', { file_path: file })).rejects.toThrow(/sessions folder/);
    // Without the option the folder is just a project folder: the option is what tells the sandbox.
    const unaware = await load();
    expect(await call(unaware, 'read_file', { file_path: file })).toMatchObject({ path: file });
  });

  test('save_output cannot write into the sessions folder when the output folder holds it', async () => {
    const store = new FileSessionStore({ projectRoot: project, env: {}, fsync: false });
    const file = await saveSession(store, 'other-4');
    const before = await readFile(file, 'utf8');
    const agent = await load({ outputFolder: project });
    await expect(
      call(agent, 'save_output', { file_path: '.agentloop/sessions/other-4/snapshot.json', content: '{}' }),
    ).rejects.toThrow(/Write refused: .* inside the sessions folder/);
    await expect(
      call(agent, 'save_output', { file_path: '.agentloop/sessions/new/snapshot.json', content: '{}' }),
    ).rejects.toThrow(/sessions folder/);
    expect(await readFile(file, 'utf8')).toBe(before);
    // The rest of the output folder stays writable.
    await call(agent, 'save_output', { file_path: 'notes.md', content: 'ok' });
    expect(await readFile(path.join(project, 'notes.md'), 'utf8')).toBe('ok');
  });

  test('agentloop run: the model asking read_file for a saved session gets a refusal, not the session', async () => {
    const store = new FileSessionStore({ projectRoot: project, env: {}, fsync: false });
    await saveSession(store, 'other-5');
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(
      scenario,
      [
        'turns:',
        '  - toolCalls:',
        '      - name: read_file',
        '        arguments: { file_path: "{project-root}/.agentloop/sessions/other-5/snapshot.json" }',
        '  - content: I may not read that.',
      ].join('\n'),
    );
    const printed: string[] = [];
    const errors: string[] = [];
    const io = { stdout: (s: string) => printed.push(s), stderr: (s: string) => errors.push(s) };
    // <project>/.agentloop/sessions is refused whether or not AGENTLOOP_HOME is set.
    const args = ['run', '--bundle', bundle, '--agent', 'intake-facilitator', '--project', project];
    expect(await main([...args, '--scenario', scenario, '--json', 'read it'], io)).toBe(0);
    const stdout = printed.join('');
    const stderr = errors.join('');
    const result = JSON.parse(stdout) as { messages: { role: string; content: string }[] };
    const answers = result.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatch(/Access denied: .* inside the sessions folder/);
    expect(stdout + stderr).not.toContain('other session');
  });

  test("the sandbox's default sessions folder is the store's in every configuration", () => {
    const cases = [
      { projectRoot: project, env: {} },
      { projectRoot: project, env: { AGENTLOOP_HOME: path.join(dir, 'home') } },
      { projectRoot: project, env: { AGENTLOOP_HOME: 'relative-home' } },
      { dir: path.join(dir, 'given'), projectRoot: project, env: { AGENTLOOP_HOME: path.join(dir, 'home') } },
      { dir: 'relative-given', env: {} },
      { env: {} },
    ];
    for (const options of cases) {
      expect(resolveSessionsDir(options)).toBe(new FileSessionStore(options).dir);
    }
  });
});

describe('where the opened file lies', () => {
  test('on Linux the sandbox reads it from /proc/self/fd', async () => {
    const sandbox = await Sandbox.create({ readRoots: [project], writeRoot: out });
    expect(sandbox.procFd).toBe(process.platform === 'linux');
  });

  // Other platforms have no /proc/self/fd: the sandbox then checks that the real path, resolved again
  // after the open, names the file the descriptor holds. The same rules, run here on Linux.
  test.each([true, false])('the same rules hold with procFd %s', async (procFd) => {
    const sandbox = await Sandbox.create({ readRoots: [project], writeRoot: out, procFd, env: {} });
    expect(sandbox.procFd).toBe(procFd && process.platform === 'linux');
    await writeFile(path.join(project, 'a.md'), 'a');
    await writeFile(path.join(outside, 'secret.md'), 'SECRET');
    expect((await sandbox.readText(path.join(project, 'a.md'), 'read_file')).content).toBe('a');
    await expect(sandbox.readText(path.join(outside, 'secret.md'), 'read_file')).rejects.toThrow(
      /Access denied/,
    );
    mkfifo(path.join(project, 'pipe'));
    expect(await failureOf(sandbox.readText(path.join(project, 'pipe'), 'read_file'))).toMatchObject({
      message: expect.stringMatching(/Not a regular file/),
    });
    const saved = await sandbox.writeText(path.join(out, 'deep', 'er', 'doc.md'), 'doc');
    expect(saved.path).toBe(path.join(out, 'deep', 'er', 'doc.md'));
    expect(await readFile(saved.path, 'utf8')).toBe('doc');
    await link(path.join(outside, 'secret.md'), path.join(out, 'hard.md'));
    await expect(sandbox.writeText(path.join(out, 'hard.md'), 'x')).rejects.toThrow(/hard link/);
    expect(await readFile(path.join(outside, 'secret.md'), 'utf8')).toBe('SECRET');
    await mkdir(path.join(project, '.agentloop', 'sessions'), { recursive: true });
    await writeFile(path.join(project, '.agentloop', 'sessions', 'x.json'), '{}');
    await expect(
      sandbox.readText(path.join(project, '.agentloop', 'sessions', 'x.json'), 'read_file'),
    ).rejects.toThrow(/sessions folder/);
  });
});
