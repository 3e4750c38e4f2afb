import { substituteVariables, type VariableScope } from '../path-variables.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { absolutize } from '../workflow/workflow-loader.js';

/**
 * Where a reference (a menu target, a workflow path key) points. The corpus facts' vocabulary maps
 * onto this one: `external-absolute` and `external-home` are `outside-root`, `missing-prompt` is `missing`.
 */
export type ReferenceStatus = 'exists' | 'missing' | 'todo' | 'unresolved-variable' | 'outside-root';

/** A reference with its status and, when it resolved, the absolute path. */
export interface ReferenceCheck {
  status: ReferenceStatus;
  resolved?: string;
  /** Why it is not `exists`, for problem reports. */
  message?: string;
}

/** Resolves a raw path in `scope` and asks the sandbox where it lands; never throws on bad input. */
export async function checkPathReference(
  raw: string,
  scope: VariableScope & { projectRoot: string },
  sandbox: Sandbox,
): Promise<ReferenceCheck> {
  const value = raw.trim();
  if (value === 'todo') return { status: 'todo', message: 'marked "todo": not implemented yet' };
  const { value: resolved, issues } = substituteVariables(value, scope);
  const issue = issues[0];
  if (issue) {
    const what =
      issue.kind === 'missing-config-key'
        ? `config key "${issue.name}" is not in ${issue.configFile}`
        : issue.kind === 'no-config'
          ? `{config_source}:${issue.name} has no config to read`
          : `variable {${issue.name}} cannot be resolved`;
    return { status: 'unresolved-variable', message: what };
  }
  if (resolved.startsWith('~')) return { status: 'outside-root', message: `home-relative path ${resolved}` };
  if (resolved.includes('\0')) return { status: 'outside-root', message: 'path contains a null byte' };
  const absolute = absolutize(resolved, scope.projectRoot);
  const status = await sandbox.status(absolute);
  const message =
    status === 'missing'
      ? `${absolute} does not exist`
      : status === 'outside-root'
        ? `${absolute} is outside the allowed folders`
        : undefined;
  return { status, resolved: absolute, message };
}

/** `action="#id"` must name a prompt of the agent; inline action text has no status. */
export function checkPromptReference(
  target: string,
  prompts: Record<string, string>,
): ReferenceCheck | undefined {
  if (!target.startsWith('#')) return undefined;
  const id = target.slice(1);
  return id in prompts
    ? { status: 'exists' }
    : { status: 'missing', message: `no <prompt id="${id}"> in the agent file` };
}
