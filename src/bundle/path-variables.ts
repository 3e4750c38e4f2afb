import { BundleError } from './bundle-error.js';

/**
 * Everything a `{variable}` in a BMAD path or value can refer to. All paths are absolute.
 * Lookup order for a `{name}` is: system variables (`{date}`), path variables (`{project-root}`,
 * `{project_root}`, `{bundle-root}`, `{core-root}`, `{installed_path}`, `{config_source}`), sibling keys
 * of the workflow.yaml, then session variables (config values loaded by critical actions).
 */
export interface VariableScope {
  projectRoot?: string;
  bundleRoot?: string;
  coreRoot?: string;
  /** `{installed_path}`; inside a workflow it defaults to that workflow's `installed_path` key. */
  installedPath?: string;
  /** Path of the config file that `{config_source}` names. */
  configSource?: string;
  /** Parsed values of that config file, for `{config_source}:key`. */
  config?: Record<string, unknown>;
  /** The other keys of the same workflow.yaml (its `variables:` map included). */
  siblings?: Record<string, unknown>;
  /** Session variables, usually the config values loaded by critical actions. */
  variables?: Record<string, string>;
  /** Clock for `{date}`; defaults to now. */
  now?: () => Date;
}

/** Where a value came from, for error messages. */
export interface ValueOrigin {
  file?: string;
  key?: string;
}

/** Why a variable could not be substituted. */
export type ResolveIssue =
  | { kind: 'missing-config-key'; name: string; configFile: string; available: string[] }
  | { kind: 'no-config'; name: string }
  | { kind: 'unresolved-variable'; name: string };

/** `{config_source}:key` */
const CONFIG_REF = /\{config_source\}:([A-Za-z0-9_]+)/g;
/** `{name}` but not `{{name}}` (a template slot filled at run time). */
const VARIABLE = /(?<!\{)\{([A-Za-z_][A-Za-z0-9_.-]*)\}(?!\})/g;
/** Anything still in single braces after substitution. */
const LEFTOVER = /(?<!\{)\{([^{}\s]+)\}(?!\})/g;
const DATE = /(?<!\{)\{date\}(?!\})/g;
const MAX_PASSES = 10;

/** `YYYY-MM-DD` in local time. */
export function formatDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function scalar(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function lookup(name: string, scope: VariableScope): string | undefined {
  switch (name) {
    case 'project-root':
    case 'project_root':
      return scope.projectRoot;
    case 'bundle-root':
      return scope.bundleRoot;
    case 'core-root':
      return scope.coreRoot;
    case 'installed_path':
      return scope.installedPath ?? scalar(scope.siblings?.installed_path);
    case 'config_source':
      return scope.configSource;
  }
  const sibling = scope.siblings?.[name];
  if (sibling !== undefined) return scalar(sibling);
  return scope.variables?.[name];
}

/**
 * Substitutes variables in one string, in the order of the spec's path-resolution flow: config
 * references, then `{date}`, then path variables and sibling keys, repeated while values bring in
 * further variables. Never throws: what could not be substituted stays in place and is listed.
 */
export function substituteVariables(
  template: string,
  scope: VariableScope,
): { value: string; issues: ResolveIssue[] } {
  const issues = new Map<string, ResolveIssue>();
  const today = formatDate((scope.now ?? (() => new Date()))());
  let value = template;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const before = value;
    value = value.replace(CONFIG_REF, (match, key: string) => {
      if (!scope.config || !scope.configSource) {
        issues.set(`no-config:${key}`, { kind: 'no-config', name: key });
        return match;
      }
      const found = scalar(scope.config[key]);
      if (found === undefined) {
        issues.set(`missing:${key}`, {
          kind: 'missing-config-key',
          name: key,
          configFile: scope.configSource,
          available: Object.keys(scope.config),
        });
        return match;
      }
      return found;
    });
    value = value.replace(DATE, today);
    value = value.replace(VARIABLE, (match, name: string) => lookup(name, scope) ?? match);
    if (value === before) break;
  }
  for (const [, name] of value.matchAll(LEFTOVER)) {
    if (name === undefined || name === 'config_source') continue;
    if (!issues.has(`missing:${name}`)) issues.set(`var:${name}`, { kind: 'unresolved-variable', name });
  }
  return { value, issues: [...issues.values()] };
}

/** The error for the first issue of a substitution, naming the file and key. */
export function issueToError(issue: ResolveIssue, template: string, origin: ValueOrigin = {}): BundleError {
  const where = origin.key
    ? ` (key "${origin.key}"${origin.file ? ` in ${origin.file}` : ''})`
    : origin.file
      ? ` (in ${origin.file})`
      : '';
  switch (issue.kind) {
    case 'missing-config-key':
      return new BundleError(
        'missing-config-key',
        `Config key "${issue.name}" not found in ${issue.configFile}, referenced as {config_source}:${issue.name}${where}. ` +
          `Available keys: ${issue.available.join(', ') || '(none)'}`,
        { file: issue.configFile, key: issue.name },
      );
    case 'no-config':
      return new BundleError(
        'missing-config-key',
        `{config_source}:${issue.name} used but no config file is loaded${where}`,
        { file: origin.file, key: issue.name },
      );
    case 'unresolved-variable':
      return new BundleError(
        'unresolved-variable',
        `Unresolved variable {${issue.name}} in "${template}"${where}`,
        {
          file: origin.file,
          key: origin.key ?? issue.name,
        },
      );
  }
}

/** Substitutes variables and throws a {@link BundleError} naming file and key if any is left. */
export function resolveVariables(template: string, scope: VariableScope, origin: ValueOrigin = {}): string {
  const { value, issues } = substituteVariables(template, scope);
  const first = issues[0];
  if (first) throw issueToError(first, template, origin);
  return value;
}

/** Substitutes what it can and leaves the rest as written (for prose such as critical instructions). */
export function fillVariables(text: string, scope: VariableScope): string {
  return substituteVariables(text, scope).value;
}
