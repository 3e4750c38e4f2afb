import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mergeCustomization } from '../src/bundle/bmad6/bmad-merge.js';
import { loadBundleAgent } from '../src/bundle/bundle-agent.js';
import { BundleError } from '../src/bundle/bundle-error.js';
import type { FileLoadEvent } from '../src/bundle/sandbox/sandbox.js';
import { BMAD_TEST_USER, bmadProject, freshBmadProject } from './support/bmad-installs.js';
import { repoRoot } from './support/build-dist.js';

// BMAD 6.12 agent skills, loaded from installs made by bmad-method's own installer (test/support).

describe('mergeCustomization: BMAD structural rules', () => {
  test('scalars override, tables deep-merge, keyed arrays of tables replace or append, other arrays append', () => {
    const base = {
      agent: {
        icon: 'A',
        nested: { keep: 1, change: 1 },
        principles: ['one'],
        menu: [
          { code: 'X', description: 'x' },
          { code: 'Y', description: 'y' },
        ],
        steps: [{ id: 's1', text: 'a' }],
      },
    };
    const over = {
      agent: {
        icon: 'B',
        nested: { change: 2 },
        principles: ['two'],
        menu: [
          { code: 'Y', description: 'y2' },
          { code: 'Z', description: 'z' },
        ],
        steps: [{ id: 's1', text: 'b' }],
      },
    };
    expect(mergeCustomization(base, over)).toEqual({
      agent: {
        icon: 'B',
        nested: { keep: 1, change: 2 },
        principles: ['one', 'two'],
        menu: [
          { code: 'X', description: 'x' },
          { code: 'Y', description: 'y2' },
          { code: 'Z', description: 'z' },
        ],
        steps: [{ id: 's1', text: 'b' }],
      },
    });
    expect(base.agent.icon).toBe('A');
  });

  test('an array of tables without keys appends', () => {
    expect(mergeCustomization({ a: [{ x: 1 }] }, { a: [{ x: 1 }] })).toEqual({ a: [{ x: 1 }, { x: 1 }] });
  });
});

describe('a BMAD 6.12 install as the installer left it', () => {
  let project: string;
  beforeAll(async () => {
    project = await bmadProject('6.12');
  }, 180_000);

  test('pm, bmad-agent-pm, John and the _bmad/ folder itself all load John', async () => {
    for (const [bundleRoot, agent] of [
      [project, 'pm'],
      [project, 'bmad-agent-pm'],
      [project, 'john'],
      [path.join(project, '_bmad'), 'pm'],
    ] as const) {
      const loaded = await loadBundleAgent({ bundleRoot, agent });
      expect([loaded.name, loaded.title, loaded.icon, loaded.id]).toEqual([
        'John',
        'Product Manager',
        '📋',
        'bmad-agent-pm',
      ]);
      expect(loaded.projectRoot).toBe(project);
    }
  });

  test('greeting, menu, config, output folder and prompt come from the install', async () => {
    const events: FileLoadEvent[] = [];
    const pm = await loadBundleAgent({ bundleRoot: project, agent: 'pm', onFileLoad: (e) => events.push(e) });
    expect(pm.greeting.split('\n')[0]).toBe(`📋 Hello ${BMAD_TEST_USER}! I'm John, your Product Manager.`);
    expect(pm.greeting).toContain('bmad-help');
    expect(pm.menu.map((m) => [m.cmd, m.kind, m.target])).toEqual([
      ['PRD', 'skill', 'bmad-prd'],
      ['CE', 'skill', 'bmad-create-epics-and-stories'],
      ['IR', 'skill', 'bmad-sprint-planning'],
      ['CC', 'skill', 'bmad-correct-course'],
    ]);
    expect(pm.outputFolder).toBe(path.join(project, '_bmad-output'));
    expect(pm.variables).toMatchObject({
      user_name: BMAD_TEST_USER,
      project_name: 'project',
      planning_artifacts: path.join(project, '_bmad-output/planning-artifacts'),
      'skill-root': path.join(project, '.claude/skills/bmad-agent-pm'),
    });
    expect(pm.warnings).toEqual([]);
    expect(pm.agentFile.dialect).toBe('skill');
    const prompt = pm.definition.instructions;
    expect(prompt).toContain('ACTIVATION: ALREADY DONE BY AGENTLOOP');
    expect(prompt).toContain('Do not run resolve_customization.py');
    expect(prompt).toContain('- PRDs emerge from user interviews, not template filling.');
    expect(prompt).toContain('1. [PRD] Create, update, or validate a PRD');
    // Only the agent's own files and the config are read: no other skill is opened at start.
    const read = events.map((e) => path.relative(project, e.path));
    expect(read.filter((f) => f.startsWith('.claude'))).toEqual([
      '.claude/skills/bmad-agent-pm/SKILL.md',
      '.claude/skills/bmad-agent-pm/customize.toml',
    ]);
    expect(read).toContain('_bmad/config.toml');
    expect(read).toContain('_bmad/bmm/config.yaml');
  });

  test('a menu code or number is sent with the call it maps to; other text is left alone', async () => {
    const pm = await loadBundleAgent({ bundleRoot: project, agent: 'pm' });
    expect(pm.menuChoice?.('prd')).toMatch(
      /^prd\n\n\(Menu item PRD, .*activate_skill\(\{ name: "bmad-prd" \}\)/,
    );
    expect(pm.menuChoice?.(' 2 ')).toContain('activate_skill({ name: "bmad-create-epics-and-stories" })');
    expect(pm.menuChoice?.('5')).toBeUndefined();
    expect(pm.menuChoice?.('write the PRD')).toBeUndefined();
  });

  test('an unknown agent lists the agents of the install', async () => {
    const error = (await loadBundleAgent({ bundleRoot: project, agent: 'nobody' }).catch(
      (e) => e,
    )) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toMatch(
      /Unknown agent "nobody" in .*_bmad\. Agents: analyst \(bmad-agent-analyst, Mary\), pm/,
    );
  });
});

describe('customization of a 6.12 agent: team and personal overrides, config overrides, facts', () => {
  let project: string;
  beforeAll(async () => {
    project = await freshBmadProject('6.12');
    const custom = path.join(project, '_bmad', 'custom');
    await writeFile(
      path.join(custom, 'bmad-agent-pm.toml'),
      [
        '[agent]',
        'icon = "🧪"',
        'principles = ["Every PRD names its counter-metrics."]',
        'persistent_facts = ["Our org ships on AWS only.", "file:{project-root}/docs/**/*-standards.md"]',
        '[[agent.menu]]',
        'code = "PRD"',
        'description = "Write the PRD our way"',
        'skill = "bmad-prd"',
        '[[agent.menu]]',
        'code = "RV"',
        'description = "Review a doc"',
        'prompt = "Read the document the user names and list its three weakest claims."',
      ].join('\n'),
    );
    await writeFile(
      path.join(custom, 'bmad-agent-pm.user.toml'),
      '[agent]\ncommunication_style = "Terse."\n',
    );
    await writeFile(
      path.join(custom, 'config.toml'),
      '[modules.bmm]\nplanning_artifacts = "{project-root}/plans"\n[core]\noutput_folder = "out"\n',
    );
    await writeFile(path.join(custom, 'config.user.toml'), '[core]\nuser_name = "Robin"\n');
    await mkdir(path.join(project, 'docs', 'team'), { recursive: true });
    await writeFile(path.join(project, 'docs', 'team', 'api-standards.md'), 'All APIs are versioned.');
    await writeFile(path.join(project, 'docs', 'notes.md'), 'not a fact');
  }, 180_000);
  afterAll(async () => {
    if (project) await rm(path.dirname(project), { recursive: true, force: true });
  });

  test('base -> team -> user by BMAD rules; config from custom/config*.toml wins; facts literal and file: globs', async () => {
    const pm = await loadBundleAgent({ bundleRoot: project, agent: 'pm' });
    expect(pm.icon).toBe('🧪');
    expect(pm.greeting.split('\n')[0]).toBe("🧪 Hello Robin! I'm John, your Product Manager.");
    expect(pm.menu.map((m) => [m.cmd, m.label])).toEqual([
      ['PRD', 'Write the PRD our way'],
      ['CE', 'Create the Epics and Stories Listing that will drive development'],
      ['IR', expect.stringContaining('implementation readiness')],
      ['CC', expect.stringContaining('major need for change')],
      ['RV', 'Review a doc'],
    ]);
    expect(pm.menuChoice?.('RV')).toContain('do what its prompt says: Read the document');
    const prompt = pm.definition.instructions;
    expect(prompt).toContain('COMMUNICATION STYLE\nTerse.');
    expect(prompt).toContain(
      '- User value first; technical feasibility is a constraint.\n- Every PRD names its counter-metrics.',
    );
    expect(prompt).toContain('bmad-agent-pm.user.toml');
    expect(pm.variables.planning_artifacts).toBe(path.join(project, 'plans'));
    expect(pm.outputFolder).toBe(path.join(project, 'out'));
    expect(pm.definition.contextMessages.map((m) => m.content)).toEqual([
      '[Persistent fact] Our org ships on AWS only.',
      `[Persistent fact] Loaded file: ${path.join(project, 'docs/team/api-standards.md')}\n\nAll APIs are versioned.`,
    ]);
    expect(pm.warnings).toEqual([]);
  });

  test('a TOML syntax error in an override is a warning naming file, line and key; the agent still starts', async () => {
    const team = path.join(project, '_bmad', 'custom', 'bmad-agent-analyst.toml');
    await writeFile(team, '[agent]\nicon = "🔍"\nrole = "unterminated\n');
    const mary = await loadBundleAgent({ bundleRoot: project, agent: 'analyst' });
    expect(mary.name).toBe('Mary');
    expect(mary.warnings).toHaveLength(1);
    expect(mary.warnings[0]).toContain(`Invalid TOML in ${team} at line 3`);
    expect(mary.warnings[0]).toContain('(key "agent.role")');
    await rm(team);
  });

  test('a broken base customize.toml stops the agent with the file and line; a missing persistent fact file warns', async () => {
    const dev = path.join(project, '.claude', 'skills', 'bmad-agent-dev', 'customize.toml');
    const { readFile } = await import('node:fs/promises');
    const original = await readFile(dev, 'utf8');
    await writeFile(dev, `${original}\n[agent\n`);
    const error = (await loadBundleAgent({ bundleRoot: project, agent: 'dev' }).catch(
      (e) => e,
    )) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toMatch(new RegExp(`Invalid TOML in ${dev.replace(/[.]/g, '\\.')} at line \\d+`));
    await writeFile(dev, original);
    await writeFile(
      path.join(project, '_bmad', 'custom', 'bmad-agent-dev.toml'),
      '[agent]\npersistent_facts = ["file:{project-root}/nowhere/*.md"]\n',
    );
    const amelia = await loadBundleAgent({ bundleRoot: project, agent: 'dev' });
    expect(amelia.warnings).toEqual([
      `persistent fact "file:{project-root}/nowhere/*.md": no file matches ${path.join(project, 'nowhere/*.md')}`,
    ]);
  });
});

describe('BMAD trees that are not installs', () => {
  test('a BMAD source tree gets one message: install it first, with the command', async () => {
    const source = path.join(repoRoot, 'node_modules', 'bmad-method-6-0');
    const error = (await loadBundleAgent({ bundleRoot: source, agent: 'pm' }).catch((e) => e)) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toMatch(/is a BMAD source tree \(src\/.*\.agent\.yaml\), not an install/);
    expect(error.message).toContain('npx bmad-method install --modules bmm --tools claude-code --yes');
  });
});
