import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { buildDist } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';
import { readRecordFile } from './support/record-file.js';
import { skillText, tempDir, writeSkill } from './support/skill-tree.js';

// Agent Skills through the CLI: `run` and `chat` without --agent (a plain assistant with the skills),
// `run` with a BMAD agent and skills, and `validate` in text and JSON.

const BUNDLE = path.resolve(import.meta.dirname, '..', 'bundles', 'requirements-workflow');

async function cli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/** A project whose skills live in `my-skills/` (given with --skills), one of them broken. */
async function skillsProject() {
  const dir = await tempDir('agentloop-skills-cli-');
  const skills = path.join(dir, 'my-skills');
  await writeSkill(
    skills,
    'release-notes',
    skillText(
      { name: 'release-notes', description: 'Write release notes from a change list' },
      'Read [the template](references/template.md) and [the checklist](references/checklist.md).',
    ),
    { 'references/template.md': '# Release {version}' },
  );
  await writeSkill(skills, 'broken', '---\nname: broken\ndescription: [oops\n---\n');
  await writeFile(
    path.join(dir, 'scenario.yaml'),
    [
      'turns:',
      '  - toolCalls:',
      '      - name: activate_skill',
      '        arguments: { name: release-notes }',
      '  - toolCalls:',
      '      - name: read_file',
      '        arguments: { file_path: references/template.md }',
      '  - toolCalls:',
      '      - name: save_output',
      '        arguments: { file_path: notes.md, content: "# Release 1.0" }',
      '  - content: Release notes saved.',
      // A later turn (after a --resume): a relative path still starts in the active skill's folder.
      '  - toolCalls:',
      '      - name: read_file',
      '        arguments: { file_path: references/template.md }',
      '  - content: Read it again.',
    ].join('\n'),
  );
  return { dir, skills };
}

describe('agentloop run and chat with skills, built, as users run them', () => {
  beforeAll(async () => {
    await buildDist();
  }, 180_000);

  it('run --skills dir "..." without --agent: a plain assistant activates the skill, reads, saves', async () => {
    const { dir } = await skillsProject();
    const result = await runCli(
      ['run', '--skills', 'my-skills', '--scenario', 'scenario.yaml', '--yes', 'write release notes'],
      { cwd: dir },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Release notes saved.\n');
    expect(result.stderr).toMatch(
      /skill frontmatter: .*broken[/\\]SKILL\.md: invalid YAML frontmatter.*\(not loaded\)/,
    );
    expect(result.stderr).toMatch(/activate_skill/);
    expect(result.stderr).toMatch(/✓ read_file/);
    expect(await readFile(path.join(dir, 'output', 'notes.md'), 'utf8')).toBe('# Release 1.0');
  });

  it('chat --skills dir without --agent greets with the skills and answers piped lines', async () => {
    const { dir } = await skillsProject();
    const result = await runCli(
      ['chat', '--skills', 'my-skills', '--scenario', 'scenario.yaml', '--yes', '--session', 'skills-chat'],
      { cwd: dir, input: 'write release notes\n/exit\n' },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('assistant, with 1 skill');
    expect(result.stdout).toContain('Skills at hand: release-notes.');
    expect(result.stdout).toContain('Release notes saved.');
    // The session remembers the skills folders, so --resume finds the same skills.
    const { record } = await readRecordFile(path.join(dir, '.agentloop', 'sessions', 'skills-chat'));
    expect(record.meta).toMatchObject({ skills: [path.join(dir, 'my-skills')], project: dir });
    expect(record.bundle).toBeUndefined();

    // Resumed in a new process: the same skills, and the skill activated before is still active.
    const resumed = await runCli(
      ['chat', '--resume', 'skills-chat', '--scenario', 'scenario.yaml', '--yes'],
      {
        cwd: dir,
        input: 'read the template again\n/exit\n',
      },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('Read it again.');
    const after = (await readRecordFile(path.join(dir, '.agentloop', 'sessions', 'skills-chat'))).record;
    const reads = (after.snapshot.context.messages as { role: string; content: string }[]).filter(
      (m) => m.role === 'tool' && m.content.includes('# Release {version}'),
    );
    expect(reads).toHaveLength(2);
  });
});

describe('agentloop run with a BMAD agent and skills', () => {
  it('lists the skills beside the agent and lets it activate one', async () => {
    const { dir } = await skillsProject();
    const scenario = path.join(dir, 'bmad.yaml');
    await writeFile(
      scenario,
      [
        'turns:',
        '  - toolCalls:',
        '      - name: activate_skill',
        '        arguments: { name: release-notes }',
        '  - toolCalls:',
        '      - name: read_file',
        '        arguments: { file_path: references/template.md }',
        '  - content: Done.',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await cli([
      'run',
      '--bundle',
      BUNDLE,
      '--agent',
      'intake-facilitator',
      '--project',
      dir,
      '--skills',
      path.join(dir, 'my-skills'),
      '--scenario',
      scenario,
      '--json',
      'use the release notes skill',
    ]);
    expect(code, stderr).toBe(0);
    const result = JSON.parse(stdout);
    const system = result.messages[0].content as string;
    expect(system).toMatch(/^You are /);
    expect(system).toContain('<name>release-notes</name>');
    const tools = result.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(tools[0].content).toMatch(/^\{"activated":"release-notes"/);
    expect(JSON.parse(tools[1].content).content).toBe('# Release {version}');
  });
});

describe('agentloop validate with skills', () => {
  async function project() {
    const { dir, skills } = await skillsProject();
    await writeSkill(
      path.join(dir, '.claude/skills'),
      'release-notes',
      skillText({ name: 'release-notes', description: 'Twin' }),
    );
    await mkdir(path.join(dir, '.agents/skills/empty'), { recursive: true });
    return { dir, skills };
  }

  it('prints the skills and their problems beside the tree report', async () => {
    const { dir } = await project();
    const { code, stdout, stderr } = await cli(['validate', dir, '--skills', path.join(dir, 'my-skills')]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('Skills (1):');
    expect(stdout).toMatch(/ {3}release-notes {2}\[\.claude\/skills\/release-notes\/SKILL\.md\] {2}0 files/);
    expect(stdout).toContain('.agents/skills/empty [SKILL.md]: skill-no-skill-file: has no SKILL.md');
    expect(stdout).toMatch(
      /my-skills\/release-notes\/SKILL\.md \[name\]: skill-duplicate: the name "release-notes" is taken/,
    );
    expect(stdout).toMatch(/my-skills\/broken\/SKILL\.md \[frontmatter\]: skill-frontmatter: invalid YAML/);
  });

  it('--json: { agents, workflows, skills, problems } with missing links as problems', async () => {
    const { dir, skills } = await skillsProject();
    const { code, stdout } = await cli(['validate', dir, '--skills', skills, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(Object.keys(report)).toEqual(
      expect.arrayContaining(['root', 'layout', 'agents', 'workflows', 'configs', 'skills', 'problems']),
    );
    expect(report.agents).toEqual([]);
    expect(report.skills).toEqual([
      expect.objectContaining({
        name: 'release-notes',
        folder: 'my-skills/release-notes',
        resources: 1,
        missingLinks: ['references/checklist.md'],
      }),
    ]);
    expect(report.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          file: 'my-skills/release-notes/SKILL.md',
          key: 'references/checklist.md',
          status: 'skill-missing-resource',
        }),
        expect.objectContaining({
          file: 'my-skills/broken/SKILL.md',
          key: 'frontmatter',
          status: 'skill-frontmatter',
        }),
      ]),
    );
  });

  it('keeps the bundle report as it was, with an empty skills list', async () => {
    const { code, stdout } = await cli(['validate', BUNDLE, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.agents.length).toBeGreaterThan(0);
    expect(report.skills).toEqual([]);
  });

  it('exits 2 when there are neither agents nor skills, and says both', async () => {
    const dir = await tempDir('agentloop-skills-none-');
    const { code, stderr } = await cli(['validate', dir]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/no agent files under .* and no Agent Skills/);
  });
});
