import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ValidationReport } from '../src/bundle/validation/validation-report.js';
import { main } from '../src/cli/main.js';
import { bmadProject, freshBmadProject } from './support/bmad-installs.js';
import { repoRoot } from './support/build-dist.js';

// `agentloop validate` on real BMAD 6 installs (made by bmad-method's own installers) and bundle.yaml.

async function cli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

async function report(root: string): Promise<ValidationReport> {
  const { code, stdout } = await cli(['validate', root, '--json']);
  expect(code).toBe(0);
  return JSON.parse(stdout) as ValidationReport;
}

describe('validate a BMAD 6.12 install', () => {
  let project: string;
  beforeAll(async () => {
    project = await freshBmadProject('6.12');
  }, 180_000);
  afterAll(async () => {
    if (project) await rm(path.dirname(project), { recursive: true, force: true });
  });

  it('lists the agents with their menu targets, in text and JSON, from the project or _bmad/ itself', async () => {
    const json = await report(project);
    expect(json.layout).toBe('bmad6');
    expect(Object.keys(json)).toEqual(expect.arrayContaining(['agents', 'workflows', 'problems']));
    expect(json.agents.map((a) => `${a.id} ${a.name}`)).toEqual([
      'bmad-agent-analyst Mary',
      'bmad-agent-pm John',
      'bmad-agent-ux-designer Sally',
      'bmad-agent-architect Winston',
      'bmad-agent-dev Amelia',
    ]);
    const john = json.agents.find((a) => a.name === 'John')!;
    expect(john.file).toBe('.claude/skills/bmad-agent-pm/SKILL.md');
    expect(john.menu.map((m) => `${m.cmd} ${m.target} ${m.status}`)).toEqual([
      'PRD bmad-prd exists',
      'CE bmad-create-epics-and-stories exists',
      'IR bmad-sprint-planning exists',
      'CC bmad-correct-course exists',
    ]);
    // The tree's own problems (the skills' are the skills module's to judge).
    expect(json.problems.filter((p) => !p.status.startsWith('skill-'))).toEqual([]);
    // The agents' "Bare paths (e.g. `references/guide.md`)" is example text, not a link to check.
    expect(json.problems.filter((p) => String(p.status) === 'skill-missing-resource')).toEqual([]);
    expect(json.configs.map((c) => c.file)).toContain('_bmad/config.toml');
    expect((await report(path.join(project, '_bmad'))).agents).toHaveLength(5);
    const { code, stdout } = await cli(['validate', '--project', project]);
    expect(code).toBe(0);
    expect(stdout).toContain('📋 John - Product Manager  [.claude/skills/bmad-agent-pm/SKILL.md]');
    expect(stdout).toMatch(/PRD\s+skill {2}exists/);
  });

  it('an unknown menu target and a TOML syntax error are problems naming file, key and line', async () => {
    const team = path.join(project, '_bmad', 'custom', 'bmad-agent-pm.toml');
    await writeFile(team, '[[agent.menu]]\ncode = "ZZ"\ndescription = "Nothing"\nskill = "bmad-nope"\n');
    const config = path.join(project, '_bmad', 'custom', 'config.toml');
    await writeFile(config, '[core]\nuser_name = "Robin\n');
    const json = await report(project);
    expect(json.agents).toHaveLength(5);
    const problems = json.problems.filter((p) => !p.status.startsWith('skill-'));
    expect(problems.map((p) => `${p.file} [${p.key}] ${p.status}`)).toEqual([
      '_bmad/custom/config.toml [core.user_name] parse-error',
      '_bmad/custom/bmad-agent-pm.toml [agent.menu.ZZ.skill] missing',
    ]);
    expect(json.problems[0]!.message).toMatch(
      /Invalid TOML in .*config\.toml at line 2, column \d+ \(key "core\.user_name"\)/,
    );
    expect(json.problems[1]!.message).toBe(
      'menu item ZZ activates skill "bmad-nope", which is not installed',
    );
    await rm(team);
    await rm(config);
  });
});

describe('validate a BMAD 6.0 install, a source tree and bundle.yaml', () => {
  let work: string;
  beforeAll(async () => {
    // test-artifacts/ is not in git: a fresh clone (or Stryker's sandbox) has none yet.
    await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
    work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'bmad6-validate-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true, maxRetries: 5 });
  });

  it('a 6.0 _bmad/ tree lists its compiled agents', async () => {
    const json = await report(await bmadProject('6.0'));
    expect(json.layout).toBe('installed');
    expect(json.agents.map((a) => a.name)).toEqual(
      expect.arrayContaining(['John', 'Mary', 'Winston', 'BMad Master']),
    );
    const john = json.agents.find((a) => a.name === 'John')!;
    expect(john.file).toBe('_bmad/bmm/agents/pm.md');
    expect(john.menu.find((m) => m.cmd.startsWith('CP'))?.status).toBe('exists');
  }, 180_000);

  it("a 6.0 tree's markdown workflows are listed with their steps; a front matter file that is gone is a problem", async () => {
    const project = await freshBmadProject('6.0');
    try {
      const prd = path.join(project, '_bmad/bmm/workflows/2-plan-workflows/create-prd');
      // A guide named like a workflow, without front matter, is no workflow.
      await writeFile(
        path.join(prd, 'workflow-guide.md'),
        '# How to write a PRD\n\n---\n\nname: not front matter\n',
      );
      let json = await report(project);
      expect(json.workflows.map((w) => w.file).filter((f) => f.endsWith('workflow-guide.md'))).toEqual([]);
      const listed = (name: string) => json.workflows.find((w) => w.name === name);
      expect(listed('create-prd')).toMatchObject({
        file: '_bmad/bmm/workflows/2-plan-workflows/create-prd/workflow-create-prd.md',
        paths: { nextStep: { status: 'exists' }, main_config: { status: 'exists' } },
      });
      expect(listed('create-prd')!.steps).toBeGreaterThan(0);
      expect(listed('party-mode')?.file).toBe('_bmad/core/workflows/party-mode/workflow.md');
      expect(json.problems.filter((p) => p.file.endsWith('.md') && p.file.includes('/workflows/'))).toEqual(
        [],
      );

      await rm(path.join(prd, 'steps-c', 'step-01-init.md'));
      json = await report(project);
      expect(
        json.problems
          .filter((p) => p.file.endsWith('workflow-create-prd.md'))
          .map((p) => `${p.key} ${p.status} ${p.message}`),
      ).toEqual([
        'nextStep missing nextStep: _bmad/bmm/workflows/2-plan-workflows/create-prd/steps-c/step-01-init.md does not exist',
      ]);
      const { stdout } = await cli(['validate', '--project', project]);
      // Menu items by their code and label, not the matching rule the agent file gives them.
      expect(stdout).toMatch(
        /^ {6}CP {25}exec {2}exists {2}Create PRD: Expert led facilitation to produce your Product…$/m,
      );
      expect(stdout).not.toContain('fuzzy match');
      expect(stdout).toMatch(
        /^ {2}! create-prd {2}\[_bmad\/bmm\/workflows\/2-plan-workflows\/create-prd\/workflow-create-prd\.md\], \d+ steps$/m,
      );
    } finally {
      await rm(path.dirname(project), { recursive: true, force: true });
    }
  }, 180_000);

  it('a BMAD source tree says to install it, with the command', async () => {
    // bmad-method's 6.0 package is its source tree (src/*/agents/*.agent.yaml); it ships its own dev skills.
    const { code, stderr } = await cli(['validate', path.join(repoRoot, 'node_modules', 'bmad-method-6-0')]);
    expect(code).toBe(0);
    expect(stderr).toMatch(
      /is a BMAD source tree .* npx bmad-method install --modules bmm --tools claude-code --yes/,
    );
  });

  it('bundle.yaml is read and checked: its listed files exist, and a broken one is a parse error', async () => {
    const root = path.join(work, 'bundle');
    await cp(path.join(repoRoot, 'bundles', 'requirements-workflow'), root, { recursive: true });
    const manifest = path.join(root, 'bundle.yaml');
    await writeFile(
      manifest,
      (await readFile(manifest, 'utf8')).replace(
        'workflows/stakeholder-map/workflow.yaml',
        'workflows/gone/workflow.yaml',
      ),
    );
    let json = await report(root);
    expect(json.problems.map((p) => `${p.file} [${p.key}] ${p.status} ${p.value}`)).toEqual([
      'bundle.yaml [workflows[1]] missing workflows/gone/workflow.yaml',
    ]);
    await writeFile(manifest, 'name: [unclosed\n');
    json = await report(root);
    expect(json.problems.map((p) => `${p.file} ${p.status}`)).toEqual(['bundle.yaml parse-error']);
    expect(json.problems[0]!.message).toMatch(/Invalid YAML in .*bundle\.yaml at line/);
  });
});
