import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';
import { Tmux } from './support/tmux.js';

/**
 * Issue 16 in a real terminal (tmux): which model answers, what a retry says, and the one approval
 * rule of `run` and `chat`. The built CLI runs as users run it.
 */
const BUNDLE = path.join(repoRoot, 'bundles', 'requirements-workflow');
const tmux = new Tmux('cli-terminal');
let work: string;

const SAVE_SCENARIO = [
  'turns:',
  '  - toolCalls:',
  '      - name: save_output',
  '        arguments: { file_path: "{output_folder}/note.md", content: "# Note" }',
  '  - content: "Done: the note is handled."',
].join('\n');

beforeAll(async () => {
  await buildDist();
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'cli-terminal-'));
}, 180_000);

afterAll(async () => {
  tmux.killServer();
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

async function folder(name: string): Promise<string> {
  const dir = path.join(work, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Columns for checks of whole lines: the chat word-wraps to the terminal's width, and these stay on one row. */
const WIDE = 250;

/** The argv of `run` or `chat` with the example bundle's facilitator in `dir`, then `rest`. */
function facilitatorArgs(command: 'run' | 'chat', dir: string, ...rest: string[]): string[] {
  return [command, '--bundle', BUNDLE, '--agent', 'intake-facilitator', '--project', dir, ...rest];
}

describe('which model answers', () => {
  it('chat --scenario: the header names the scenario file, not "built-in scripted model"', async () => {
    const dir = await folder('scenario');
    const scenario = path.join(dir, 'hello.yaml');
    await writeFile(scenario, 'turns:\n  - content: Hello from the scenario.\n');
    tmux.start('scenario', facilitatorArgs('chat', dir, '--scenario', scenario), { cwd: dir, columns: WIDE });
    const text = await tmux.waitFor('scenario', /you ›/);
    // The scenario's path is as long as the repository's: compared without the line breaks it may get.
    const squashed = (s: string) => s.replace(/\s+/g, '');
    expect(squashed(text)).toContain(
      squashed(`model: scenario ${scenario} on the scripted server at http://127.0.0.1:`),
    );
    expect(text).not.toMatch(/built-in scripted model/);
    tmux.type('scenario', 'hi');
    // Typed as soon as the answer shows, before the prompt is back: type-ahead is kept, as terminals do.
    await tmux.waitFor('scenario', /Hello from the scenario\./);
    tmux.type('scenario', '/exit');
    await tmux.waitFor('scenario', /\[exit 0\]/);
  }, 120_000);

  it('a copy of the example bundle brings its scripted demo: the facilitator answers, the header says whose', async () => {
    const dir = await folder('copy');
    const copy = path.join(dir, 'my-bundle');
    await cp(BUNDLE, copy, { recursive: true });
    tmux.start('copy', ['chat', '--bundle', copy, '--agent', 'intake-facilitator', '--project', dir], {
      cwd: dir,
      columns: WIDE,
    });
    const text = await tmux.waitFor('copy', /you ›/);
    expect(text).toMatch(
      /model: the bundle's scripted demo \(scenarios\/intake-facilitator\.yaml\) at http:\/\/127\.0\.0\.1:\d+\/v1; set OPENAI_API_KEY for a real model/,
    );
    tmux.type('copy', '*help');
    await tmux.waitFor('copy', /Here is what I can do\.[\s\S]*5\. \*exit/); // then type-ahead
    tmux.type('copy', '/exit');
    await tmux.waitFor('copy', /\[exit 0\]/);
  }, 120_000);
});

describe('a model server that is not there', () => {
  it('chat says it could not reach the URL and why, retrying; never "the reply was cut off"', async () => {
    const dir = await folder('refused');
    const listener = createServer();
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const { port } = listener.address() as { port: number };
    await new Promise((resolve) => listener.close(resolve));
    const url = `http://127.0.0.1:${port}/v1`;
    tmux.start('refused', facilitatorArgs('chat', dir, '--base-url', url, '--api-key', 'k'), {
      cwd: dir,
      columns: WIDE,
    });
    await tmux.waitFor('refused', /you ›/);
    tmux.type('refused', 'hello');
    const text = await tmux.waitFor('refused', /The turn failed/, 15_000);
    expect(text).toContain(
      `↻ could not reach ${url}: connection refused (ECONNREFUSED 127.0.0.1:${port}); retrying in`,
    );
    expect(text).toMatch(/retrying in \d+\.\d s \(attempt 3 of 4\)/);
    expect(text).not.toMatch(/cut off|stream discarded|fetch failed/);
    tmux.type('refused', '/exit');
    await tmux.waitFor('refused', /\[exit 0\]/);
  }, 120_000);
});

describe('one approval rule for run and chat', () => {
  it('run in a terminal asks before save_output runs; y writes the file, the answer is printed', async () => {
    const dir = await folder('run-asks');
    const scenario = path.join(dir, 'save.yaml');
    await writeFile(scenario, SAVE_SCENARIO);
    tmux.start('run-asks', facilitatorArgs('run', dir, '--scenario', scenario, 'save it'), { cwd: dir });
    const text = await tmux.waitFor('run-asks', /Allow\? \[y\]es \/ \[n\]o \(reason\) ›/);
    expect(text).toMatch(
      // The model's call on the progress line; under it the path it writes, its variables filled.
      /\? approval needed: save_output .*\{output_folder\}.*\n\s+file_path: docs\/requirements\/note\.md\n\s+content: # Note\n\s+Allow\?/,
    );
    expect(await readdir(dir)).toEqual(['save.yaml']);
    tmux.type('run-asks', 'y');
    await tmux.waitFor('run-asks', /Done: the note is handled\.[\s\S]*\[exit 0\]/);
    expect(await readFile(path.join(dir, 'docs', 'requirements', 'note.md'), 'utf8')).toBe('# Note');
  }, 120_000);

  it('run in a terminal: n with a reason declines, and the model is told the reason', async () => {
    const dir = await folder('run-declines');
    const scenario = path.join(dir, 'save.yaml');
    await writeFile(scenario, SAVE_SCENARIO);
    tmux.start('run-declines', facilitatorArgs('run', dir, '--scenario', scenario, '--json', 'save it'), {
      cwd: dir,
    });
    await tmux.waitFor('run-declines', /Allow\?/);
    tmux.type('run-declines', 'n not today');
    const text = await tmux.waitFor('run-declines', /\[exit 0\]/);
    expect(text).toContain('Reason: not today');
    expect(await readdir(dir)).toEqual(['save.yaml']);
  }, 120_000);

  it('chat --yes approves every call: save_output runs without asking', async () => {
    const dir = await folder('chat-yes');
    const scenario = path.join(dir, 'save.yaml');
    await writeFile(scenario, SAVE_SCENARIO);
    const result = await runCli(facilitatorArgs('chat', dir, '--scenario', scenario, '--yes'), {
      cwd: dir,
      input: 'save it\n/exit\n',
      timeoutMs: 90_000, // a hang fails it; a loaded machine may take a while to start node
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(/Allow\?/);
    expect(result.stdout).toContain('Done: the note is handled.');
    expect(await readFile(path.join(dir, 'docs', 'requirements', 'note.md'), 'utf8')).toBe('# Note');
  }, 120_000);
});
