import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { cp, link, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  type BundleAgent,
  type LoadBundleAgentOptions,
  loadBundleAgent,
} from '../src/bundle/bundle-agent.js';
import { BundleError } from '../src/bundle/bundle-error.js';
import { Sandbox } from '../src/bundle/sandbox.js';

// Issue 15, the items besides the race (see bundle-sandbox-race.test.ts): only regular files are read,
// and hard links in the output folder are never written through. Real files and real FIFOs.

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

describe('where the opened file lies', () => {
  test('on Linux the sandbox reads it from /proc/self/fd', async () => {
    const sandbox = await Sandbox.create({ readRoots: [project], writeRoot: out });
    expect(sandbox.procFd).toBe(process.platform === 'linux');
  });

  // Other platforms have no /proc/self/fd: the sandbox then checks that the real path, resolved again
  // after the open, names the file the descriptor holds. The same rules, run here on Linux.
  test.each([true, false])('the same rules hold with procFd %s', async (procFd) => {
    const sandbox = await Sandbox.create({ readRoots: [project], writeRoot: out, procFd });
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
  });
});
