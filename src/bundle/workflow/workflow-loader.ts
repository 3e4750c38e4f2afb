import { access } from 'node:fs/promises';
import path from 'node:path';
import { BundleError } from '../bundle-error.js';
import { loadYamlFile, type YamlMap } from '../config-loader.js';
import {
  issueToError,
  resolveVariables,
  substituteVariables,
  type VariableScope,
} from '../path-variables.js';
import { parseInstructions } from './instructions-parser.js';
import { isMarkdownWorkflow, loadMarkdownWorkflow } from './markdown-workflow.js';
import type { LoadedWorkflow, WorkflowContext } from './workflow-types.js';

/** The keys that name files, checked by `validate` and resolved strictly by the loader. */
export const WORKFLOW_PATH_KEYS = [
  'config_source',
  'installed_path',
  'instructions',
  'template',
  'validation',
] as const;

/** The other keys of a workflow.yaml as `{name}` values: top level and its `variables:` map. */
export function workflowSiblings(raw: YamlMap): YamlMap {
  const vars = raw.variables;
  const nested = vars && typeof vars === 'object' && !Array.isArray(vars) ? (vars as YamlMap) : {};
  return { ...nested, ...raw };
}

/**
 * The workflow's own keys: some trees nest them under a `workflow:` root key (`workflow: { name, ... }`),
 * which then is the workflow, the other top-level keys kept beside it.
 */
export function unwrapWorkflow(raw: YamlMap): YamlMap {
  const inner = raw.workflow;
  if (!inner || typeof inner !== 'object' || Array.isArray(inner) || 'name' in raw || 'instructions' in raw)
    return raw;
  const { workflow: _, ...rest } = raw;
  return { ...rest, ...(inner as YamlMap) };
}

/**
 * Whether a workflow key holds a path (a missing `{config_source}:key` there stops the load): the
 * path keys, and any key named like one (`*_path`, `*_file`, `*_folder`, `*_dir`, `*_template`).
 */
export function isPathKey(key: string): boolean {
  const top = key.split(/[.[]/)[0] ?? key;
  return (
    (WORKFLOW_PATH_KEYS as readonly string[]).includes(top) ||
    /(?:^|_)(?:path|file|folder|dir|template|output)$/i.test(top)
  );
}

/** Makes a resolved value absolute against the project root. */
export function absolutize(value: string, projectRoot: string): string {
  if (value.startsWith('~') || value.includes('\0')) return value;
  return path.resolve(projectRoot, value);
}

/**
 * Resolves every string of a workflow. A missing `{config_source}:key` in a path key is an error naming
 * file and key; anywhere else (`communication_language`, ...) it is a warning and the text stays as written.
 */
function resolveDeep(
  value: unknown,
  scope: VariableScope,
  file: string,
  key: string,
  warnings: string[],
): unknown {
  if (typeof value === 'string') {
    const { value: out, issues } = substituteVariables(value, scope);
    const missing = issues.find((i) => i.kind === 'missing-config-key' || i.kind === 'no-config');
    if (missing) {
      if (isPathKey(key)) resolveVariables(value, scope, { file, key });
      warnings.push(`${issueToError(missing, value, { file, key }).message}; left as written`);
      return value;
    }
    return out;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveDeep(v, scope, file, `${key}[${i}]`, warnings));
  if (value && typeof value === 'object') {
    const out: YamlMap = {};
    for (const [k, v] of Object.entries(value))
      out[k] = resolveDeep(v, scope, file, key ? `${key}.${k}` : k, warnings);
    return out;
  }
  return value;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/**
 * Loads the config that `config_source` names (or the bundle config) and returns the scope that a
 * workflow's values resolve in.
 */
export async function workflowScope(
  file: string,
  raw: YamlMap,
  ctx: WorkflowContext,
): Promise<{ scope: VariableScope; configSource?: string }> {
  const base: VariableScope = {
    projectRoot: ctx.projectRoot,
    bundleRoot: ctx.bundleRoot,
    coreRoot: ctx.coreRoot,
    variables: ctx.variables,
    siblings: workflowSiblings(raw),
    now: ctx.now,
  };
  let configSource: string | undefined;
  let config: YamlMap | undefined;
  if (typeof raw.config_source === 'string') {
    configSource = absolutize(
      resolveVariables(raw.config_source, base, { file, key: 'config_source' }),
      ctx.projectRoot,
    );
    try {
      config = (await loadYamlFile(ctx.sandbox, configSource, 'config')).values;
    } catch (error) {
      if (!(error instanceof BundleError) || error.code !== 'not-found') throw error;
      throw new BundleError(
        'not-found',
        `Config file not found: ${configSource}, named by key "config_source" (${raw.config_source}) of workflow ${file}`,
        { file: configSource, key: 'config_source', cause: error },
      );
    }
  } else if (ctx.bundleConfig) {
    configSource = ctx.bundleConfig.path;
    config = ctx.bundleConfig.values;
  }
  const scope: VariableScope = { ...base, configSource, config };
  if (typeof raw.installed_path === 'string') {
    scope.installedPath = absolutize(
      resolveVariables(raw.installed_path, scope, { file, key: 'installed_path' }),
      ctx.projectRoot,
    );
  } else {
    scope.installedPath = path.dirname(file);
  }
  return { scope, configSource };
}

async function loadPart(
  raw: YamlMap,
  key: 'instructions' | 'template',
  file: string,
  scope: VariableScope,
  ctx: WorkflowContext,
  warnings: string[],
): Promise<{ path: string; content: string } | undefined> {
  const value = raw[key];
  if (value === undefined || value === false || value === null || value === '') return undefined;
  if (typeof value !== 'string') {
    throw new BundleError('invalid-input', `Key "${key}" in ${file} must be a path`, { file, key });
  }
  const target = absolutize(resolveVariables(value, scope, { file, key }), ctx.projectRoot);
  await ctx.sandbox.checkRead(target);
  if (!(await exists(target))) {
    const beside = path.join(path.dirname(file), path.basename(target));
    if (await exists(beside)) {
      warnings.push(`${key} ${target} does not exist; loaded ${beside} next to the workflow.yaml instead`);
      return ctx.sandbox.readText(beside, key);
    }
    throw new BundleError(
      'not-found',
      `The ${key} file of ${file} does not exist: ${target} (key "${key}")`,
      {
        file,
        key,
      },
    );
  }
  return ctx.sandbox.readText(target, key);
}

/**
 * Loads a workflow.yaml, resolves every value (a missing `{config_source}:key` anywhere is an error
 * naming file and key), then loads its instructions and template. Files go through the sandbox.
 */
export async function loadWorkflow(workflowPath: string, ctx: WorkflowContext): Promise<LoadedWorkflow> {
  if (isMarkdownWorkflow(workflowPath)) return loadMarkdownWorkflow(workflowPath, ctx);
  const { path: file, values: loaded } = await loadYamlFile(ctx.sandbox, workflowPath, 'workflow');
  const raw = unwrapWorkflow(loaded);
  const { scope, configSource } = await workflowScope(workflowPath, raw, ctx);
  const warnings: string[] = [];
  const config = resolveDeep(raw, scope, workflowPath, '', warnings) as YamlMap;
  const instructions = await loadPart(raw, 'instructions', workflowPath, scope, ctx, warnings);
  const template = await loadPart(raw, 'template', workflowPath, scope, ctx, warnings);
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  return {
    path: file,
    name: str(config.name) ?? path.basename(path.dirname(file)),
    description: str(config.description) ?? '',
    config,
    configSource,
    instructions: instructions && {
      ...instructions,
      steps: parseInstructions(instructions.content).steps.map((s) => ({ n: s.n, goal: s.goal ?? s.title })),
    },
    template,
    validation: str(config.validation) && absolutize(str(config.validation)!, ctx.projectRoot),
    defaultOutputFile: str(config.default_output_file),
    warnings,
  };
}
