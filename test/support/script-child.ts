import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { buildDist, repoRoot } from './build-dist.js';

/** One child started by `run`: its JSON lines so far, and promises for the line awaited and the exit. */
export interface ScriptChild {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  /** All lines up to the first that `until` accepts; rejects if the child exits before it. */
  reached: Promise<Record<string, unknown>[]>;
  exited: Promise<void>;
}

/**
 * A Node script (`source`, importing from `dist/`) run as child processes that report JSON lines on
 * stdout, for the file's tests: before them `dist/` is built and the script written to a temp folder
 * inside the repository (`test-artifacts/`, git-ignored, so that it resolves 'zod' from node_modules);
 * after them every child is killed and the folder removed. `run(mode, config)` starts
 * `node script <mode> <config as JSON>`.
 */
export function scriptChildren<Mode extends string>(prefix: string, source: string) {
  let work = '';
  let script = '';
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    await buildDist();
    await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
    work = await mkdtemp(path.join(repoRoot, 'test-artifacts', prefix));
    script = path.join(work, 'child.mjs');
    await writeFile(script, source);
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await rm(work, { recursive: true, force: true, maxRetries: 5 });
  });

  return {
    /** The temp folder the script is in, for the children's files (set once the tests start). */
    work: () => work,
    run(mode: Mode, config: object, until: (line: Record<string, unknown>) => boolean): ScriptChild {
      const child = spawn(process.execPath, [script, mode, JSON.stringify(config)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const lines: Record<string, unknown>[] = [];
      let stderr = '';
      child.stderr!.on('data', (d) => {
        stderr += d;
      });
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      const reached = new Promise<Record<string, unknown>[]>((resolve, reject) => {
        let buffer = '';
        child.stdout!.on('data', (d) => {
          buffer += d;
          for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
            lines.push(JSON.parse(buffer.slice(0, i)) as Record<string, unknown>);
            buffer = buffer.slice(i + 1);
            if (until(lines.at(-1)!)) resolve(lines);
          }
        });
        child.on('exit', (code) => reject(new Error(`child ${mode} exited (${code}) early: ${stderr}`)));
      });
      return { child, lines, reached, exited };
    },
  };
}
