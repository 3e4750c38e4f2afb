import { existsSync } from 'node:fs';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  rmdir,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BundleError } from '../src/bundle/bundle-error.js';
import {
  openedPath,
  openForRead,
  openForWrite,
  type WriteTarget,
} from '../src/bundle/sandbox/checked-open.js';
import { expectRefusal, refusal } from './support/bundle-refusal.js';

// The descriptor half of the sandbox, given what a swap between the path check and the open leaves:
// called directly with the "checked" path already replaced (a symlink, a moved file, a folder gone),
// so each race the race tests can only hit sometimes is hit every time. Whatever was swapped in, the
// call refuses with a sandbox error naming the file asked for, and nothing is read or created outside.

let dir: string;
let out: string;
let outside: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-swaps-')));
  out = path.join(dir, 'out');
  outside = path.join(dir, 'outside');
  await mkdir(out);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.md'), 'secret');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const target = (
  real: string,
  useProc: boolean,
  check: WriteTarget['check'] = async () => {},
): WriteTarget => ({
  root: out,
  real,
  input: 'asked.md',
  useProc,
  check,
});

describe('a read whose checked file was swapped', () => {
  it('refuses a symlink put in place of the checked file, without following it', async () => {
    const swapped = path.join(out, 'note.md');
    await symlink(path.join(outside, 'secret.md'), swapped);
    const error = await refusal(openForRead(swapped, 'asked.md'));
    // Names the checked path that changed and the system's reason, not the link's target.
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [swapped, 'ELOOP', 'changed'],
      outcome: 'read',
    });
    expect(error.message).not.toContain('secret');
  });

  it('reports a file that vanished, or whose folder became a file, as not found', async () => {
    await writeFile(path.join(out, 'plain'), 'x');
    for (const gone of [path.join(out, 'gone.md'), path.join(out, 'plain', 'below.md')]) {
      expectRefusal(await refusal(openForRead(gone, 'asked.md')), { code: 'not-found', file: 'asked.md' });
    }
  });

  it('refuses a path the system cannot open at all as a sandbox error, not a raw one', async () => {
    const tooLong = path.join(out, 'x'.repeat(300));
    const error = await refusal(openForRead(tooLong, 'asked.md'));
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [tooLong, 'ENAMETOOLONG', 'cannot open'],
      outcome: 'read',
    });
  });
});

describe('where an opened file lies', () => {
  it.each([true, false])(
    'is where the descriptor is, not where the path points now (/proc: %s)',
    async (useProc) => {
      const asked = path.join(out, 'note.md');
      await writeFile(asked, 'mine');
      const handle = await openForRead(asked, 'note.md');
      try {
        expect(await openedPath(handle, asked, 'note.md', useProc, 'Access denied')).toBe(asked);
        // The opened file moves out; another file takes its name.
        await rename(asked, path.join(outside, 'moved.md'));
        await writeFile(asked, 'impostor');
        if (useProc) {
          expect(await openedPath(handle, asked, 'note.md', true, 'Access denied')).toBe(
            path.join(outside, 'moved.md'),
          );
        } else {
          const error = await refusal(openedPath(handle, asked, 'note.md', false, 'Access denied'));
          expectRefusal(error, {
            code: 'sandbox',
            file: 'note.md',
            names: [asked, 'changed'],
            outcome: 'read',
          });
        }
      } finally {
        await handle.close();
      }
    },
  );

  it('refuses, on the portable check, an opened file whose path is gone', async () => {
    const asked = path.join(out, 'note.md');
    await writeFile(asked, 'mine');
    const handle = await openForRead(asked, 'note.md');
    try {
      await rm(asked);
      const error = await refusal(openedPath(handle, asked, 'note.md', false, 'Write refused'));
      expectRefusal(error, {
        code: 'sandbox',
        file: 'note.md',
        names: [asked, 'changed'],
        outcome: 'written',
      });
    } finally {
      await handle.close();
    }
  });
});

describe('a write whose checked folders were swapped', () => {
  it('refuses, through descriptors, a folder swapped for a symlink leading out, creating nothing outside', async () => {
    await symlink(outside, path.join(out, 'sub'));
    const error = await refusal(openForWrite(target(path.join(out, 'sub', 'new.md'), true)));
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      // Linux says ENOTDIR for a symlink opened with O_DIRECTORY | O_NOFOLLOW, others ELOOP.
      names: [path.join(out, 'sub'), 'not a folder'],
      outcome: 'written',
    });
    expect(await readdir(outside)).toEqual(['secret.md']);
  });

  it('refuses, through descriptors, a file in the place of a folder', async () => {
    await writeFile(path.join(out, 'sub'), 'a file');
    const error = await refusal(openForWrite(target(path.join(out, 'sub', 'new.md'), true)));
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [path.join(out, 'sub'), 'ENOTDIR', 'not a folder'],
      outcome: 'written',
    });
  });

  it('refuses, through descriptors, a root that is not where its path says', async () => {
    const error = await refusal(
      openForWrite({ ...target(path.join(out, 'new.md'), true), root: `${out}/.` }),
    );
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [`${out}/.`, 'changed'],
      outcome: 'written',
    });
  });

  it.each([true, false])('refuses a final symlink in place of the file (/proc: %s)', async (useProc) => {
    await symlink(path.join(outside, 'secret.md'), path.join(out, 'new.md'));
    const error = await refusal(openForWrite(target(path.join(out, 'new.md'), useProc)));
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [path.join(out, 'new.md'), 'symlink'],
      outcome: 'written',
    });
    expect(await readFile(path.join(outside, 'secret.md'), 'utf8')).toBe('secret');
  });

  it.each([
    ['removed', 'ENOENT', async (sub: string) => rmdir(sub)],
    ['replaced by a file', 'ENOTDIR', async (sub: string) => rmdir(sub).then(() => writeFile(sub, 'x'))],
  ])('refuses, on the portable open, a folder %s between its check and the open', async (_, code, swap) => {
    const sub = path.join(out, 'sub');
    const real = path.join(sub, 'new.md');
    const error = await refusal(openForWrite(target(real, false, () => swap(sub))));
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [sub, code, 'changed'],
      outcome: 'written',
    });
    expect(existsSync(real)).toBe(false);
  });

  it('checks the parent again on the portable open: a refusal there stops the write', async () => {
    const real = path.join(out, 'sub', 'new.md');
    const checked: string[] = [];
    const stop = new BundleError('sandbox', 'refused by the check', { file: 'asked.md' });
    const error = await refusal(
      openForWrite(
        target(real, false, async (again) => {
          checked.push(again);
          throw stop;
        }),
      ),
    );
    expect(error).toBe(stop);
    expect(checked).toEqual([real]);
    expect(existsSync(real)).toBe(false);
  });
});
