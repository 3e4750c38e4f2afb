import { execFileSync } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { link, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleErrorCode } from '../src/bundle/bundle-error.js';
import { kindOf } from '../src/bundle/sandbox/checked-open.js';
import { Sandbox } from '../src/bundle/sandbox/sandbox.js';
import { expectRefusal, refusal } from './support/bundle-refusal.js';

// What a refusal of the sandbox carries besides its message: the error code callers branch on
// (`status()` says outside-root only for `sandbox`; tools report not-found and too-large apart) and
// the file the caller asked for. Every refusal, on both ways of checking the opened file (/proc and
// the portable one), and nothing left behind: no descriptor stays open after a read, a write or a
// refusal. Written for the mutation run (docs/testing.md): these are the facts the older tests did
// not pin down.

let dir: string;
let project: string;
let out: string;
let outside: string;
let sessions: string;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-refusals-')));
  project = path.join(dir, 'project');
  out = path.join(project, 'out');
  outside = path.join(dir, 'outside');
  // A session store inside the project, configured through a symlink from elsewhere.
  sessions = path.join(project, 'store', 'sessions');
  for (const folder of [out, outside, sessions]) await mkdir(folder, { recursive: true });
  await writeFile(path.join(project, 'five.txt'), '12345');
  await writeFile(path.join(project, 'six.txt'), '123456');
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await writeFile(path.join(out, 'file'), 'a file where a folder is expected');
  await writeFile(path.join(sessions, 'snapshot.json'), '{}');
  await mkdir(path.join(project, 'folder'));
  await mkdir(path.join(out, 'folder'));
  execFileSync('mkfifo', [path.join(project, 'pipe')]);
  execFileSync('mkfifo', [path.join(out, 'pipe.md')]);
  await symlink(path.join(project, 'loop-b'), path.join(project, 'loop-a'));
  await symlink(path.join(project, 'loop-a'), path.join(project, 'loop-b'));
  await symlink(path.join(project, 'gone'), path.join(project, 'dangling'));
  await writeFile(path.join(outside, 'victim.md'), 'victim');
  await link(path.join(outside, 'victim.md'), path.join(out, 'hard.md'));
  await symlink(path.join(project, 'store'), path.join(dir, 'store-link'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * This process's descriptors open on files below the test's folder. Counting every descriptor made
 * the test fail when another file's socket or child pipe in the same worker closed meanwhile (CI,
 * 2026-11-28: 113 after against 114 before); a descriptor the sandbox leaked would point in here.
 */
function openDescriptors(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(`${dir}${path.sep}`) ? [target] : [];
    } catch {
      return []; // closed between the listing and the read
    }
  });
}

const sandboxOf = (procFd: boolean, maxReadBytes = 5) =>
  Sandbox.create({
    readRoots: [project],
    writeRoot: out,
    sessionsDirs: [path.join(dir, 'store-link', 'sessions')],
    procFd,
    maxReadBytes,
    env: {},
  });

describe.each([
  ['descriptors from /proc', true],
  ['the portable check', false],
])('sandbox refusals (%s)', (_, procFd) => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await sandboxOf(procFd);
  });

  const reads: [string, string, BundleErrorCode][] = [
    ['a relative path', 'notes/a.md', 'sandbox'],
    ['a home-relative path', '~/.ssh/id_rsa', 'sandbox'],
    ['a path with a null byte', '/etc/passwd\0.md', 'sandbox'],
    ['a file outside the roots', '{outside}/secret.txt', 'sandbox'],
    ['a file in a sessions folder, by its real path', '{store}/sessions/snapshot.json', 'sandbox'],
    ['a symlink loop', '{project}/loop-a', 'sandbox'],
    ['a dangling symlink', '{project}/dangling', 'sandbox'],
    ['a missing file', '{project}/missing.txt', 'not-found'],
    ['a file below a missing folder', '{project}/nowhere/missing.txt', 'not-found'],
    ['a file over the size limit', '{project}/six.txt', 'too-large'],
    ['a folder', '{project}/folder', 'invalid-input'],
    ['a named pipe', '{project}/pipe', 'invalid-input'],
  ];
  it.each(reads)('a read of %s is refused with its code, naming the file', async (_, given, code) => {
    const input = expand(given);
    const shown = input.includes('\0') ? JSON.stringify(input) : input;
    expectRefusal(await refusal(sandbox.readText(input, 'read_file')), { code, file: input, shown });
  });

  const writes: [string, string, BundleErrorCode][] = [
    ['a file outside the output folder', '{project}/five.txt', 'sandbox'],
    ['the output folder itself', '{out}', 'sandbox'],
    ['a hard link', '{out}/hard.md', 'sandbox'],
    ['a file below a file', '{out}/file/below.md', 'sandbox'],
    ['a folder', '{out}/folder', 'invalid-input'],
    ['a named pipe', '{out}/pipe.md', 'invalid-input'],
  ];
  it.each(writes)('a write to %s is refused with its code, naming the file', async (_, given, code) => {
    const input = expand(given);
    expectRefusal(await refusal(sandbox.writeText(input, 'x')), { code, file: input });
  });

  it('refuses a device file in the roots, for reads and writes (root may make one)', async () => {
    const device = path.join(out, `null-${procFd}`);
    // Made again on a retry (the mutation config retries a failed test once): a left-over device
    // would make mknod fail and the test pass without checking anything.
    await rm(device, { force: true });
    try {
      execFileSync('mknod', [device, 'c', '1', '3'], { stdio: 'ignore' });
    } catch {
      return; // not allowed here: nothing to check
    }
    // One call at a time: a second promise made before the first is awaited could reject unobserved.
    for (const call of [() => sandbox.readText(device, 'read_file'), () => sandbox.writeText(device, 'x')]) {
      const error = await refusal(call());
      expect({ code: error.code, file: error.file }).toEqual({ code: 'invalid-input', file: device });
      expect(error.message).toContain(device);
    }
  });

  it('leaves what a refused write aimed at as it was', async () => {
    await refusal(sandbox.writeText(path.join(out, 'hard.md'), 'overwritten'));
    expect(await readFile(path.join(outside, 'victim.md'), 'utf8')).toBe('victim');
  });

  it('reads a file exactly at the size limit; one byte more is too large', async () => {
    expect((await sandbox.readText(path.join(project, 'five.txt'), 'read_file')).content).toBe('12345');
    const six = path.join(project, 'six.txt');
    const error = await refusal(sandbox.readText(six, 'read_file'));
    expectRefusal(error, { code: 'too-large', file: six });
    // Its size, then the limit.
    expect(error.message.replace(six, '')).toMatch(/\b6\b.*\b5\b/);
  });

  it('reads back what it wrote: the output folder is readable too', async () => {
    const target = path.join(out, 'deep', 'er', 'note.md');
    await sandbox.writeText(target, 'ünï');
    expect(await sandbox.readText(target, 'read_file')).toMatchObject({
      path: target,
      content: 'ünï',
      bytes: 5,
    });
  });

  it('tells exists, missing and outside-root apart, and does not call a path it cannot judge outside-root', async () => {
    expect(await sandbox.status(path.join(project, 'five.txt'))).toBe('exists');
    expect(await sandbox.status(path.join(project, 'missing.txt'))).toBe('missing');
    expect(await sandbox.status(path.join(outside, 'secret.txt'))).toBe('outside-root');
    expect(await sandbox.status('relative.txt')).toBe('outside-root');
    // A name longer than any file system allows: the error is not the sandbox's to swallow.
    const tooLong = path.join(project, 'x'.repeat(300));
    await expect(sandbox.status(tooLong)).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
  });

  it('keeps no descriptor open after reads, writes and refusals', async () => {
    const before = openDescriptors();
    for (let i = 0; i < 20; i++) {
      await sandbox.readText(path.join(project, 'five.txt'), 'read_file');
      await sandbox.writeText(path.join(out, 'deep', `n${i}.md`), 'x');
      await refusal(sandbox.readText(path.join(project, 'folder'), 'read_file'));
      await refusal(sandbox.readText(path.join(project, 'six.txt'), 'read_file'));
      await refusal(sandbox.writeText(path.join(out, 'hard.md'), 'x'));
      await refusal(sandbox.writeText(path.join(out, 'folder'), 'x'));
    }
    expect(openDescriptors()).toEqual(before);
  });
});

describe('the sandbox', () => {
  it('uses descriptors from /proc on Linux unless told not to', async () => {
    expect((await sandboxOf(true)).procFd).toBe(process.platform === 'linux');
    expect((await sandboxOf(false)).procFd).toBe(false);
  });

  it('refuses the sessions folders as configured and as real paths; $AGENTLOOP_HOME only when set', async () => {
    const link = path.join(dir, 'store-link', 'sessions');
    const own = path.join(project, '.agentloop', 'sessions');
    expect((await sandboxOf(true)).sessionsDirs).toEqual([
      link,
      sessions,
      own,
      path.join(out, '.agentloop', 'sessions'),
    ]);
    expect((await Sandbox.create({ readRoots: [project], env: {} })).sessionsDirs).toEqual([own]);
    const home = path.join(dir, 'home');
    const withHome = await Sandbox.create({ readRoots: [project], env: { AGENTLOOP_HOME: home } });
    expect(withHome.sessionsDirs).toEqual([own, path.join(home, 'sessions')]);
    // A folder whose real path cannot be told (below a dangling symlink) counts as configured.
    const below = path.join(project, 'dangling', 'sessions');
    const dangling = await Sandbox.create({ readRoots: [project], sessionsDirs: [below], env: {} });
    expect(dangling.sessionsDirs).toEqual([below, own]);
  });

  it('reports each read to onFileLoad: the real path, why, the bytes; nothing for a refusal', async () => {
    const events: unknown[] = [];
    const sandbox = await Sandbox.create({
      readRoots: [project],
      onFileLoad: (event) => events.push(event),
      env: {},
    });
    await sandbox.readText(path.join(project, 'five.txt'), 'workflow');
    await refusal(sandbox.readText(path.join(project, 'folder'), 'read_file'));
    expect(events).toEqual([{ path: path.join(project, 'five.txt'), reason: 'workflow', bytes: 5 }]);
  });

  it('says why an empty path is refused', async () => {
    const error = await refusal((await sandboxOf(true)).readText('', 'read_file'));
    expect(error.code).toBe('sandbox');
    expect(error.message).toMatch(/empty/);
  });

  it('refuses a path that is not a string (hostile tool arguments) with a sandbox error', async () => {
    const sandbox = await sandboxOf(true);
    for (const input of [42, null, undefined, { path: '/etc/passwd' }, '']) {
      const error = await refusal(sandbox.readText(input as unknown as string, 'read_file'));
      expect(error.code).toBe('sandbox');
    }
  });

  it('lets reads reach the output folder when it lies outside the read roots', async () => {
    const sandbox = await Sandbox.create({
      readRoots: [path.join(project, 'folder')],
      writeRoot: out,
      env: {},
    });
    await sandbox.writeText(path.join(out, 'own.md'), 'mine');
    expect((await sandbox.readText(path.join(out, 'own.md'), 'read_file')).content).toBe('mine');
  });

  it('refuses every write when no output folder is configured, naming the file', async () => {
    const sandbox = await Sandbox.create({ readRoots: [project], env: {} });
    const input = path.join(project, 'new.md');
    const error = await refusal(sandbox.writeText(input, 'x'));
    expect({ code: error.code, file: error.file }).toEqual({ code: 'sandbox', file: input });
    expect(error.message).toContain(input);
  });

  it('withReadRoots adds folders to read and keeps the output folder', async () => {
    const sandbox = await sandboxOf(true);
    const wider = await sandbox.withReadRoots([outside]);
    expect((await refusal(wider.readText(path.join(outside, 'secret.txt'), 'skill'))).code).toBe('too-large');
    await wider.writeText(path.join(out, 'still.md'), 'yes');
    expect(wider.writeRoot).toBe(out);
    expect(await sandbox.status(path.join(outside, 'secret.txt'))).toBe('outside-root');
  });

  it('describes every kind of non-regular file differently', async () => {
    const { lstat } = await import('node:fs/promises');
    const kinds = await Promise.all(
      [
        path.join(project, 'folder'),
        path.join(project, 'pipe'),
        '/dev/null',
        path.join(project, 'dangling'),
      ].map(async (p) => kindOf(await lstat(p))),
    );
    const socketLike = kindOf({
      isDirectory: () => false,
      isFIFO: () => false,
      isSocket: () => true,
      isCharacterDevice: () => false,
      isBlockDevice: () => false,
      isSymbolicLink: () => false,
    } as never);
    const blockLike = kindOf({
      isDirectory: () => false,
      isFIFO: () => false,
      isSocket: () => false,
      isCharacterDevice: () => false,
      isBlockDevice: () => true,
      isSymbolicLink: () => false,
    } as never);
    const all = [
      ...kinds,
      socketLike,
      blockLike,
      kindOf((await import('node:fs')).lstatSync(path.join(project, 'five.txt'))),
    ];
    expect(all.every((k) => k.length > 0)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
  });
});

function expand(given: string): string {
  return given
    .replace('{project}', project)
    .replace('{outside}', outside)
    .replace('{out}', out)
    .replace('{store}', path.join(project, 'store'));
}
