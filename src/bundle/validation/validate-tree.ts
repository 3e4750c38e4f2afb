import path from 'node:path';
import { parseAgentFile } from '../agent-file-parser.js';
import { findBmad6Install } from '../bmad6/bmad-install.js';
import {
  type BundleInfo,
  detectTree,
  listAgentFiles,
  listMarkdownWorkflowFiles,
  listWorkflowFiles,
} from '../bundle-discovery.js';
import { BundleError, errorMessage } from '../bundle-error.js';
import { parseYamlMap, scalarEntries, type YamlMap } from '../config-loader.js';
import { findLoadTarget, variablesToSet } from '../critical-actions.js';
import { fillVariables, type VariableScope } from '../path-variables.js';
import { Sandbox } from '../sandbox/sandbox.js';
import { parseInstructions } from '../workflow/instructions-parser.js';
import { unwrapWorkflow, WORKFLOW_PATH_KEYS, workflowSiblings } from '../workflow/workflow-loader.js';
import { checkPathReference, checkPromptReference } from './reference-status.js';
import { validateBmad6 } from './validate-bmad6.js';
import { checkBundleManifest } from './validate-bundle-manifest.js';
import { validateMarkdownWorkflow } from './validate-markdown-workflow.js';
import type {
  ValidatedAgent,
  ValidatedMenuItem,
  ValidatedTarget,
  ValidatedWorkflow,
  ValidationProblem,
  ValidationReport,
} from './validation-report.js';

interface TreeContext {
  sandbox: Sandbox;
  projectRoot: string;
  coreRoot?: string;
  rel: (p: string) => string;
  problems: ValidationProblem[];
  /** Each YAML file is read (and its problem reported) once, however many agents and workflows use it. */
  yaml: Map<string, Promise<YamlMap | undefined>>;
}

function readYaml(ctx: TreeContext, file: string): Promise<YamlMap | undefined> {
  let read = ctx.yaml.get(file);
  if (!read) {
    read = readYamlOnce(ctx, file);
    ctx.yaml.set(file, read);
  }
  return read;
}

async function readYamlOnce(ctx: TreeContext, file: string): Promise<YamlMap | undefined> {
  try {
    return parseYamlMap((await ctx.sandbox.readText(file, 'validate')).content, file);
  } catch (error) {
    ctx.problems.push({
      file: ctx.rel(file),
      key: '',
      value: '',
      status: 'parse-error',
      message: errorMessage(error),
    });
    return undefined;
  }
}

function baseScope(ctx: TreeContext, bundle: BundleInfo): VariableScope & { projectRoot: string } {
  return { projectRoot: ctx.projectRoot, bundleRoot: bundle.root, coreRoot: ctx.coreRoot };
}

/** The agent's config as critical actions would load it (or the bundle's config.yaml). */
async function agentConfig(ctx: TreeContext, bundle: BundleInfo, actions: string[]) {
  const scope = baseScope(ctx, bundle);
  for (const action of actions) {
    const raw = findLoadTarget(action);
    if (!raw || !/\.ya?ml$/i.test(raw)) continue;
    const check = await checkPathReference(raw, scope, ctx.sandbox);
    if (check.status === 'exists' && check.resolved)
      return { path: check.resolved, values: await readYaml(ctx, check.resolved) };
    return undefined;
  }
  return bundle.configPath
    ? { path: bundle.configPath, values: await readYaml(ctx, bundle.configPath) }
    : undefined;
}

async function validateAgent(
  ctx: TreeContext,
  bundle: BundleInfo,
  file: string,
): Promise<ValidatedAgent | undefined> {
  const { content } = await ctx.sandbox.readText(file, 'validate');
  if (!/<agent[\s>]/.test(content)) {
    ctx.problems.push({
      file: ctx.rel(file),
      key: 'agent',
      value: '',
      status: 'no-agent-block',
      message:
        'no <agent> block: an agent file holds its agent in an XML <agent> element, so it is not loaded',
    });
    return undefined;
  }
  let agent: ReturnType<typeof parseAgentFile>;
  try {
    agent = parseAgentFile(content, file);
  } catch (error) {
    ctx.problems.push({
      file: ctx.rel(file),
      key: 'agent',
      value: '',
      status: 'parse-error',
      message: errorMessage(error),
    });
    return undefined;
  }
  const config = await agentConfig(ctx, bundle, agent.criticalActions);
  const variables: Record<string, string> = {};
  for (const [k, v] of Object.entries(scalarEntries(config?.values ?? {}))) {
    variables[k] = fillVariables(v, baseScope(ctx, bundle));
  }
  const scope = { ...baseScope(ctx, bundle), variables, configSource: config?.path, config: config?.values };
  for (const action of agent.criticalActions) {
    for (const name of variablesToSet(action)) {
      if (config?.values && !(name in config.values)) {
        ctx.problems.push({
          file: ctx.rel(file),
          key: name,
          value: action,
          status: 'missing-config-key',
          message: `a critical action sets variable "${name}" but ${ctx.rel(config.path)} has no such key`,
        });
      }
    }
    const raw = findLoadTarget(action);
    if (!raw) continue;
    const check = await checkPathReference(raw, scope, ctx.sandbox);
    if (check.status !== 'exists') {
      ctx.problems.push({
        file: ctx.rel(file),
        key: 'critical-action',
        value: raw,
        status: check.status,
        message: check.message ?? '',
      });
    }
  }
  const menu: ValidatedMenuItem[] = [];
  for (const item of agent.menu) {
    const targets: ValidatedTarget[] = [];
    for (const t of item.targets) {
      const check =
        t.kind === 'action'
          ? checkPromptReference(t.target, agent.prompts)
          : await checkPathReference(t.target, scope, ctx.sandbox);
      targets.push({ ...t, status: check?.status, resolved: check?.resolved });
      if (check && check.status !== 'exists' && check.status !== 'todo') {
        ctx.problems.push({
          file: ctx.rel(file),
          key: `${item.cmd} ${t.attribute}`,
          value: t.target,
          status: check.status,
          message: check.message ?? '',
        });
      }
    }
    menu.push({
      cmd: item.cmd,
      label: item.label,
      kind: item.kind,
      target: item.target,
      status: targets[0]?.status,
      targets,
    });
  }
  return {
    file: ctx.rel(file),
    id: agent.id,
    name: agent.name,
    title: agent.title,
    icon: agent.icon,
    dialect: agent.dialect,
    bundle: bundle.name,
    criticalActions: agent.criticalActions,
    configFiles: [
      ...new Set(agent.criticalActions.map(findLoadTarget).filter((t): t is string => t !== undefined)),
    ],
    menu,
  };
}

function configRefs(value: unknown, key: string, out: { key: string; value: string; name: string }[]): void {
  if (typeof value === 'string') {
    for (const m of value.matchAll(/\{config_source\}:([A-Za-z0-9_]+)/g))
      out.push({ key, value, name: m[1]! });
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) configRefs(v, `${key}[${i}]`, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) configRefs(v, key ? `${key}.${k}` : k, out);
  }
}

async function validateWorkflow(
  ctx: TreeContext,
  bundle: BundleInfo,
  file: string,
): Promise<ValidatedWorkflow | undefined> {
  const loaded = await readYaml(ctx, file);
  if (!loaded) return undefined;
  const raw = unwrapWorkflow(loaded);
  const scope: VariableScope & { projectRoot: string } = {
    ...baseScope(ctx, bundle),
    siblings: workflowSiblings(raw),
  };
  if (typeof raw.installed_path !== 'string') scope.installedPath = path.dirname(file);
  const paths: ValidatedWorkflow['paths'] = {};
  const problem = (key: string, value: string, status: ValidationProblem['status'], message: string) =>
    ctx.problems.push({ file: ctx.rel(file), key, value, status, message });
  for (const key of WORKFLOW_PATH_KEYS) {
    const value = raw[key];
    if (typeof value !== 'string' || value === '') continue;
    const check = await checkPathReference(value, scope, ctx.sandbox);
    paths[key] = { value, status: check.status, resolved: check.resolved };
    if (key === 'config_source' && check.status === 'exists' && check.resolved) {
      const config = await readYaml(ctx, check.resolved);
      if (config) Object.assign(scope, { configSource: check.resolved, config });
    }
    if (check.status !== 'exists') {
      let message = `${key}: ${check.message ?? check.status}`;
      if (key === 'instructions' || key === 'template' || key === 'validation') {
        const beside = path.join(path.dirname(file), path.basename(value));
        if ((await ctx.sandbox.status(beside)) === 'exists')
          message += ` (a file of that name exists next to the workflow.yaml)`;
      }
      problem(key, value, check.status, message);
    }
  }
  if (scope.config) {
    const refs: { key: string; value: string; name: string }[] = [];
    configRefs(raw, '', refs);
    for (const ref of refs) {
      if (!(ref.name in scope.config)) {
        problem(
          ref.key,
          ref.value,
          'missing-config-key',
          `config key "${ref.name}" not found in ${ctx.rel(scope.configSource ?? '')}`,
        );
      }
    }
  }
  const result: ValidatedWorkflow = {
    file: ctx.rel(file),
    name: typeof raw.name === 'string' ? raw.name : path.basename(path.dirname(file)),
    bundle: bundle.name,
    paths,
  };
  const instructions = paths.instructions;
  if (instructions?.status === 'exists' && instructions.resolved) {
    const parsed = parseInstructions((await ctx.sandbox.readText(instructions.resolved, 'validate')).content);
    result.steps = parsed.steps.length;
    result.instructionsForm = parsed.form;
  }
  return result;
}

/**
 * Checks a whole tree (a project folder holding `bmad/`, a `bmad/` folder, or spec-layout bundles):
 * every agent and its menu targets, every workflow.yaml's paths and config references, every
 * markdown workflow's front matter files, every config.
 * Reads only; problems are collected, not thrown. Throws a {@link BundleError} when `root` is no folder.
 */
export async function validateTree(root: string): Promise<ValidationReport> {
  const install = await findBmad6Install(root);
  if (install) return validateBmad6(install);
  const tree = await detectTree(root);
  const roots = [
    tree.projectRoot,
    ...tree.bundles.map((b) => b.root),
    ...(tree.coreRoot ? [tree.coreRoot] : []),
  ];
  const ctx: TreeContext = {
    sandbox: await Sandbox.create({ readRoots: roots }),
    projectRoot: tree.projectRoot,
    coreRoot: tree.coreRoot,
    rel: (p) => path.relative(tree.projectRoot, p) || '.',
    problems: [],
    yaml: new Map(),
  };
  const report: ValidationReport = {
    root: tree.projectRoot,
    layout: tree.layout,
    agents: [],
    workflows: [],
    configs: [],
    problems: ctx.problems,
  };
  for (const bundle of tree.bundles) {
    await checkBundleManifest(ctx.sandbox, bundle.root, ctx.rel, ctx.problems);
    if (bundle.configPath) {
      const values = await readYaml(ctx, bundle.configPath);
      if (values) report.configs.push({ file: ctx.rel(bundle.configPath), keys: Object.keys(values).sort() });
    }
    for (const file of await listAgentFiles(bundle.root)) {
      const agent = await validateAgent(ctx, bundle, file);
      if (agent) report.agents.push(agent);
    }
    for (const file of await listWorkflowFiles(bundle.root)) {
      const workflow = await validateWorkflow(ctx, bundle, file);
      if (workflow) report.workflows.push(workflow);
    }
    for (const file of await listMarkdownWorkflowFiles(bundle.root)) {
      const workflow = await validateMarkdownWorkflow(file, {
        sandbox: ctx.sandbox,
        projectRoot: ctx.projectRoot,
        bundleRoot: bundle.root,
        bundleName: bundle.name,
        ...(ctx.coreRoot ? { coreRoot: ctx.coreRoot } : {}),
        rel: ctx.rel,
        problem: (p) => ctx.problems.push(p),
      });
      if (workflow) report.workflows.push(workflow);
    }
  }
  return report;
}
