import { execFileSync } from 'node:child_process';
import { constants, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openedPath, openFlags, probeProcFd, procFdWorks } from '../src/bundle/sandbox/checked-open.js';

// What the descriptor half of the sandbox takes from the platform: the open flags it has and whether
// /proc/self/fd says where a descriptor lies. Each answer is given to real opens of real files, so
// what a flag does is checked, not which bits it has: a platform without O_NOFOLLOW (Windows) is
// the same flags without it, and a platform without /proc is a probe told another platform's name.

let dir: string;
let folder: string;
let file: string;
let outside: string;
let link: string;
let fifo: string;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-platform-')));
  folder = path.join(dir, 'folder');
  file = path.join(dir, 'file.md');
  outside = path.join(dir, 'outside.md');
  link = path.join(dir, 'link.md');
  fifo = path.join(dir, 'pipe');
  await mkdir(folder);
  await writeFile(file, 'kept');
  await writeFile(outside, 'outside');
  await symlink(outside, link);
  await symlink(folder, path.join(dir, 'folder-link'));
  execFileSync('mkfifo', [fifo]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The error code of an open with `flags`, or 'opened' (the descriptor closed again). */
async function openWith(at: string, flags: number): Promise<string> {
  try {
    await (await open(at, flags, 0o666)).close();
    return 'opened';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

const withoutNoFollow = openFlags({ ...constants, O_NOFOLLOW: undefined });

describe('the open flags', () => {
  it('never follow a final symlink, on reads, writes and folders', async () => {
    const flags = openFlags();
    expect(await openWith(link, flags.read)).toBe('ELOOP');
    expect(await openWith(link, flags.write)).toBe('ELOOP');
    expect(await openWith(path.join(dir, 'folder-link'), flags.folder)).toMatch(/^(ELOOP|ENOTDIR)$/);
    expect(await readFile(outside, 'utf8')).toBe('outside');
  });

  it('follow it where the platform has no O_NOFOLLOW; the opened path then says where it led', async () => {
    expect(await openWith(link, withoutNoFollow.read)).toBe('opened');
    expect(await openWith(path.join(dir, 'folder-link'), withoutNoFollow.folder)).toBe('opened');
    for (const useProc of [true, false]) {
      const handle = await open(link, withoutNoFollow.read);
      try {
        expect(await openedPath(handle, link, 'link.md', useProc, 'Access denied')).toBe(outside);
      } finally {
        await handle.close();
      }
    }
  });

  it('open a named pipe with no writer without blocking, unless the platform cannot', async () => {
    expect(await openWith(fifo, openFlags().read)).toBe('opened');
    // A write to a pipe no one reads fails at once (ENXIO) instead of waiting for a reader.
    expect(await openWith(fifo, openFlags().write)).toBe('ENXIO');
    const blocking = openFlags({ ...constants, O_NONBLOCK: undefined });
    const opening = open(fifo, blocking.read).then((handle) => handle.close());
    const waited = await Promise.race([
      opening.then(() => 'opened'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 200)),
    ]);
    // Release the blocked open: a writer arrives.
    await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
    await opening;
    expect(waited).toBe('still waiting');
  });

  it('open folders only as folders, and a file without the folder flag', async () => {
    expect(await openWith(folder, openFlags().folder)).toBe('opened');
    expect(await openWith(file, openFlags().folder)).toBe('ENOTDIR');
    expect(await openWith(file, openFlags({ ...constants, O_DIRECTORY: undefined }).folder)).toBe('opened');
  });

  it('create a missing file to write, and never truncate an existing one', async () => {
    const created = path.join(dir, 'created.md');
    expect(await openWith(created, openFlags().write)).toBe('opened');
    expect(await readFile(created, 'utf8')).toBe('');
    expect(await openWith(file, openFlags().write)).toBe('opened');
    expect(await readFile(file, 'utf8')).toBe('kept');
    // Reads create nothing.
    expect(await openWith(path.join(dir, 'never.md'), openFlags().read)).toBe('ENOENT');
  });

  it('are read-only for reads and folders, write-only for writes', async () => {
    const flags = openFlags();
    const read = await open(file, flags.read);
    const write = await open(file, flags.write);
    try {
      await expect(read.write('x')).rejects.toMatchObject({ code: 'EBADF' });
      await expect(write.read(Buffer.alloc(1), 0, 1, 0)).rejects.toMatchObject({ code: 'EBADF' });
    } finally {
      await read.close();
      await write.close();
    }
    expect(await readFile(file, 'utf8')).toBe('kept');
  });
});

describe('the /proc probe', () => {
  it('says no on every platform but Linux, without looking', async () => {
    for (const platform of ['darwin', 'win32', 'freebsd', 'openbsd', 'sunos', 'aix'] as const) {
      expect(await probeProcFd(platform)).toBe(false);
    }
  });

  it.runIf(process.platform === 'linux')(
    'says yes on Linux with /proc: a folder reads its path back',
    async () => {
      expect(await probeProcFd('linux')).toBe(true);
      expect(await probeProcFd('linux', folder)).toBe(true);
    },
  );

  it.runIf(process.platform === 'linux')(
    'says no when the folder does not read back as given, or cannot be opened as a folder',
    async () => {
      // Through a symlink: the descriptor names the real folder, not the path given.
      expect(await probeProcFd('linux', path.join(dir, 'folder-link'))).toBe(false);
      expect(await probeProcFd('linux', path.join(dir, 'missing'))).toBe(false);
      expect(await probeProcFd('linux', file)).toBe(false);
    },
  );

  it.runIf(process.platform === 'linux')('leaves no descriptor open, whatever it answers', async () => {
    // Descriptors on what the probes open ('/' and below the test's folder), not every descriptor of
    // the worker: another file's socket closing meanwhile must not count.
    const descriptors = () =>
      readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          const target = readlinkSync(`/proc/self/fd/${fd}`);
          return target === '/' || target.startsWith(`${dir}${path.sep}`) ? [target] : [];
        } catch {
          return []; // closed between the listing and the read
        }
      });
    const before = descriptors();
    for (let i = 0; i < 5; i++) {
      await probeProcFd('linux');
      await probeProcFd('linux', path.join(dir, 'folder-link'));
    }
    expect(descriptors()).toEqual(before);
  });

  it('is probed once a process: the same answer every time', async () => {
    const first = procFdWorks();
    expect(procFdWorks()).toBe(first);
    expect(await first).toBe(process.platform === 'linux');
  });
});
