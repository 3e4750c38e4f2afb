import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    const { code, stdout } = await cli(runArgs(scenario, 'hello'));
    expect(code).toBe(0);
    expect(stdout).not.toContain('[REDACTED]');
    // Once streamed, once as the final answer.
    expect(stdout.split('Answered by the scripted server, as scripted.')).toHaveLength(3);
  });
});
