import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { buildDist, cliPath } from './build-dist.js';

/** A scripted model that asks to save a file (approval needed), then answers: for `--scenario`. */
export const saveScenario = `turns:
  - toolCalls:
      - name: save_output
        arguments: { file_path: "{output_folder}/notes.md", content: "hello notes" }
  - content: Saved the notes.
`;

/** A running `agentloop worker`: its process, its exit code, its stderr so far and a wait for a line. */
export interface CliWorker {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Resolves once stderr matches `pattern`; rejects when the worker exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stderr(): string;
}

/**
 * The set-up the `agentloop worker` / `send` test files share. Call at the top of a test file: before
 * its tests `dist/` is built and a temp folder made with `files` written into it (name to text); after
 * them every worker started is killed, the `cleanups` pushed run (last first) and the folder removed.
 */
export function cliWorkerWorkspace(prefix: string, files: Record<string, string>) {
  let work = '';
  const workers: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    await buildDist();
    work = await mkdtemp(path.join(tmpdir(), prefix));
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(work, name), text);
  }, 180_000);

  afterAll(async () => {
    for (const child of workers) child.kill('SIGKILL');
    const failed: unknown[] = [];
    for (const step of cleanups.reverse()) await step().catch((error: unknown) => failed.push(error));
    await rm(work, { recursive: true, force: true });
    if (failed.length > 0) throw new AggregateError(failed, `${failed.length} clean-up step(s) failed`);
  });

  return {
    /** The temp folder (set once the tests start). */
    work: () => work,
    /** Pushes a step for afterAll (a schema or database to drop, a server to stop). */
    cleanup(step: () => Promise<void>): void {
      cleanups.push(step);
    },
    /** Starts `node dist/cli/main.js worker ...args` in the temp folder, without OpenAI variables. */
    startWorker(args: string[]): CliWorker {
      const child = spawn(process.execPath, [cliPath, 'worker', ...args], {
        cwd: work,
        env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      workers.push(child);
      let stderr = '';
      const waiters = new Set<() => void>();
      child.stderr.setEncoding('utf8').on('data', (s: string) => {
        stderr += s;
        for (const check of waiters) check();
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      // 'close' comes after the last stderr data: a line printed just before the exit is still seen.
      const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      const waitFor = (pattern: RegExp, timeoutMs = 30_000) =>
        new Promise<void>((resolve, reject) => {
          const done = (error?: Error) => {
            waiters.delete(check);
            clearTimeout(timer);
            if (error) reject(error);
            else resolve();
          };
          const never = (why: string) =>
            new Error(`worker never printed ${pattern} (${why}); it printed:\n${stderr}`);
          const check = () => {
            if (pattern.test(stderr)) done();
          };
          const timer = setTimeout(() => done(never(`waited ${timeoutMs} ms`)), timeoutMs);
          waiters.add(check);
          check();
          void closed.then((code) => {
            if (pattern.test(stderr)) done();
            else done(never(`exited with ${code}`));
          });
        });
      return { child, exited, waitFor, stderr: () => stderr };
    },
  };
}
