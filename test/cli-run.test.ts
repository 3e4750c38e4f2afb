import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { buildDist, repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';

const bundle = path.resolve(import.meta.dirname, '..', 'bundles', 'requirements-workflow');
/** The example bundle's intake facilitator, as `run` arguments. */
const INTAKE = ['--bundle', bundle, '--agent', 'intake-facilitator'];

async function cli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

describe('agentloop run', () => {
  it('prints the ExecutionResult as JSON with --json, events on stderr', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-run-'));
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(
      scenario,
      [
        'turns:',
        '  - toolCalls:',
        '      - name: save_output',
        '        arguments: { file_path: "{output_folder}/note.md", content: "# Note" }',
        '  - content: Saved the note.',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await cli([
      'run',
      '--bundle',
      bundle,
      '--agent',
      'intake-facilitator',
      '--project',
      dir,
      '--scenario',
      scenario,
      '--json',
      '--yes',
      'save a note',
    ]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({
      success: true,
      response: 'Saved the note.',
      terminateReason: 'completed',
      iterations: 2,
    });
    expect(stderr).toMatch(/save_output/);
    expect(await readdir(path.join(dir, 'docs', 'requirements'))).toEqual(['note.md']);
  });

  it('names the unknown agent and exits non-zero', async () => {
    const { code, stderr } = await cli([
      'run',
      '--bundle',
      bundle,
      '--agent',
      'nobody',
      '--scenario',
      'x.yaml',
      'hi',
    ]);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/nobody/);
  });

  it.each([
    [
      'a port the fetch standard blocks',
      'http://127.0.0.1:6000/v1',
      'the port is one the fetch standard blocks (bad port)',
    ],
    ['a URL that does not parse', 'http://exa mple.com/v1', 'not a valid URL (ERR_INVALID_URL)'],
  ])('%s: one attempt, one line naming the URL and the cause', async (_what, url, cause) => {
    const { code, stdout, stderr } = await cli(['run', ...INTAKE, '--base-url', url, '--api-key', 'k', 'hi']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).not.toContain('retrying');
    // picocolors colours the lines when CI is set (as CI runs do): read the text.
    expect(
      stripVTControlCharacters(stderr)
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('error:')),
    ).toEqual([`error: LLM call failed (connection) after 1 attempt: could not reach ${url}: ${cause}`]);
  });

  it('explains usage', async () => {
    // Without --bundle and --agent, run talks with a plain assistant: only the message is missing.
    const { code, stderr } = await cli(['run']);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'agentloop run: missing the message to send (the last argument, e.g. "*help"); see agentloop run --help\n',
    );
  });

  it('speaks the Responses API with --api responses, and names a bad --api', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-run-api-'));
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(scenario, 'turns:\n  - reasoning: Short answer.\n    content: Hello over responses.\n');
    const run = (api: string) => cli(['run', '--scenario', scenario, '--api', api, '--json', 'hi']);
    const { code, stdout } = await run('responses');
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ response: 'Hello over responses.', terminateReason: 'completed' });
    expect(result.messages.at(-1)).toMatchObject({ reasoning_items: [{ type: 'reasoning' }] });
    const bad = await run('completions');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--api must be chat-completions or responses, not "completions"/);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('agentloop run, built, as users run it (issue 16)', () => {
  let work: string;
  beforeAll(async () => {
    await buildDist();
    await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
    work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'cli-run-'));
  }, 180_000);
  afterAll(async () => {
    await rm(work, { recursive: true, force: true, maxRetries: 5 });
  });

  const SAVE_SCENARIO = [
    'turns:',
    '  - content: Saving the note now.',
    '    toolCalls:',
    '      - name: save_output',
    '        arguments: { file_path: "{output_folder}/note.md", content: "# Note" }',
    '  - content: "Done: the note is handled."',
  ].join('\n');

  async function project(name: string): Promise<{ dir: string; scenario: string }> {
    const dir = path.join(work, name);
    await mkdir(dir);
    const scenario = path.join(dir, 'save.yaml');
    await writeFile(scenario, SAVE_SCENARIO);
    return { dir, scenario };
  }
  const runArgs = (dir: string, scenario: string, ...more: string[]) => [
    'run',
    '--bundle',
    bundle,
    '--agent',
    'intake-facilitator',
    '--project',
    dir,
    '--scenario',
    scenario,
    ...more,
  ];

  it('prints the answer alone on stdout, once; progress (model text before calls, tools) on stderr', async () => {
    const { dir, scenario } = await project('pipe');
    const result = await runCli(runArgs(dir, scenario, '--yes', 'save a note'), { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Done: the note is handled.\n');
    expect(result.stderr).toContain(
      `model: scenario ${scenario} on the scripted server at http://127.0.0.1:`,
    );
    expect(result.stderr).toMatch(/Saving the note now\.\n▶ save_output/);
    expect(result.stderr).toMatch(/✓ save_output/);
    expect(result.stderr).not.toContain('Done: the note is handled.');
  });

  it('without a terminal and without --yes, save_output is declined with a note; nothing is written', async () => {
    const { dir, scenario } = await project('no-terminal');
    const result = await runCli(runArgs(dir, scenario, '--json', 'save a note'), { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      '✗ save_output not run: it needs approval and there is no terminal to ask on; run with --yes to approve every call',
    );
    expect(existsSync(path.join(dir, 'docs'))).toBe(false);
    const answer = JSON.parse(result.stdout);
    const told = answer.messages.find((m: { role: string }) => m.role === 'tool').content;
    expect(told).toContain('agentloop run had no terminal to ask for approval on');
  });

  it('--yes approves it: the file is written', async () => {
    const { dir, scenario } = await project('yes');
    const result = await runCli(runArgs(dir, scenario, '--yes', 'save a note'), { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(path.join(dir, 'docs', 'requirements', 'note.md'), 'utf8')).toBe('# Note');
  });

  it('a server that is not there: the URL and ECONNREFUSED, each retry with its wait, no "stream discarded"', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/v1`;
    const result = await runCli(
      ['run', '--bundle', bundle, '--agent', 'intake-facilitator', '--base-url', url, '--api-key', 'k', 'hi'],
      { cwd: work },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const refused = `could not reach ${url}: connection refused (ECONNREFUSED 127.0.0.1:${port})`;
    expect(result.stderr).toContain(`↻ ${refused}; retrying in `);
    expect(result.stderr).toMatch(/retrying in \d+\.\d s \(attempt 2 of 4\)/);
    expect(result.stderr).toContain(`error: LLM call failed (connection) after 4 attempts: ${refused}`);
    expect(result.stderr).not.toMatch(/stream discarded|fetch failed|Connection error\./);
  });

  it("the README's run examples work without an API key", async () => {
    const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## CLI\n'));
    const block = section.slice(
      section.indexOf('```sh\n') + 6,
      section.indexOf('```', section.indexOf('```sh\n') + 6),
    );
    const examples = block.split('\n').filter((line) => /^agentloop (run|validate) /.test(line));
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const line of examples) {
      const args = [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!).slice(1);
      const result = await runCli(args, { cwd: repoRoot });
      expect(result.code, `${line}\n${result.stderr}`).toBe(0);
      expect(result.stdout.trim(), line).not.toBe('');
    }
  });
});

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
