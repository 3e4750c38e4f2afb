import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openForWrite, type WriteTarget } from '../src/bundle/sandbox/checked-open.js';
import { Sandbox } from '../src/bundle/sandbox/sandbox.js';
import { expectRefusal, refusal } from './support/bundle-refusal.js';

// What stands in the way of a write that no one swapped: a file where the output folder or one of
// the target's folders should be, a name longer than the file system allows, a folder or a named pipe
// where the file should be. On both ways of opening (descriptors from /proc, the portable one), each
// is a refusal naming the file asked for, the path in the way and the reason's kind (the system's
// error code, or what was found), never a raw system error and never a /proc/self/fd path.

let dir: string;
let out: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-in-the-way-')));
  out = path.join(dir, 'out');
  await mkdir(out);
  await writeFile(path.join(out, 'file'), 'a file where a folder is expected');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const checks: string[] = [];
const target = (real: string, useProc: boolean, root = out): WriteTarget => ({
  root,
  real,
  input: 'asked.md',
  useProc,
  check: async (again) => void checks.push(again),
});

describe.each([
  ['descriptors from /proc', true],
  ['the portable open', false],
])('a write with something in the way (%s)', (_, useProc) => {
  beforeEach(() => {
    checks.length = 0;
  });

  it('refuses an output folder that is a file, through the sandbox too', async () => {
    const root = path.join(out, 'file');
    const direct = await refusal(openForWrite(target(path.join(root, 'new.md'), useProc, root)));
    expectRefusal(direct, {
      code: 'sandbox',
      file: 'asked.md',
      names: [root, 'EEXIST', 'a file is in the place'],
      outcome: 'written',
    });
    const sandbox = await Sandbox.create({ readRoots: [dir], writeRoot: root, procFd: useProc, env: {} });
    const input = path.join(root, 'new.md');
    expectRefusal(await refusal(sandbox.writeText(input, 'x')), {
      code: 'sandbox',
      file: input,
      names: [root, 'EEXIST', 'a file is in the place'],
      outcome: 'written',
    });
  });

  it('refuses an output folder below a file, making nothing', async () => {
    const root = path.join(out, 'file', 'root');
    const error = await refusal(openForWrite(target(path.join(root, 'new.md'), useProc, root)));
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [root, 'ENOTDIR', 'a file is in the place'],
      outcome: 'written',
    });
    expect(checks).toEqual([]);
  });

  it('refuses a folder name longer than the file system allows, as a refusal naming it', async () => {
    const folder = path.join(out, 'x'.repeat(300));
    const error = await refusal(openForWrite(target(path.join(folder, 'new.md'), useProc)));
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [folder, 'ENAMETOOLONG', 'cannot make'],
      outcome: 'written',
    });
    expect(checks).toEqual([]);
  });

  it('refuses a file name longer than the file system allows, naming the path, not the descriptor', async () => {
    const real = path.join(out, 'deep', 'x'.repeat(300));
    const error = await refusal(openForWrite(target(real, useProc)));
    expectRefusal(error, {
      code: 'sandbox',
      file: 'asked.md',
      names: [real, 'ENAMETOOLONG', 'cannot open'],
      outcome: 'written',
    });
    expect(error.message).not.toContain('/proc/self/fd');
    // The folders on the way were made: they are inside the output folder.
    expect(await readdir(path.join(out, 'deep'))).toEqual([]);
  });

  it('says what was found where the file should be: a folder, a named pipe', async () => {
    await mkdir(path.join(out, 'folder.md'));
    execFileSync('mkfifo', [path.join(out, 'pipe.md')]);
    const folder = await refusal(openForWrite(target(path.join(out, 'folder.md'), useProc)));
    expectRefusal(folder, { code: 'invalid-input', file: 'asked.md', names: ['folder'] });
    const pipe = await refusal(openForWrite(target(path.join(out, 'pipe.md'), useProc)));
    expectRefusal(pipe, { code: 'invalid-input', file: 'asked.md', names: ['FIFO'] });
    expect(pipe.message).not.toContain('folder');
  });

  it('writes through folders that exist already, making the missing ones', async () => {
    await mkdir(path.join(out, 'a'));
    const handle = await openForWrite(target(path.join(out, 'a', 'b', 'new.md'), useProc));
    await handle.close();
    expect(existsSync(path.join(out, 'a', 'b', 'new.md'))).toBe(true);
    expect(checks).toEqual(useProc ? [] : [path.join(out, 'a', 'b', 'new.md')]);
  });
});
