import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadBundleAgent } from '../src/bundle/bundle-agent.js';
import type { BundleAgent } from '../src/bundle/bundle-agent-types.js';
import { BundleError } from '../src/bundle/bundle-error.js';
import { variablesToSet } from '../src/bundle/critical-actions.js';
import type { FileLoadEvent } from '../src/bundle/sandbox/sandbox.js';
import { validateTree } from '../src/bundle/validation/validate-tree.js';
import { bmadProject } from './support/bmad-installs.js';

// Regressions found on real alpha trees (../shared/corpus), each on a small tree built here.

let project: string;

beforeEach(async () => {
  project = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-robust-')));
});
afterEach(async () => {
  await rm(project, { recursive: true, force: true });
});

async function put(rel: string, text: string): Promise<string> {
  const file = path.join(project, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

/** An installed alpha tree: bmad/core, bmad/bmm with its config and one agent of the menu dialect. */
async function alphaTree(activation: string[], items: string[]): Promise<void> {
  await put('bmad/core/config.yaml', 'user_name: Sam\ncommunication_language: English\n');
  await put('bmad/core/tasks/workflow.xml', '<task/>');
  await put(
    'bmad/bmm/config.yaml',
    'project_name: Demo\noutput_folder: "{project-root}/docs"\nuser_name: Sam\n',
  );
  await put(
    'bmad/bmm/agents/tester.md',
    [
      '```xml',
      '<agent id="bmad/bmm/agents/tester.md" name="Tia" title="Tester" icon="T">',
      '<activation critical="MANDATORY">',
      ...activation.map((a, i) => `<step n="${i + 1}">${a}</step>`),
      '</activation>',
      '<persona><role>Tests</role></persona>',
      '<menu>',
      '<item cmd="*help">Help</item>',
      ...items,
      '</menu>',
      '</agent>',
      '```',
    ].join('\n'),
  );
}

const load = (events?: FileLoadEvent[]) =>
  loadBundleAgent({
    bundleRoot: project,
    agent: 'tester',
    onFileLoad: events ? (e) => events.push(e) : undefined,
  });

const call = (agent: BundleAgent, name: string, args: Record<string, unknown>) =>
  agent.definition.tools.find((t) => t.name === name)!.execute(args, {} as never) as Promise<
    Record<string, unknown>
  >;

describe('critical actions', () => {
  test('a file that moved (a source path in an installed tree) falls back into the install, with a warning', async () => {
    await alphaTree(
      ['Load into memory {project-root}/src/modules/bmm/config.yaml and set variables project_name'],
      [],
    );
    const events: FileLoadEvent[] = [];
    const agent = await load(events);
    expect(events.map((e) => [path.relative(project, e.path), e.reason])).toContainEqual([
      'bmad/bmm/config.yaml',
      'critical-action',
    ]);
    expect(agent.variables.project_name).toBe('Demo');
    expect(agent.warnings).toEqual([
      `A critical action in ${path.join(project, 'bmad/bmm/agents/tester.md')} names ${path.join(project, 'src/modules/bmm/config.yaml')}, which does not exist; loaded ${path.join(project, 'bmad/bmm/config.yaml')} instead`,
    ]);
  });

  test('a file found nowhere still refuses to start, naming the action and the file', async () => {
    await alphaTree(['Load into memory {project-root}/src/modules/bmm/settings.yaml'], []);
    const error = (await load().catch((e: unknown) => e)) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toContain('Critical action failed');
    expect(error.message).toContain(path.join(project, 'src/modules/bmm/settings.yaml'));
  });

  test('"set variables" with no list names no variable (not one called "s")', async () => {
    expect(variablesToSet('Load into memory {project-root}/bmad/bmm/config.yaml and set variables')).toEqual(
      [],
    );
    expect(variablesToSet('Load it and set variables: project_name, user_name')).toEqual([
      'project_name',
      'user_name',
    ]);
    await alphaTree(['Load into memory {project-root}/bmad/bmm/config.yaml and set variables'], []);
    expect((await load()).warnings).toEqual([]);
  });

  test('configFiles of validate lists each file once', async () => {
    await alphaTree(
      [
        'Load into memory {project-root}/bmad/bmm/config.yaml and set variables project_name',
        'Load into memory {project-root}/bmad/bmm/config.yaml again to refresh',
      ],
      [],
    );
    const report = await validateTree(project);
    expect(report.agents[0]!.configFiles).toEqual(['{project-root}/bmad/bmm/config.yaml']);
  });
});

describe('menu targets and workflows', () => {
  test('exec= of a workflow.yaml runs through execute_workflow; a todo target says not implemented', async () => {
    await alphaTree(
      ['Load into memory {project-root}/bmad/bmm/config.yaml and set variables project_name'],
      [
        '<item cmd="*plan" exec="{project-root}/bmad/bmm/workflows/plan/workflow.yaml">Plan</item>',
        '<item cmd="*later" workflow="todo">Later</item>',
      ],
    );
    await put(
      'bmad/bmm/workflows/plan/workflow.yaml',
      'name: plan\nconfig_source: "{project-root}/bmad/bmm/config.yaml"\ninstructions: "{installed_path}/instructions.md"\n',
    );
    await put('bmad/bmm/workflows/plan/instructions.md', '<step n="1" goal="Plan">Plan it</step>');
    const agent = await load();
    const prompt = agent.definition.instructions;
    expect(prompt).toContain(
      '2. *plan - Plan\n   Runs workflow: execute_workflow({ workflow_path: "{project-root}/bmad/bmm/workflows/plan/workflow.yaml" })',
    );
    expect(prompt).toContain('3. *later - Later\n   Not implemented yet ("todo"): tell the user so');
    const run = await call(agent, 'execute_workflow', {
      workflow_path: '{project-root}/bmad/bmm/workflows/plan/workflow.yaml',
    });
    expect(run.instructions).toBe('<step n="1" goal="Plan">Plan it</step>');
    await expect(call(agent, 'execute_workflow', { workflow_path: 'todo' })).rejects.toThrow(
      /marked "todo" in the agent file: not implemented yet/,
    );
  });

  test('a workflow.yaml nested under a workflow: root key loads', async () => {
    await alphaTree(
      ['Load into memory {project-root}/bmad/bmm/config.yaml and set variables project_name'],
      [],
    );
    const file = await put(
      'bmad/bmm/workflows/nested/workflow.yaml',
      'workflow:\n  name: nested\n  description: Nested keys\n  config_source: "{project-root}/bmad/bmm/config.yaml"\n  project: "{config_source}:project_name"\n  instructions: "{installed_path}/instructions.md"\n',
    );
    await put('bmad/bmm/workflows/nested/instructions.md', '<step n="1">Go</step>');
    const result = await call(await load(), 'execute_workflow', { workflow_path: file });
    expect([result.workflow_name, result.description, result.instructions]).toEqual([
      'nested',
      'Nested keys',
      '<step n="1">Go</step>',
    ]);
    expect((result.config as Record<string, unknown>).project).toBe('Demo');
    const report = await validateTree(project);
    expect(report.workflows.map((w) => [w.name, w.steps])).toEqual([['nested', 1]]);
  });

  test('a missing config file names the workflow and the key that led there', async () => {
    await alphaTree(
      ['Load into memory {project-root}/bmad/bmm/config.yaml and set variables project_name'],
      [],
    );
    const file = await put(
      'bmad/bmm/workflows/lost/workflow.yaml',
      'name: lost\nconfig_source: "{project-root}/bmad/cis/config.yaml"\n',
    );
    const error = (await call(await load(), 'execute_workflow', { workflow_path: file }).catch(
      (e: unknown) => e,
    )) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toBe(
      `Config file not found: ${path.join(project, 'bmad/cis/config.yaml')}, named by key "config_source" ({project-root}/bmad/cis/config.yaml) of workflow ${file}`,
    );
    expect([error.file, error.key]).toEqual([path.join(project, 'bmad/cis/config.yaml'), 'config_source']);
  });
});

describe('BMAD 6.0 steps-based workflow.md through execute_workflow', () => {
  test('front matter resolved, body returned, step files listed and not read', async () => {
    const install = await bmadProject('6.0');
    const events: FileLoadEvent[] = [];
    const pm = await loadBundleAgent({
      bundleRoot: install,
      agent: 'pm',
      outputFolder: path.join(project, 'out'),
      onFileLoad: (e) => events.push(e),
    });
    expect(pm.definition.instructions).toContain(
      'Runs workflow: execute_workflow({ workflow_path: "{project-root}/_bmad/bmm/workflows/2-plan-workflows/create-prd/workflow-create-prd.md" })',
    );
    const result = await call(pm, 'execute_workflow', {
      workflow_path: '{project-root}/_bmad/bmm/workflows/2-plan-workflows/create-prd/workflow-create-prd.md',
    });
    const dir = path.join(install, '_bmad/bmm/workflows/2-plan-workflows/create-prd');
    expect(result.workflow_name).toBe('create-prd');
    expect(result.instructions).toMatch(/^\n?# PRD Create Workflow/);
    expect((result.config as Record<string, unknown>).nextStep).toBe(
      path.join(dir, 'steps-c/step-01-init.md'),
    );
    expect(result.steps).toContainEqual({
      n: 'step-01-init',
      goal: path.join(dir, 'steps-c/step-01-init.md'),
    });
    expect(String(result.next)).toMatch(/Step files are listed in steps, not loaded/);
    const read = events.map((e) => path.relative(install, e.path));
    expect(read.filter((f) => f.includes('/steps-'))).toEqual([]);
    expect(read).toContain('_bmad/bmm/workflows/2-plan-workflows/create-prd/workflow-create-prd.md');
  }, 180_000);
});
