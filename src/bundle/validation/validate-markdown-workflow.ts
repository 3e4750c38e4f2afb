import path from 'node:path';
import { errorMessage } from '../bundle-error.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { loadMarkdownWorkflow } from '../workflow/markdown-workflow.js';
import type { ValidatedWorkflow, ValidationProblem } from './validation-report.js';

/** What checking one markdown workflow needs from the tree being validated. */
export interface MarkdownWorkflowCheck {
  sandbox: Sandbox;
  projectRoot: string;
  bundleRoot: string;
  bundleName: string;
  coreRoot?: string;
  /** A path relative to the report's root. */
  rel(file: string): string;
  problem(problem: ValidationProblem): void;
}

/** Front matter with a `name:` or `description:` key at its top level. */
const WORKFLOW_FRONT_MATTER = /(?<![\s\S])\uFEFF?---\r?\n(?:(?!---\r?\n)[\s\S])*?^(name|description):/m;

/** A front matter value that names a file (resolved by the loader): checked like a workflow.yaml's paths. */
const FILE_VALUE = /\.(md|ya?ml|xml|csv|json|txt)$/i;

/**
 * Checks a BMAD 6.0 steps-based workflow (`workflow.md`, `workflow-<name>.md` with front matter; a
 * file of that name without it is not one, and is skipped) as the loader reads it: its front matter parses, `main_config` loads, and every file its front matter names (the first
 * step, checkpoint handlers, ...) exists inside the roots. Its steps are the step files beside it.
 */
export async function validateMarkdownWorkflow(
  file: string,
  check: MarkdownWorkflowCheck,
): Promise<ValidatedWorkflow | undefined> {
  const problem = (key: string, value: string, status: ValidationProblem['status'], message: string) =>
    check.problem({ file: check.rel(file), key, value, status, message });
  // A workflow opens with front matter naming or describing it; a guide beside one (a
  // `workflow-creation-guide.md`) does not, and is no workflow.
  const { content } = await check.sandbox.readText(file, 'validate');
  if (!WORKFLOW_FRONT_MATTER.test(content)) return undefined;
  let loaded: Awaited<ReturnType<typeof loadMarkdownWorkflow>>;
  try {
    loaded = await loadMarkdownWorkflow(file, {
      sandbox: check.sandbox,
      projectRoot: check.projectRoot,
      bundleRoot: check.bundleRoot,
      ...(check.coreRoot ? { coreRoot: check.coreRoot } : {}),
    });
  } catch (error) {
    problem('front matter', '', 'parse-error', errorMessage(error));
    return undefined;
  }
  for (const warning of loaded.warnings) {
    const key = /^main_config /.test(warning) ? 'main_config' : (/key "([^"]+)"/.exec(warning)?.[1] ?? '');
    problem(key, '', key === 'main_config' ? 'missing' : 'missing-config-key', warning);
  }
  const paths: ValidatedWorkflow['paths'] = {};
  for (const [key, value] of Object.entries(loaded.config)) {
    if (typeof value !== 'string' || !path.isAbsolute(value) || !FILE_VALUE.test(value)) continue;
    const status = await check.sandbox.status(value);
    paths[key] = { value, status, resolved: value };
    if (status !== 'exists') {
      const why = status === 'outside-root' ? 'is outside the allowed roots' : 'does not exist';
      problem(key, value, status, `${key}: ${check.rel(value)} ${why}`);
    }
  }
  return {
    file: check.rel(file),
    name: loaded.name,
    bundle: check.bundleName,
    paths,
    steps: loaded.instructions?.steps.length ?? 0,
    instructionsForm: 'steps',
  };
}
