import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

/**
 * Issue 16: `agentloop validate` on broken copies of the example bundle says what is wrong and where,
 * once, as `run` does for the same bundle.
 */
const repoRoot = path.resolve(import.meta.dirname, '..');
const EXAMPLE = path.join(repoRoot, 'bundles', 'requirements-workflow');
let work: string;

beforeAll(async () => {
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'cli-validate-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

async function cli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/** A copy of the example bundle with `file` (relative to it) changed by `edit`. */
async function brokenCopy(name: string, file: string, edit: (text: string) => string): Promise<string> {
  const root = path.join(work, name);
  await cp(EXAMPLE, root, { recursive: true });
  const target = path.join(root, file);
  await writeFile(target, edit(await readFile(target, 'utf8')));
  return root;
}

const AGENT = path.join('agents', 'intake-facilitator.md');

describe('agentloop validate', () => {
  it('a YAML error shows the whole message and the offending line, reported once', async () => {
    const root = await brokenCopy('yaml', 'config.yaml', (text) =>
      text.replace('user_name: Friend', 'user_name: Friend\n\tcommunication_style: warm'),
    );
    const { code, stdout } = await cli(['validate', root]);
    expect(code).toBe(0);
    const problems = stdout.slice(stdout.indexOf('Problems'));
    expect(problems).toContain('Problems (1):');
    const file = path.join(root, 'config.yaml');
    expect(problems).toContain(
      `  config.yaml: parse-error: Invalid YAML in ${file} at line 4, column 1: Tabs are not allowed as indentation\n` +
        '        4 | \tcommunication_style: warm\n' +
        '          | ^\n',
    );
  });

  it('a YAML error in a mapping value names the column under the line', async () => {
    const root = await brokenCopy('yaml-compact', 'config.yaml', (text) =>
      text.replace('project_name: Untitled Project', 'project_name: Untitled: Project'),
    );
    const { stdout } = await cli(['validate', root, '--json']);
    const [problem, ...more] = JSON.parse(stdout).problems;
    expect(more).toEqual([]);
    expect(problem.message).toMatch(
      /at line 2, column \d+: .+\n {2}2 \| project_name: Untitled: Project\n {4}\| {2,}\^$/,
    );
  });

  it('a bundle whose only agent has broken XML names the file and the line, as run does', async () => {
    const root = await brokenCopy('xml', AGENT, (text) => text.replace('</persona>', '</persona><broken>'));
    const validate = await cli(['validate', root]);
    expect(validate.code).toBe(2);
    expect(validate.stdout).toMatch(
      /agents\/intake-facilitator\.md \[agent\]: parse-error: Malformed agent XML in \S+intake-facilitator\.md at line \d+: Expected closing tag 'broken'/,
    );
    expect(validate.stderr).toBe(
      `agentloop validate: no agent loaded under ${root}: agents/intake-facilitator.md did not load (see the problems)\n`,
    );
    const run = await cli([
      'run',
      '--bundle',
      root,
      '--agent',
      'intake-facilitator',
      '--scenario',
      'x.yaml',
      'hi',
    ]);
    expect(run.code).toBe(1);
    const line = /at line (\d+)/.exec(run.stderr)?.[1];
    expect(line).toBeDefined();
    expect(validate.stdout).toContain(`at line ${line}:`);
  });

  it('an agent file without an <agent> block says so, in validate and in run', async () => {
    const root = await brokenCopy(
      'no-block',
      AGENT,
      () => '---\nname: intake\n---\n# Notes, no agent here\n',
    );
    const validate = await cli(['validate', root]);
    expect(validate.code).toBe(2);
    expect(validate.stdout).toContain(
      'agents/intake-facilitator.md [agent]: no-agent-block: no <agent> block: an agent file holds its agent in an XML <agent> element, so it is not loaded',
    );
    const run = await cli([
      'run',
      '--bundle',
      root,
      '--agent',
      'intake-facilitator',
      '--scenario',
      'x.yaml',
      'hi',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `agentloop run: ${path.join(root, AGENT)} has no <agent> block: an agent file holds its agent in an XML <agent> element\n`,
    );
    expect(run.stderr).not.toMatch(/Unknown agent/);
  });

  it('an unknown agent lists only the files that hold agents', async () => {
    const root = await brokenCopy('listing', AGENT, (text) => text);
    await writeFile(path.join(root, 'agents', 'notes.md'), '# Notes, no agent here\n');
    const run = await cli(['run', '--bundle', root, '--agent', 'nobody', '--scenario', 'x.yaml', 'hi']);
    expect(run.stderr).toBe(`agentloop run: Unknown agent "nobody" in ${root}. Agents: intake-facilitator\n`);
  });
});
