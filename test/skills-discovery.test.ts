import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSkillCatalog } from '../src/skills/skill-catalog.js';
import { discoverSkills } from '../src/skills/skill-discovery.js';
import { skillText, tempDir, writeSkill } from './support/skill-tree.js';

describe('discoverSkills', () => {
  it('finds .agents/skills, then .claude/skills, then the given folders; the first of a name wins', async () => {
    const project = await tempDir('agentloop-skills-');
    const extra = await tempDir('agentloop-skills-extra-');
    await writeSkill(
      path.join(project, '.agents/skills'),
      'pdf-tools',
      skillText({ name: 'pdf-tools', description: 'From .agents' }),
    );
    await writeSkill(
      path.join(project, '.claude/skills'),
      'pdf-tools',
      skillText({ name: 'pdf-tools', description: 'From .claude' }),
    );
    await writeSkill(
      path.join(project, '.claude/skills'),
      'review',
      skillText({ name: 'review', description: 'Code review' }),
    );
    await writeSkill(extra, 'review', skillText({ name: 'review', description: 'Extra review' }));
    await writeSkill(extra, 'zeta', skillText({ name: 'zeta', description: 'Only in extra' }));

    const found = await discoverSkills({ projectRoot: project, dirs: [extra] });

    expect(found.skills.map((s) => [s.name, s.description])).toEqual([
      ['pdf-tools', 'From .agents'],
      ['review', 'Code review'],
      ['zeta', 'Only in extra'],
    ]);
    const duplicates = found.problems.filter((p) => p.kind === 'duplicate');
    expect(duplicates.map((p) => p.file)).toEqual([
      path.join(project, '.claude/skills/pdf-tools/SKILL.md'),
      path.join(extra, 'review/SKILL.md'),
    ]);
    expect(duplicates[0]!.message).toContain(path.join(project, '.agents/skills/pdf-tools/SKILL.md'));
    expect(duplicates.every((p) => p.key === 'name' && p.skipped)).toBe(true);
    expect(found.roots).toEqual([
      path.join(project, '.agents/skills'),
      path.join(project, '.claude/skills'),
      extra,
    ]);
  });

  it('keeps unknown frontmatter keys and reads no body at discovery', async () => {
    const project = await tempDir('agentloop-skills-');
    await writeSkill(
      path.join(project, '.agents/skills'),
      'notes',
      '---\nname: notes\ndescription: Take notes\nlicense: MIT\nmetadata:\n  author: someone\nallowed-tools: Read\n---\nBody here\n',
      { 'scripts/run.sh': 'echo hi' },
    );
    const { skills, problems } = await discoverSkills({ projectRoot: project });
    expect(problems).toEqual([]);
    expect(skills[0]).toMatchObject({
      name: 'notes',
      frontmatter: { license: 'MIT', metadata: { author: 'someone' }, 'allowed-tools': 'Read' },
      hasScripts: true,
    });
    expect(JSON.stringify(skills[0])).not.toContain('Body here');
  });

  it('reads a description holding ": " leniently', async () => {
    const project = await tempDir('agentloop-skills-');
    await writeSkill(
      path.join(project, '.agents/skills'),
      'colon',
      '---\nname: colon\ndescription: Use when: the user asks\n---\nx\n',
    );
    const { skills, problems } = await discoverSkills({ projectRoot: project });
    expect(problems).toEqual([]);
    expect(skills[0]!.description).toBe('Use when: the user asks');
  });

  it('lists names and descriptions only in the catalog, escaped, with the scripts note when needed', async () => {
    const project = await tempDir('agentloop-skills-');
    await writeSkill(
      path.join(project, '.agents/skills'),
      'a',
      skillText({ name: 'a', description: 'Use <b> & more' }, 'SECRET BODY'),
    );
    let { skills } = await discoverSkills({ projectRoot: project });
    let catalog = buildSkillCatalog(skills);
    expect(catalog).toContain('<name>a</name>');
    expect(catalog).toContain('Use &lt;b&gt; &amp; more');
    expect(catalog).not.toContain('SECRET BODY');
    expect(catalog).not.toMatch(/never runs scripts/);
    await writeSkill(path.join(project, '.agents/skills'), 'a', undefined, { 'scripts/x.py': 'print(1)' });
    ({ skills } = await discoverSkills({ projectRoot: project }));
    catalog = buildSkillCatalog(skills);
    expect(catalog).toMatch(/never runs scripts/);
    expect(buildSkillCatalog(skills, { exclude: ['a'] })).toBe('');
  });

  it('takes a given folder holding SKILL.md as one skill', async () => {
    const project = await tempDir('agentloop-skills-');
    const one = await writeSkill(
      await tempDir('agentloop-one-'),
      'solo',
      skillText({ name: 'solo', description: 'Alone' }),
    );
    const { skills, problems } = await discoverSkills({ projectRoot: project, dirs: [one] });
    expect(problems).toEqual([]);
    expect(skills.map((s) => s.dir)).toEqual([one]);
  });
});

describe('discoverSkills on bad input', () => {
  it('reports each bad skill as a problem naming file and key, and loads the others', async () => {
    const project = await tempDir('agentloop-skills-');
    const outside = await tempDir('agentloop-outside-');
    const root = path.join(project, '.claude/skills');
    await writeSkill(root, 'good', skillText({ name: 'good', description: 'Fine' }));
    await writeSkill(root, 'broken', '---\nname: broken\ndescription: [unclosed\n---\nbody\n');
    await writeSkill(root, 'no-front', 'Just text, no frontmatter\n');
    await writeSkill(root, 'unclosed', '---\nname: unclosed\ndescription: x\n');
    await writeSkill(root, 'empty-folder', undefined, { 'notes.txt': 'not a skill' });
    await writeSkill(
      root,
      'huge',
      `---\nname: huge\ndescription: big\n---\n${'x'.repeat(5 * 1024 * 1024)}\n`,
    );
    await writeSkill(root, 'Bad_Name', skillText({ name: 'Bad_Name', description: 'Upper case' }));
    await writeSkill(root, 'mismatch', skillText({ name: 'other-name', description: 'Wrong folder' }));
    await writeSkill(root, 'long-desc', skillText({ name: 'long-desc', description: 'd'.repeat(1025) }));
    await writeSkill(root, 'no-desc', skillText({ name: 'no-desc' }));
    await writeSkill(root, 'list-front', '---\n- a\n- b\n---\nx\n');
    await writeSkill(outside, 'escaper', skillText({ name: 'escaper', description: 'Outside' }));
    await symlink(path.join(outside, 'escaper'), path.join(root, 'escaper'));
    await symlink(path.join(outside, 'nothing'), path.join(root, 'dangling'));
    await writeFile(path.join(root, 'README.md'), 'a file in a skills folder is not a skill');

    const { skills, problems } = await discoverSkills({ projectRoot: project });

    expect(skills.map((s) => s.name).sort()).toEqual(['Bad_Name', 'good', 'long-desc', 'other-name']);
    const by = (folder: string) => problems.filter((p) => p.file.includes(`${path.sep}${folder}`));
    expect(by('broken')[0]).toMatchObject({ kind: 'frontmatter', key: 'frontmatter', skipped: true });
    expect(by('broken')[0]!.message).toMatch(/broken\/SKILL\.md: invalid YAML frontmatter/);
    expect(by('no-front')[0]).toMatchObject({ kind: 'frontmatter', skipped: true });
    expect(by('unclosed')[0]!.message).toMatch(/not closed/);
    expect(by('empty-folder')[0]).toMatchObject({ kind: 'no-skill-file', key: 'SKILL.md', skipped: true });
    expect(by('huge')[0]).toMatchObject({ kind: 'too-large', key: 'SKILL.md', skipped: true });
    expect(by('huge')[0]!.message).toMatch(/limit is 1048576 bytes/);
    expect(by('Bad_Name')[0]).toMatchObject({ kind: 'name', key: 'name', skipped: false });
    expect(by('mismatch')[0]!.message).toMatch(/does not match its folder "mismatch"/);
    expect(by('long-desc')[0]).toMatchObject({ kind: 'description', key: 'description', skipped: false });
    expect(by('no-desc')[0]).toMatchObject({ kind: 'description', skipped: true });
    expect(by('list-front')[0]!.message).toMatch(/must be a YAML mapping/);
    expect(by('escaper')[0]).toMatchObject({ kind: 'outside-root', key: 'escaper', skipped: true });
    expect(by('escaper')[0]!.message).toContain(path.join(outside, 'escaper'));
    expect(by('dangling')[0]).toMatchObject({ kind: 'unreadable' });
    expect(problems.some((p) => p.file.endsWith('README.md'))).toBe(false);
  });

  it('reports a given folder that does not exist, and one that is a file', async () => {
    const project = await tempDir('agentloop-skills-');
    await mkdir(path.join(project, 'afile-parent'));
    await writeFile(path.join(project, 'afile'), 'x');
    const { skills, problems } = await discoverSkills({ projectRoot: project, dirs: ['missing', 'afile'] });
    expect(skills).toEqual([]);
    expect(problems.map((p) => [p.file, p.kind])).toEqual([
      [path.join(project, 'missing'), 'unreadable'],
      [path.join(project, 'afile'), 'unreadable'],
    ]);
  });
});
