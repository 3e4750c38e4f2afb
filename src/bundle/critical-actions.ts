import path from 'node:path';
import type { AgentFile } from './agent-file-parser.js';
import { BundleError, errorMessage } from './bundle-error.js';
import { parseYamlMap, scalarEntries, type YamlMap } from './config-loader.js';
import { fillVariables, resolveVariables, type VariableScope } from './path-variables.js';
import type { Sandbox } from './sandbox/sandbox.js';
import { absolutize } from './workflow/workflow-loader.js';

/** What running an agent's critical actions produced. */
export interface CriticalActionsResult {
  /** System messages, in action order, variables filled. */
  messages: string[];
  /** Session variables: the loaded config's scalar values, resolved. */
  variables: Record<string, string>;
  /** The config file loaded (the first YAML file a critical action names). */
  config?: { path: string; values: YamlMap };
  /** Every file loaded, in order. */
  loaded: string[];
  /** Things that did not stop initialization (a variable to set that the config lacks, ...). */
  warnings: string[];
}

/** A load verb followed, on the same line, by a path that ends in a file name with an extension. */
const LOAD_TARGET =
  /\b(?:load|read)\b[^\n]*?((?:\{[A-Za-z_-]+\}|\.{0,2}\/)[^\s`'"<>()[\]]*\.[A-Za-z0-9]+)(?![\w/])/i;
/** "set variable(s) a, b" / "session variables: {a}, {b}" */
const SET_VARIABLES =
  /(?:set variables?|session variables)\b\s*:?\s*([{}\w,\s]+?)(?:\n|$|\.(?:\s|$)|\band\b)/i;

/** The file a critical action asks to load, if it is a load instruction (raw, variables unresolved). */
export function findLoadTarget(action: string): string | undefined {
  return LOAD_TARGET.exec(action)?.[1];
}

/** The variable names a critical action asks to set from the config ("set variable a, b"). */
export function variablesToSet(action: string): string[] {
  const list = SET_VARIABLES.exec(action)?.[1] ?? '';
  return [...list.matchAll(/\{?([A-Za-z_]\w*)\}?/g)].map((m) => m[1]!).filter((n) => n !== 'and');
}

/**
 * Where a file a critical action names may have moved to in an installed tree: a source path
 * (`{project-root}/src/modules/<module>/...`, `{project-root}/src/core/...`) mapped into the install,
 * then the same file name in the agent's own module, as workflow instructions fall back next to
 * their workflow.yaml.
 */
export function movedFileCandidates(file: string, scope: VariableScope & { projectRoot: string }): string[] {
  const candidates: string[] = [];
  const rel = path.relative(scope.projectRoot, file).split(path.sep);
  const installRoot = scope.bundleRoot ? path.dirname(scope.bundleRoot) : undefined;
  if (rel[0] === 'src' && installRoot) {
    if (rel[1] === 'modules' && rel.length > 3) candidates.push(path.join(installRoot, ...rel.slice(2)));
    else if (rel[1] === 'core' && scope.coreRoot) candidates.push(path.join(scope.coreRoot, ...rel.slice(2)));
  }
  if (scope.bundleRoot) candidates.push(path.join(scope.bundleRoot, path.basename(file)));
  return candidates.filter((c, i) => c !== file && candidates.indexOf(c) === i);
}

/** Reads `file`, or when it does not exist the first of its {@link movedFileCandidates} that does (with a warning). */
async function readMovable(
  sandbox: Sandbox,
  file: string,
  scope: VariableScope & { projectRoot: string },
  warnings: string[],
  agentFile: string,
): Promise<{ path: string; content: string; file: string }> {
  try {
    return { ...(await sandbox.readText(file, 'critical-action')), file };
  } catch (error) {
    if (!(error instanceof BundleError) || error.code !== 'not-found') throw error;
    for (const candidate of movedFileCandidates(file, scope)) {
      if ((await sandbox.status(candidate)) !== 'exists') continue;
      warnings.push(
        `A critical action in ${agentFile} names ${file}, which does not exist; loaded ${candidate} instead`,
      );
      return { ...(await sandbox.readText(candidate, 'critical-action')), file: candidate };
    }
    throw error;
  }
}

/**
 * Runs an agent's critical actions once, at start: loads the files they name (through the sandbox),
 * takes variables from a YAML config, and turns every other action into a system message with the
 * variables filled in. A load that fails throws a {@link BundleError} naming the action and the file.
 */
export async function runCriticalActions(
  agent: AgentFile,
  sandbox: Sandbox,
  baseScope: VariableScope & { projectRoot: string },
): Promise<CriticalActionsResult> {
  const result: CriticalActionsResult = { messages: [], variables: {}, loaded: [], warnings: [] };
  const scope = (): VariableScope => ({
    ...baseScope,
    variables: result.variables,
    configSource: result.config?.path,
    config: result.config?.values,
  });
  for (const action of agent.criticalActions) {
    const target = findLoadTarget(action);
    if (!target) {
      result.messages.push(`[Critical Instruction] ${fillVariables(action, scope())}`);
      continue;
    }
    let file = target;
    try {
      file = absolutize(resolveVariables(target, scope(), { file: agent.file }), baseScope.projectRoot);
      if (result.loaded.includes(file)) {
        result.messages.push(`[Critical Instruction] ${fillVariables(action, scope())} (already loaded)`);
        continue;
      }
      const read = await readMovable(sandbox, file, baseScope, result.warnings, agent.file);
      const { content } = read;
      file = read.file;
      result.loaded.push(file);
      result.messages.push(`[Critical Action] Loaded file: ${file}\n\n${content}`);
      if (/\.ya?ml$/i.test(file) && !result.config) {
        const values = parseYamlMap(content, file);
        result.config = { path: file, values };
        for (const [key, value] of Object.entries(scalarEntries(values))) {
          result.variables[key] = fillVariables(value, { ...baseScope, variables: result.variables });
        }
      }
    } catch (error) {
      throw new BundleError(
        'critical-action',
        `Critical action failed: "${action.split('\n').find((l) => l.trim()) ?? action}" in ${agent.file}: ${errorMessage(error)}`,
        { file, cause: error },
      );
    }
    for (const name of variablesToSet(action)) {
      if (result.config && !(name in result.config.values)) {
        result.warnings.push(
          `Critical action in ${agent.file} sets variable "${name}" but ${result.config.path} has no key "${name}"`,
        );
      }
    }
  }
  return result;
}
