import { cp, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadBundleAgent } from '../src/bundle/bundle-agent.js';
import type { BundleAgent } from '../src/bundle/bundle-agent-types.js';
import { BundleError } from '../src/bundle/bundle-error.js';
import type { FileLoadEvent } from '../src/bundle/sandbox/sandbox.js';
import type { Tool } from '../src/tools/define-tool.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLE = path.join(REPO, 'bundles', 'requirements-workflow');
const NOW = () => new Date(2025, 9, 5, 12, 0, 0);

let dir: string;
let bundle: string;
let project: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-bundle-')));
  bundle = path.join(dir, 'bundle');
  project = path.join(dir, 'project');
  await cp(EXAMPLE, bundle, { recursive: true });
  await mkdir(project);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function tool(agent: BundleAgent, name: string): Tool {
  const found = agent.definition.tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

const call = (agent: BundleAgent, name: string, args: Record<string, unknown>) =>
  tool(agent, name).execute(args, {} as never) as Promise<Record<string, unknown>>;

async function load(events?: FileLoadEvent[], extra: Record<string, unknown> = {}) {
  return loadBundleAgent({
    bundleRoot: bundle,
    agent: 'intake-facilitator',
    projectRoot: project,
    now: NOW,
    onFileLoad: events ? (e) => events.push(e) : undefined,
    ...extra,
  });
}

describe('lazy loading', () => {
  test('loadBundleAgent reads the agent file and config.yaml only; workflows load on execute_workflow', async () => {
    const events: FileLoadEvent[] = [];
    const agent = await load(events);
    expect(events.map((e) => [path.relative(bundle, e.path), e.reason])).toEqual([
      ['agents/intake-facilitator.md', 'agent'],
      ['config.yaml', 'critical-action'],
    ]);
    expect(events.every((e) => e.bytes > 0)).toBe(true);
    await call(agent, 'execute_workflow', {
      workflow_path: '{bundle-root}/workflows/intake-workflow/workflow.yaml',
    });
    expect(events.slice(2).map((e) => [path.relative(bundle, e.path), e.reason])).toEqual([
      ['workflows/intake-workflow/workflow.yaml', 'workflow'],
      ['config.yaml', 'config'],
      ['workflows/intake-workflow/instructions.md', 'instructions'],
      ['workflows/intake-workflow/template.md', 'template'],
    ]);
  });
});

describe('loadBundleAgent', () => {
  test('builds prompt, context messages, variables, greeting and menu from the example bundle', async () => {
    const agent = await load();
    expect([agent.name, agent.title, agent.icon]).toEqual(['Iris', 'Requirements Intake Facilitator', '🧭']);
    expect(agent.outputFolder).toBe(path.join(project, 'docs', 'requirements'));
    expect(agent.variables).toMatchObject({
      user_name: 'Friend',
      output_folder: agent.outputFolder,
      'project-root': project,
    });
    expect(agent.definition.contextMessages.map((m) => m.content.split('\n')[0])).toEqual([
      `[Critical Action] Loaded file: ${path.join(bundle, 'config.yaml')}`,
      "[Critical Instruction] Remember the user's name is Friend",
      '[Critical Instruction] ALWAYS communicate in English',
      '[Critical Instruction] Load workflow files only when the user picks a command; never before',
    ]);
    expect(agent.menu.map((m) => m.cmd)).toEqual([
      '*help',
      '*intake-workflow',
      '*stakeholder-map',
      '*review-intake',
      '*exit',
    ]);
    expect(agent.greeting).toContain('Hello Friend!');
    expect(agent.greeting).toContain('2. *intake-workflow - Run a requirements intake');
    const prompt = agent.definition.instructions;
    expect(prompt).toContain('You are Iris 🧭, Requirements Intake Facilitator.');
    expect(prompt).toContain('call read_file');
    expect(prompt).toContain(
      'execute_workflow({ workflow_path: "{bundle-root}/workflows/intake-workflow/workflow.yaml" })',
    );
    expect(prompt).toMatch(/number and goal/);
    expect(prompt).toMatch(/exactly one clear question/);
  });

  test('finds an agent by its name and by its id', async () => {
    expect((await load(undefined, { agent: 'iris' })).name).toBe('Iris');
    expect(
      (await load(undefined, { agent: 'requirements-workflow/agents/intake-facilitator.md' })).name,
    ).toBe('Iris');
  });

  test('an unknown agent is a BundleError listing the agents', async () => {
    await expect(load(undefined, { agent: 'nobody' })).rejects.toThrow(
      /Unknown agent "nobody".*intake-facilitator/,
    );
  });

  test('malformed agent XML is a BundleError naming the file and line', async () => {
    const file = path.join(bundle, 'agents', 'intake-facilitator.md');
    await writeFile(file, (await readFile(file, 'utf8')).replace('</cmds>', ''));
    const error = await load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as BundleError).message).toMatch(
      /Malformed agent XML in .*intake-facilitator\.md at line \d+/,
    );
  });

  test('a failing critical action halts initialization, naming the action and the file', async () => {
    await rm(path.join(bundle, 'config.yaml'));
    const error = (await load().catch((e: unknown) => e)) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.code).toBe('critical-action');
    expect(error.message).toContain('Critical action failed: "Load into memory {bundle-root}/config.yaml');
    expect(error.message).toContain(path.join(bundle, 'config.yaml'));
  });
});

describe('read_file', () => {
  test('reads with variables and refuses to leave the roots', async () => {
    const agent = await load();
    const config = await call(agent, 'read_file', { file_path: '{bundle-root}/config.yaml' });
    expect(config.content).toContain('project_name: Untitled Project');
    await writeFile(path.join(project, 'notes.md'), 'hello');
    expect((await call(agent, 'read_file', { file_path: 'notes.md' })).content).toBe('hello');
    expect((await call(agent, 'read_file', { file_path: '{project-root}/notes.md' })).content).toBe('hello');
    await expect(
      call(agent, 'read_file', { file_path: '{bundle-root}/../../../../etc/passwd' }),
    ).rejects.toThrow(/Access denied/);
    await expect(call(agent, 'read_file', { file_path: '/etc/passwd' })).rejects.toThrow(/Access denied/);
    await expect(call(agent, 'read_file', { file_path: '~/.bashrc' })).rejects.toThrow(/home-relative/);
    await expect(call(agent, 'read_file', { file_path: '{bundle-root}/nope.md' })).rejects.toThrow(
      /File not found/,
    );
  });

  test('a missing {config_source}:key names the config file and the key', async () => {
    const agent = await load();
    const error = (await call(agent, 'read_file', { file_path: '{config_source}:no_such_key/x.md' }).catch(
      (e: unknown) => e,
    )) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toContain('Config key "no_such_key" not found in');
    expect(error.message).toContain(path.join(bundle, 'config.yaml'));
    expect(error.key).toBe('no_such_key');
  });

  test('enforces the size limit with a clear error', async () => {
    const agent = await load(undefined, { maxReadBytes: 8000 });
    await writeFile(path.join(project, 'big.txt'), 'x'.repeat(8001));
    await expect(call(agent, 'read_file', { file_path: '{project-root}/big.txt' })).rejects.toThrow(
      /File too large: .*big\.txt is 8001 bytes; the limit is 8000 bytes/,
    );
  });
});

describe('execute_workflow', () => {
  test('returns the resolved config, instructions and template of the example workflow', async () => {
    const agent = await load();
    const result = await call(agent, 'execute_workflow', {
      workflow_path: '{bundle-root}/workflows/intake-workflow/workflow.yaml',
      user_input: { topic: 'x' },
    });
    expect(result.workflow_name).toBe('intake-workflow');
    expect(result.instructions).toContain('<ask>What problem are you trying to solve');
    expect(result.template).toContain('# Requirements intake: {{project_name}}');
    expect(result.steps).toEqual(expect.arrayContaining([{ n: '1', goal: 'Understand the problem' }]));
    const config = result.config as Record<string, string>;
    expect(config.output_folder).toBe(path.join(project, 'docs', 'requirements'));
    expect(config.user_name).toBe('Friend');
    expect(result.default_output_file).toBe(
      `${path.join(project, 'docs', 'requirements')}/intake-{{project_slug}}-2025-10-05.md`,
    );
    expect(result.user_input).toEqual({ topic: 'x' });
  });

  test('a missing config key in a path value fails naming file and key; elsewhere it is a warning', async () => {
    const file = path.join(bundle, 'workflows', 'intake-workflow', 'workflow.yaml');
    const original = await readFile(file, 'utf8');
    await writeFile(file, `${original}\nreviewer: "{config_source}:reviewer_name"\n`);
    const agent = await load();
    const result = await call(agent, 'execute_workflow', { workflow_path: file });
    expect((result.config as Record<string, unknown>).reviewer).toBe('{config_source}:reviewer_name');
    expect(result.warnings).toEqual([
      expect.stringMatching(
        /^Config key "reviewer_name" not found in .*config\.yaml.*key "reviewer" in .*workflow\.yaml.*; left as written$/,
      ),
    ]);
    await writeFile(file, `${original}\nreview_file: "{config_source}:reviews_folder/review.md"\n`);
    const error = (await call(agent, 'execute_workflow', { workflow_path: file }).catch(
      (e: unknown) => e,
    )) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.message).toMatch(
      /Config key "reviews_folder" not found in .*config\.yaml.*key "review_file" in .*workflow\.yaml/,
    );
  });
});

describe('save_output', () => {
  test('creates folders inside the output folder and refuses writes outside it', async () => {
    const agent = await load();
    const saved = await call(agent, 'save_output', {
      file_path: '{output_folder}/a/b/intake-{date}.md',
      content: '# Hi',
    });
    expect(saved.path).toBe(path.join(agent.outputFolder, 'a/b/intake-2025-10-05.md'));
    expect(await readFile(saved.path as string, 'utf8')).toBe('# Hi');
    const relative = await call(agent, 'save_output', { file_path: 'plain.md', content: 'x' });
    expect(relative.path).toBe(path.join(agent.outputFolder, 'plain.md'));
    const viaConfig = await call(agent, 'save_output', {
      file_path: '{config_source}:output_folder/c.md',
      content: 'y',
    });
    expect(viaConfig.path).toBe(path.join(agent.outputFolder, 'c.md'));
    for (const bad of [
      '../escape.md',
      '{project-root}/escape.md',
      '{bundle-root}/config.yaml',
      '/tmp/escape.md',
      '~/escape.md',
    ]) {
      await expect(call(agent, 'save_output', { file_path: bad, content: 'x' }), bad).rejects.toThrow(
        /Write refused|Access denied/,
      );
    }
    await expect(
      call(agent, 'save_output', { file_path: '{output_folder}/x-{{slug}}.md', content: 'x' }),
    ).rejects.toThrow(/fill the template slot \{\{slug\}\}/);
  });

  test('refuses to write through a symlink that leaves the output folder', async () => {
    const agent = await load();
    const outside = path.join(dir, 'outside');
    await mkdir(outside);
    await mkdir(agent.outputFolder, { recursive: true });
    await symlink(outside, path.join(agent.outputFolder, 'link'));
    await symlink(path.join(outside, 'new.md'), path.join(agent.outputFolder, 'dangling.md'));
    await expect(call(agent, 'save_output', { file_path: 'link/x.md', content: 'x' })).rejects.toThrow(
      /Write refused/,
    );
    await expect(call(agent, 'save_output', { file_path: 'dangling.md', content: 'x' })).rejects.toThrow(
      /dangling symlink/,
    );
  });
});
