import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../src/index.js';
import { startScriptedServer } from '../src/testing/index.js';
import { buildDist, cliPath, repoRoot } from './support/build-dist.js';

/**
 * Issue 15: what the CLI prints goes through the redactor (and, for the terminal, through
 * `terminalSafe`). The built CLI (`node dist/cli/main.js`) runs as users run it, on the scripted server.
 */
const BUNDLE = path.join(repoRoot, 'bundles', 'requirements-workflow');
let work: string;

beforeAll(async () => {
  await buildDist();
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'cli-safety-'));
}, 180_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI; `env` is added to an environment without any OpenAI variable. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliPath, ...args],
      {
        cwd: work,
        env: {
          ...process.env,
          OPENAI_API_KEY: '',
          OPENAI_BASE_URL: '',
          NO_COLOR: '',
          FORCE_COLOR: '',
          ...env,
        },
      },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

async function scenarioFile(name: string, yaml: string): Promise<string> {
  const file = path.join(work, name);
  await writeFile(file, yaml);
  return file;
}

const runArgs = (scenario: string, ...more: string[]) => [
  'run',
  '--bundle',
  BUNDLE,
  '--agent',
  'intake-facilitator',
  '--project',
  work,
  '--scenario',
  scenario,
  ...more,
];

describe('agentloop run on the built-in scripted server', () => {
  it('does not redact the word "scripted": its placeholder key is not a secret', async () => {
    const scenario = await scenarioFile(
      'scripted-word.yaml',
      'turns:\n  - content: "Answered by the scripted server, as scripted."\n',
    );
    const { code, stdout, stderr } = await cli(runArgs(scenario, 'hello'));
    expect(code).toBe(0);
    expect(stderr).not.toContain('[REDACTED]');
    // The answer, once, alone on stdout.
    expect(stdout).toBe('Answered by the scripted server, as scripted.\n');
  });
});

describe('agentloop run when the server echoes the API key', () => {
  const API_KEY = 'sk-proj-Wm3Rt8Yq1Lz6Kd9Hb2Nf5Xc0Vg4Js7Pa';
  const runOn = (url: string, ...more: string[]) =>
    cli([
      'run',
      '--bundle',
      BUNDLE,
      '--agent',
      'intake-facilitator',
      '--project',
      work,
      '--base-url',
      url,
      '--api-key',
      API_KEY,
      ...more,
      `my key is ${API_KEY}, is it valid?`,
    ]);

  it('--json: the error from the body, the messages and every other field are redacted', async () => {
    const server = await startScriptedServer({
      scenario: { turns: [{ error: { status: 401, message: `Incorrect API key provided: ${API_KEY}.` } }] },
    });
    const run = await runOn(server.url, '--json').finally(() => server.close());
    // The key reached the server as the credential and came back in its error body...
    expect(server.requests).toHaveLength(1);
    expect(run.code).toBe(1);
    // ...and the CLI printed what happened, without it.
    expect(run.stdout + run.stderr).not.toContain(API_KEY);
    const result = JSON.parse(run.stdout);
    expect(result.terminateReason).toBe('error');
    expect(result.error).toContain('Incorrect API key provided: [REDACTED].');
    expect(result.messages.find((m: { role: string }) => m.role === 'user').content).toBe(
      'my key is [REDACTED], is it valid?',
    );
    expect(run.stderr).toContain('Incorrect API key provided: [REDACTED].');
  });

  it('text: the final answer printed after the turn is redacted like the streamed one', async () => {
    const server = await startScriptedServer({
      scenario: { turns: [{ content: `Your key ${API_KEY} looks valid.` }] },
    });
    const run = await runOn(server.url).finally(() => server.close());
    expect(run.code).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(API_KEY);
    expect(run.stdout).toBe('Your key [REDACTED] looks valid.\n');
  });
});

describe('agentloop run with control sequences in the reply and the tool call', () => {
  it('prints the text without them; its own colours stay', async () => {
    // YAML double quotes: \e is ESC, \a is BEL, \x9b the 8-bit CSI.
    const scenario = await scenarioFile(
      'escapes.yaml',
      [
        'turns:',
        '  - toolCalls:',
        '      - name: "peek\\e]2;pwned-title\\a"',
        '        arguments: { "path\\e[2J": "notes.md\\e]52;c;cm0gLXJmIH4=\\a" }',
        '  - content: "Done.\\e]52;c;cm0gLXJmIH4=\\a\\e[2J\\e[H see \\e]8;;https://evil.example\\e\\\\the docs\\e]8;;\\e\\\\ \\x9b31mnow\\r."',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await cli(runArgs(scenario, 'go'), { FORCE_COLOR: '1' });
    expect(code, stderr).toBe(0);
    // Only agentloop's own colours (SGR) were printed: nothing else a terminal acts on.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escape sequences.
    const sgr = /\x1b\[[0-9;]*m/g;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters.
    expect(`${stdout}${stderr}`.replace(sgr, '')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(stderr).toMatch(sgr);
    // The text around the sequences is all there: progress on stderr, the answer on stdout.
    expect(stderr).toMatch(/▶ peek \{"path":"notes\.md"\}/);
    expect(stderr).toMatch(/✗ peek \(.*\): Error: unknown tool "peek"/);
    expect(stdout).toBe('Done. see the docs now.\n');
  });
});

describe('agentloop sessions with control sequences in a saved title', () => {
  it('lists the session without them, in the table and in --json', async () => {
    const dir = path.join(work, 'sessions');
    await new FileSessionStore({ dir }).save({
      id: 'esc-1',
      state: 'AwaitingInput',
      snapshot: {},
      agentName: 'Iris\x1b]2;pwned\x07',
      title: 'summarize \x1b]52;c;cm0gLXJmIH4=\x07this\x1b[2J\x9b31m page',
      turns: 1,
    });
    const table = await cli(['sessions', '--sessions-dir', dir], { FORCE_COLOR: '1' });
    expect(table.code).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: agentloop's own colours are allowed.
    const text = table.stdout.replace(/\x1b\[[0-9;]*m/g, '');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: nothing else a terminal acts on.
    expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(text).toMatch(/esc-1\s+AwaitingInput\s+\S+ \S+\s+Iris\s+1\s+summarize this page/);
    const json = await cli(['sessions', '--sessions-dir', dir, '--json']);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON escapes every control character.
    expect(json.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(JSON.parse(json.stdout)[0].title).toBe(
      'summarize \x1b]52;c;cm0gLXJmIH4=\x07this\x1b[2J\x9b31m page',
    );
  });
});
