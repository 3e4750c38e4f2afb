import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseAgentFile } from '../src/bundle/agent-file-parser.js';
import { discoverAgents } from '../src/bundle/bundle-discovery.js';
import { BundleError } from '../src/bundle/bundle-error.js';
import { findLoadTarget } from '../src/bundle/critical-actions.js';
import { resolveVariables, substituteVariables } from '../src/bundle/path-variables.js';
import { findTags, instructionText, parseInstructions } from '../src/bundle/workflow/instructions-parser.js';
import { runValidateCommand } from '../src/cli/commands/validate-command.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('agent file parser', () => {
  test('bare XML with front matter, entities and emoji; cmds dialect with a #prompt action', () => {
    const agent = parseAgentFile(
      `---\ndescription: Test agent\n---\n<agent id="x/agents/t.md" name="Tess" title="R&amp;D Helper" icon="🧪">
  <persona><role>Tester</role><identity>Checks &lt;things&gt;</identity><communication_style>Short</communication_style><principles>Be exact</principles></persona>
  <critical-actions><i>Load into memory {bundle-root}/config.yaml</i><i>Say hi to {user_name}</i></critical-actions>
  <cmds>
    <c cmd="*help">Help</c>
    <c cmd="*go" action="#go">Go</c>
    <c cmd="*say" action="say hello">Say</c>
    <c cmd="*t" tmpl="{bundle-root}/templates/t.md" data="{bundle-root}/d.csv">Template</c>
    <c cmd="*exit">Bye</c>
  </cmds>
  <prompts><prompt id="go"><![CDATA[Do <the> thing]]></prompt></prompts>
</agent>`,
      't.md',
    );
    expect(agent.fencedXml).toBe(false);
    expect(agent.frontMatter).toEqual({ description: 'Test agent' });
    expect([agent.name, agent.title, agent.icon, agent.dialect]).toEqual([
      'Tess',
      'R&D Helper',
      '🧪',
      'cmds',
    ]);
    expect(agent.persona.identity).toBe('Checks <things>');
    expect(agent.criticalActions).toEqual([
      'Load into memory {bundle-root}/config.yaml',
      'Say hi to {user_name}',
    ]);
    expect(agent.menu.map((m) => m.kind)).toEqual(['help', 'action', 'action', 'tmpl', 'exit']);
    expect(agent.menu[3]?.targets.map((t) => t.attribute)).toEqual(['tmpl', 'data']);
    expect(agent.prompts.go).toBe('Do <the> thing');
  });

  test('menu dialect: activation steps play the critical actions, <menu><item workflow>', () => {
    const agent = parseAgentFile(
      '# A\n\n```xml\n<agent id="a" name="A" title="T" icon="🧙">\n<activation critical="MANDATORY">\n  <step n="1">Load and read {project-root}/bmad/m/config.yaml NOW</step>\n  <step n="2">Remember {user_name}</step>\n  <rules>\n  - Stay in character\n  - Number lists\n  </rules>\n</activation>\n<menu><item cmd="*help">Menu</item><item cmd="*w" workflow="todo">W</item></menu>\n</agent>\n```\n',
      'a.md',
    );
    expect(agent.fencedXml).toBe(true);
    expect(agent.dialect).toBe('menu');
    expect(agent.hasCriticalActionsElement).toBe(false);
    expect(agent.criticalActions).toEqual([
      'Load and read {project-root}/bmad/m/config.yaml NOW',
      'Remember {user_name}',
    ]);
    expect(agent.rules).toEqual(['Stay in character', 'Number lists']);
    expect(agent.menu[1]).toMatchObject({ cmd: '*w', kind: 'workflow', target: 'todo' });
  });

  test('stray & and < are repaired; unclosed elements are a BundleError with file and line', () => {
    expect(
      parseAgentFile(
        '<agent id="a" name="A & B" title="t"><menu><item cmd="*x">a < b & c</item></menu></agent>',
        'ok.md',
      ).menu[0]?.label,
    ).toBe('a < b & c');
    expect(() =>
      parseAgentFile('intro\n\n<agent id="a">\n<menu>\n<item cmd="*x">x</menu>\n</agent>', 'bad.md'),
    ).toThrow(/Malformed agent XML in bad\.md at line \d+/);
    expect(() => parseAgentFile('# nothing here', 'none.md')).toThrow(BundleError);
  });

  test('load targets of critical actions: files only, not folders or prose', () => {
    expect(findLoadTarget('Load into memory {project-root}/bmad/bmm/config.yaml and set variable x')).toBe(
      '{project-root}/bmad/bmm/config.yaml',
    );
    expect(findLoadTarget('🚨 NOW:\n  - Load and read {project-root}/bmad/bmb/config.yaml NOW')).toBe(
      '{project-root}/bmad/bmb/config.yaml',
    );
    expect(
      findLoadTarget('Load the fragments from `{project-root}/bmad/bmm/testarch/knowledge/` first'),
    ).toBeUndefined();
    expect(
      findLoadTarget('Consult {project-root}/x/tea-index.csv and load only what you need'),
    ).toBeUndefined();
    expect(findLoadTarget('Load persona from this current agent file')).toBeUndefined();
  });
});

describe('instructions parser', () => {
  test('survives <<action>, <</action>, placeholders, unclosed and unknown tags', () => {
    const parsed = parseInstructions(`\`\`\`xml
<critical>Engine: {project_root}/bmad/core/tasks/workflow.md</critical>
<workflow>
<step n="1" goal="Start">
  <action>List files like story-<epic>.<story>.md<</action>
  <<action>Return to step 2</action>
  <ask optional="true" if="x > 1">One question?</ask>
  <custom-thing>stays text</custom-thing>
  <check>If ok → <invoke-workflow path="{installed_path}/w.yaml">go</invoke-workflow></check>
  <action>Prose mentioning <action>, <check> tags
</step>
<step n="2a" goal="Next" optional="true" repeat="3"><goto step="1">again</goto><template-output>section</template-output></step>
</workflow>
\`\`\``);
    expect(parsed.fenced).toBe(true);
    expect(parsed.form).toBe('workflow');
    expect(parsed.steps.map((s) => [s.n, s.goal, s.optional, s.repeat])).toEqual([
      ['1', 'Start', false, undefined],
      ['2a', 'Next', true, '3'],
    ]);
    const first = parsed.steps[0]!;
    const tags = first.tags.filter((t) => t.tag !== '#text').map((t) => t.tag);
    expect(tags).toEqual(['action', 'action', 'ask', 'check']);
    expect(instructionText(first.tags.find((t) => t.tag === 'action')!)).toContain(
      'story-<epic>.<story>.md<',
    );
    expect(first.tags.find((t) => t.tag === 'ask')?.attrs).toEqual({ optional: 'true', if: 'x > 1' });
    expect(findTags(parsed.root, 'invoke-workflow')[0]?.attrs.path).toBe('{installed_path}/w.yaml');
    expect(instructionText(parsed.root)).toContain('<custom-thing>stays text</custom-thing>');
    expect(parsed.steps[1]?.tags.map((t) => t.tag)).toEqual(['goto', 'template-output']);
    expect(parsed.preamble.map((t) => t.tag)).toContain('critical');
  });

  test('task form and plain text never throw', () => {
    const task = parseInstructions(
      '<task id="t"><llm><i>x</i></llm><flow><step n="1" title="Go"><action>a</action></step></flow></task>',
    );
    expect(task.form).toBe('task');
    expect(task.steps[0]).toMatchObject({ n: '1', title: 'Go' });
    for (const junk of [
      '',
      '<',
      '</step>',
      '<step n="1"',
      '<<<>>>',
      '<step n="1"><step n="2">',
      '\0<action>',
    ]) {
      expect(() => parseInstructions(junk)).not.toThrow();
    }
  });
});

describe('path variables', () => {
  const scope = {
    projectRoot: '/p',
    bundleRoot: '/p/b',
    coreRoot: '/p/core',
    configSource: '/p/b/config.yaml',
    config: { output_folder: '{project-root}/docs', user_name: 'Ann' },
    siblings: {
      installed_path: '{bundle-root}/wf',
      out: '{config_source}:output_folder',
      date: 'system-generated',
    },
    now: () => new Date(2025, 9, 5),
  };

  test('config refs, {date}, path variables and sibling keys, in order; {{slots}} stay', () => {
    expect(resolveVariables('{config_source}:output_folder/req-{date}.md', scope)).toBe(
      '/p/docs/req-2025-10-05.md',
    );
    expect(resolveVariables('{out}/{installed_path}/x-{{date}}-{project_root}', scope)).toBe(
      '/p/docs//p/b/wf/x-{{date}}-/p',
    );
    expect(resolveVariables('{core-root}/tasks/workflow.xml', scope)).toBe('/p/core/tasks/workflow.xml');
  });

  test('a missing key is an error naming file and key, never an empty string', () => {
    expect(() =>
      resolveVariables('{config_source}:invalid_var/file.md', scope, { file: 'w.yaml', key: 'k' }),
    ).toThrow(
      /Config key "invalid_var" not found in \/p\/b\/config\.yaml.*key "k" in w\.yaml.*Available keys: output_folder, user_name/,
    );
    expect(() => resolveVariables('{module-code}/x', scope, { file: 'w.yaml', key: 'k' })).toThrow(
      /Unresolved variable \{module-code\}/,
    );
    expect(substituteVariables('{a}', { siblings: { a: '{b}', b: '{a}' } }).issues).toHaveLength(1);
  });
});

describe('discovery and validate', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'agentloop-validate-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('README.md, *.md.bak and _cfg stubs are not agents', async () => {
    const root = path.join(dir, 'proj');
    await mkdir(path.join(root, 'bmad', 'core', 'agents'), { recursive: true });
    await mkdir(path.join(root, 'bmad', '_cfg', 'agents'), { recursive: true });
    await mkdir(path.join(root, 'bmad', 'mod', 'agents'), { recursive: true });
    const agent =
      '```xml\n<agent id="m" name="M" title="T" icon="x"><cmds><c cmd="*help">h</c></cmds></agent>\n```\n';
    await writeFile(path.join(root, 'bmad', 'mod', 'agents', 'm.md'), agent);
    await writeFile(path.join(root, 'bmad', 'mod', 'agents', 'README.md'), `# About agents\n${agent}`);
    await writeFile(path.join(root, 'bmad', 'mod', 'agents', 'm.md.bak'), agent);
    await writeFile(path.join(root, 'bmad', 'mod', 'agents', 'notes.md'), '# just notes');
    await writeFile(
      path.join(root, 'bmad', '_cfg', 'agents', 'mod-m.md'),
      '<agent-config name=""></agent-config>',
    );
    for (const at of [root, path.join(root, 'bmad')]) {
      expect((await discoverAgents(at)).map((a) => path.relative(root, a.file))).toEqual([
        'bmad/mod/agents/m.md',
      ]);
    }
  });

  test('validate: exit 2 on no folder or no agents, readable summary, JSON shape', async () => {
    const io = () => {
      const out = { stdout: '', stderr: '' };
      return {
        out,
        io: { stdout: (s: string) => (out.stdout += s), stderr: (s: string) => (out.stderr += s) },
      };
    };
    const missing = io();
    expect(await runValidateCommand([path.join(dir, 'nope')], missing.io)).toBe(2);
    expect(missing.out.stderr).toMatch(/No such folder/);
    const empty = io();
    await mkdir(path.join(dir, 'empty'));
    expect(await runValidateCommand([path.join(dir, 'empty')], empty.io)).toBe(2);
    // Without <root> the current directory is validated (as --project defaults to it); both is a usage error.
    await expect(runValidateCommand([dir, '--project', dir], io().io)).rejects.toThrow(/<root> or --project/);

    const bundle = path.join(dir, 'example');
    await cp(path.join(REPO, 'bundles', 'requirements-workflow'), bundle, { recursive: true });
    const text = io();
    expect(await runValidateCommand([bundle], text.io)).toBe(0);
    expect(text.out.stdout).toContain('Iris - Requirements Intake Facilitator');
    expect(text.out.stdout).toContain('No problems found.');

    await writeFile(
      path.join(bundle, 'workflows', 'stakeholder-map', 'workflow.yaml'),
      'name: broken\nconfig_source: "{bundle-root}/config.yaml"\nx: "{config_source}:nope"\ninstructions: "{bundle-root}/missing.md"\n',
    );
    const json = io();
    expect(await runValidateCommand([bundle, '--json'], json.io)).toBe(0);
    const report = JSON.parse(json.out.stdout);
    expect(Object.keys(report)).toEqual(expect.arrayContaining(['agents', 'workflows', 'problems']));
    expect(report.agents[0].menu[1]).toMatchObject({
      cmd: '*intake-workflow',
      kind: 'workflow',
      status: 'exists',
    });
    expect(
      report.problems.map((p: { key: string; status: string }) => `${p.key} ${p.status}`).sort(),
    ).toEqual(['instructions missing', 'x missing-config-key']);
    expect(report.problems[0]).toMatchObject({
      file: 'workflows/stakeholder-map/workflow.yaml',
      value: expect.any(String),
      message: expect.any(String),
    });
  });
});
