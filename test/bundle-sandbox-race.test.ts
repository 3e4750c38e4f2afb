import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadBundleAgent } from '../src/bundle/bundle-agent.js';
import type { BundleAgent } from '../src/bundle/bundle-agent-types.js';
import type { Tool } from '../src/tools/define-tool.js';

// Issue 15: a second process swapping a folder for a symlink to outside the roots, between the
// sandbox's check and its open, let reads and writes escape. This test runs that process for real
// (a `node -e` child swapping two folders as fast as it can) while the real tools of a real bundle
// agent read and write through the swapped folders. No byte from outside may come back, and no file
// outside may be created or changed.

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLE = path.join(REPO, 'bundles', 'requirements-workflow');
const CALLS = 1200;
const CONCURRENCY = 8;

/**
 * The swapper: for each pair, the folder `link` is parked under another name and a symlink to
 * `target` (outside the roots) takes its place, then the symlink goes and the folder comes back, in a
 * loop. A write may re-create `link` as a folder in the gap; that folder is moved aside so the loop
 * never stalls.
 */
const SWAPPER = `
const fs = require('node:fs');
const pairs = JSON.parse(process.argv[1]);
const ignore = (f) => { try { f(); } catch {} };
// Each state lasts a little while (a busy wait of a few microseconds), so calls see both.
const hold = () => { const end = process.hrtime.bigint() + BigInt(process.argv[2]); while (process.hrtime.bigint() < end); };
let stray = 0;
process.stdout.write('ready\\n');
for (;;) {
  for (const p of pairs) {
    ignore(() => fs.renameSync(p.link, p.parked));
    ignore(() => fs.symlinkSync(p.target, p.link));
  }
  hold();
  for (const p of pairs) {
    ignore(() => fs.unlinkSync(p.link));
    try {
      fs.renameSync(p.parked, p.link);
    } catch {
      ignore(() => fs.renameSync(p.link, p.link + '.stray-' + stray++));
      ignore(() => fs.renameSync(p.parked, p.link));
    }
  }
  hold();
}
`;

let dir: string;
let project: string;
let out: string;
let outsideRead: string;
let outsideWrite: string;
let agent: BundleAgent;

function tool(name: string): Tool {
  const found = agent.definition.tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((e) => !e.isDirectory()).map((e) => path.join(e.parentPath, e.name));
}

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-race-')));
  const bundle = path.join(dir, 'bundle');
  project = path.join(dir, 'project');
  out = path.join(project, 'out');
  outsideRead = path.join(dir, 'outside-read');
  outsideWrite = path.join(dir, 'outside-write');
  await cp(EXAMPLE, bundle, { recursive: true });
  for (const folder of [path.join(project, 'swap-r'), path.join(out, 'swap-w'), outsideRead, outsideWrite]) {
    await mkdir(folder, { recursive: true });
  }
  await writeFile(path.join(project, 'swap-r', 'data.txt'), 'inside');
  await writeFile(path.join(outsideRead, 'data.txt'), 'SECRET');
  await writeFile(path.join(outsideWrite, 'victim.md'), 'ORIGINAL');
  await writeFile(path.join(out, 'swap-w', 'victim.md'), 'inside');
  agent = await loadBundleAgent({
    bundleRoot: bundle,
    agent: 'intake-facilitator',
    projectRoot: project,
    outputFolder: out,
  });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `count` calls of `run`, `CONCURRENCY` at a time, while the swapper runs. */
async function underSwapping(count: number, run: (i: number) => Promise<void>): Promise<void> {
  const pairs = [
    { link: path.join(project, 'swap-r'), parked: path.join(project, 'swap-r.parked'), target: outsideRead },
    { link: path.join(out, 'swap-w'), parked: path.join(out, 'swap-w.parked'), target: outsideWrite },
  ];
  const swapper: ChildProcess = spawn(process.execPath, ['-e', SWAPPER, JSON.stringify(pairs), '20000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    // The swapper spins: at the lowest priority it takes only idle CPU from the tests that run
    // beside this one (timing tests), and it still races (before the fix it won dozens of times).
    os.setPriority(swapper.pid!, 19);
    await once(swapper.stdout!, 'data');
    let next = 0;
    const worker = async () => {
      while (next < count) await run(next++);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    swapper.kill('SIGKILL');
    if (swapper.exitCode === null && swapper.signalCode === null) await once(swapper, 'exit');
    // Put each folder back where the swapper may have left it parked.
    for (const p of pairs) {
      if (!(await lstat(p.parked).catch(() => undefined))) continue;
      await rm(p.link, { recursive: true, force: true });
      await rename(p.parked, p.link);
    }
  }
}

describe('a second process swaps folders for symlinks while the tools run (issue 15)', () => {
  test('read_file never returns a byte from outside the roots, save_output never writes outside the output folder', async () => {
    const readFile_ = tool('read_file');
    const saveOutput = tool('save_output');
    const reads = { ok: 0, refused: 0, escaped: 0 };
    const writes = { ok: 0, refused: 0 };
    await underSwapping(CALLS, async (i) => {
      try {
        const result = (await readFile_.execute({ file_path: 'swap-r/data.txt' }, {} as never)) as {
          content: string;
        };
        if (result.content === 'SECRET') reads.escaped++;
        else reads.ok++;
      } catch {
        reads.refused++;
      }
      try {
        const name = i % 4 === 0 ? 'victim.md' : `doc-${i}.md`;
        await saveOutput.execute({ file_path: `swap-w/${name}`, content: `write ${i}` }, {} as never);
        writes.ok++;
      } catch {
        writes.refused++;
      }
    });
    const escapedFiles = (await filesUnder(outsideWrite)).filter((f) => path.basename(f) !== 'victim.md');
    const victim = await readFile(path.join(outsideWrite, 'victim.md'), 'utf8');
    const outsideNames = await readdir(outsideRead);
    console.log(
      `race: reads ${JSON.stringify(reads)}, writes ${JSON.stringify(writes)}, ` +
        `files created outside ${escapedFiles.length}, victim ${victim === 'ORIGINAL' ? 'intact' : 'overwritten'}`,
    );
    // Calls got through while the race ran, and once it stops the same calls all succeed: the
    // refusals above come from the race, not from a sandbox that refuses everything.
    expect(reads.ok + writes.ok).toBeGreaterThan(0);
    const calm = (await readFile_.execute({ file_path: 'swap-r/data.txt' }, {} as never)) as {
      content: string;
    };
    expect(calm.content).toBe('inside');
    await saveOutput.execute({ file_path: 'swap-w/victim.md', content: 'calm' }, {} as never);
    expect(await readFile(path.join(out, 'swap-w', 'victim.md'), 'utf8')).toBe('calm');
    expect(reads.escaped).toBe(0);
    expect(escapedFiles).toEqual([]);
    expect(victim).toBe('ORIGINAL');
    expect(outsideNames).toEqual(['data.txt']);
  });
});
