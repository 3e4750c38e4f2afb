import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { BundleError, errorMessage } from '../bundle-error.js';
import { loadYamlFile, type YamlMap } from '../config-loader.js';
import { substituteVariables, type VariableScope } from '../path-variables.js';
import type { LoadedWorkflow, WorkflowContext } from './workflow-types.js';

// BMAD 6.0's steps-based workflows: `workflow.md` (or `workflow-<name>.md`) with YAML front matter
// (name, description, main_config, nextStep, ...) and a body that tells the model how to walk the
// step files (`steps*/step-NN-*.md`). The body is returned; step files are only listed, and read by
// the model with read_file when a step says to (just-in-time, as the workflow itself demands).

/** Whether a path names a steps-based markdown workflow. */
export function isMarkdownWorkflow(file: string): boolean {
  return /(^|\/)workflow[^/]*\.md$/i.test(file);
}

function splitFrontMatter(text: string, file: string): { data: YamlMap; body: string } {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { data: {}, body: text };
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? '');
  } catch (error) {
    throw new BundleError('parse', `Invalid front matter in ${file}: ${errorMessage(error).split('\n')[0]}`, {
      file,
    });
  }
  return {
    data: data && typeof data === 'object' && !Array.isArray(data) ? (data as YamlMap) : {},
    body: text.slice(match[0].length),
  };
}

/** The step files in the `steps*` folders beside the workflow, relative to it (not read). */
async function stepFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true }).catch(() => [])).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (!entry.isDirectory() || !/^steps/.test(entry.name)) continue;
    for (const name of (await readdir(path.join(dir, entry.name))).sort()) {
      if (name.endsWith('.md')) out.push(`${entry.name}/${name}`);
    }
  }
  return out;
}

/**
 * Loads a markdown workflow through the sandbox: its front matter resolved (relative paths such as
 * `nextStep: ./steps-c/step-01-init.md` from the workflow's folder; `main_config` is loaded as the
 * workflow's config), its body as the instructions, and the list of its step files.
 */
export async function loadMarkdownWorkflow(
  workflowPath: string,
  ctx: WorkflowContext,
): Promise<LoadedWorkflow> {
  const { path: file, content } = await ctx.sandbox.readText(workflowPath, 'workflow');
  const { data, body } = splitFrontMatter(content, workflowPath);
  const dir = path.dirname(workflowPath);
  const warnings: string[] = [];
  const scope: VariableScope = {
    projectRoot: ctx.projectRoot,
    bundleRoot: ctx.bundleRoot,
    coreRoot: ctx.coreRoot,
    installedPath: dir,
    variables: ctx.variables,
    siblings: data,
    now: ctx.now,
  };
  let configSource: string | undefined;
  if (typeof data.main_config === 'string') {
    const { value, issues } = substituteVariables(data.main_config, scope);
    if (issues.length === 0) {
      configSource = path.resolve(ctx.projectRoot, value);
      try {
        const values = (await loadYamlFile(ctx.sandbox, configSource, 'config')).values;
        Object.assign(scope, { configSource, config: values });
      } catch (error) {
        warnings.push(`main_config of ${workflowPath} (${configSource}): ${errorMessage(error)}`);
      }
    }
  }
  const config: YamlMap = {};
  for (const [key, raw] of Object.entries(data)) {
    if (typeof raw !== 'string') {
      config[key] = raw;
      continue;
    }
    const { value, issues } = substituteVariables(raw, scope);
    for (const issue of issues) {
      if (issue.kind !== 'unresolved-variable')
        warnings.push(
          `key "${key}" of ${workflowPath}: {config_source}:${issue.name} not found; left as written`,
        );
    }
    config[key] = /^\.{1,2}\//.test(value) ? path.join(dir, value) : value;
  }
  const steps = await stepFiles(dir);
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  return {
    path: file,
    name: str(config.name) ?? path.basename(dir),
    description: str(config.description) ?? '',
    config,
    ...(configSource ? { configSource } : {}),
    instructions: {
      path: file,
      content: body,
      steps: steps.map((s) => ({ n: path.basename(s, '.md'), goal: path.join(dir, s) })),
    },
    warnings,
  };
}
