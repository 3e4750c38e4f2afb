import path from 'node:path';
import { z } from 'zod';
import { defineTool, type Tool } from '../tools/define-tool.js';
import { BundleError } from './bundle-error.js';
import type { YamlMap } from './config-loader.js';
import { resolveVariables, type VariableScope } from './path-variables.js';
import type { Sandbox } from './sandbox/sandbox.js';
import { isTodo } from './system-prompt.js';
import { loadWorkflow } from './workflow/workflow-loader.js';

/** What the BMAD tools resolve paths against. */
export interface BmadToolsContext {
  sandbox: Sandbox;
  /** Path variables and session variables (`{output_folder}` included). */
  scope: VariableScope & { projectRoot: string };
  /** Real path of the output folder: relative `save_output` paths land here. */
  outputFolder: string;
  /** The bundle's config, for `{config_source}:key` outside a workflow. */
  bundleConfig?: { path: string; values: YamlMap };
  /** Workflow paths the agent's menu names, listed in "not found" errors. */
  knownWorkflows?: string[];
}

const TEMPLATE_SLOT = /\{\{([^{}]+)\}\}/;

/**
 * Turns a path the model sent into an absolute path: variables resolved (a missing config key or an
 * unknown variable is an error naming it), relative paths taken from `base`. The sandbox checks it next.
 */
export function resolveToolPath(input: string, ctx: BmadToolsContext, base: string, field: string): string {
  if (input.includes('\0')) {
    throw new BundleError('sandbox', `Access denied: ${field} contains a null byte`, {
      file: input,
      key: field,
    });
  }
  const trimmed = input.trim().replace(/^[`'"]+|[`'"]+$/g, '');
  const scope: VariableScope = {
    ...ctx.scope,
    configSource: ctx.bundleConfig?.path,
    config: ctx.bundleConfig?.values,
  };
  const resolved = resolveVariables(trimmed, scope, { file: input, key: field });
  if (resolved.startsWith('~')) return resolved;
  return path.resolve(base, resolved);
}

function readFileTool(ctx: BmadToolsContext) {
  return defineTool({
    name: 'read_file',
    description:
      'Read a file from the bundle, the core or the project folder and return its content. Use it whenever an ' +
      'instruction says to load or read a file. Paths may use {bundle-root}, {core-root}, {project-root}, ' +
      '{output_folder} and the other config variables, or {config_source}:key; relative paths start at the project folder.',
    parameters: z.object({
      file_path: z.string().describe('Path to the file, e.g. {bundle-root}/config.yaml'),
    }),
    idempotent: true,
    execute: async ({ file_path }) => {
      const target = resolveToolPath(file_path, ctx, ctx.scope.projectRoot, 'file_path');
      const { path: real, content, bytes } = await ctx.sandbox.readText(target, 'read_file');
      return { path: real, bytes, content };
    },
  });
}

function executeWorkflowTool(ctx: BmadToolsContext) {
  return defineTool({
    name: 'execute_workflow',
    description:
      'Load a workflow to run it: reads its workflow.yaml, resolves its variables, and returns the resolved ' +
      'config, the instructions and the template (if any). Call it when the user picks a command that runs a ' +
      'workflow, then follow the returned instructions step by step. With mode "validate" the checklist is returned too.',
    parameters: z.object({
      workflow_path: z
        .string()
        .describe('Path to the workflow.yaml, e.g. {bundle-root}/workflows/intake/workflow.yaml'),
      user_input: z.record(z.string(), z.unknown()).optional().describe('Inputs the user already gave'),
      mode: z
        .enum(['run', 'validate'])
        .optional()
        .describe('"validate" to check a document against the checklist'),
    }),
    idempotent: true,
    execute: async ({ workflow_path, user_input, mode }) => {
      if (isTodo(workflow_path)) {
        throw new BundleError(
          'not-found',
          'This command is marked "todo" in the agent file: not implemented yet',
          {
            file: workflow_path,
            key: 'workflow_path',
          },
        );
      }
      const target = resolveToolPath(workflow_path, ctx, ctx.scope.projectRoot, 'workflow_path');
      let workflow: Awaited<ReturnType<typeof loadWorkflow>>;
      try {
        workflow = await loadWorkflow(target, {
          sandbox: ctx.sandbox,
          projectRoot: ctx.scope.projectRoot,
          bundleRoot: ctx.scope.bundleRoot,
          coreRoot: ctx.scope.coreRoot,
          variables: ctx.scope.variables,
          bundleConfig: ctx.bundleConfig,
          now: ctx.scope.now,
        });
      } catch (error) {
        if (
          error instanceof BundleError &&
          error.code === 'not-found' &&
          error.file === target &&
          ctx.knownWorkflows
        ) {
          throw new BundleError(
            'not-found',
            `${error.message}. Workflows of this agent: ${ctx.knownWorkflows.join(', ') || '(none)'}`,
            { file: target },
          );
        }
        throw error;
      }
      const checklist =
        mode === 'validate' && workflow.validation
          ? (await ctx.sandbox.readText(workflow.validation, 'template')).content
          : undefined;
      return {
        workflow_name: workflow.name,
        description: workflow.description,
        workflow_path: workflow.path,
        output_folder: ctx.outputFolder,
        default_output_file: workflow.defaultOutputFile,
        instructions_path: workflow.instructions?.path,
        steps: workflow.instructions?.steps,
        instructions: workflow.instructions?.content,
        template_path: workflow.template?.path,
        template: workflow.template?.content ?? null,
        checklist,
        config: workflow.config,
        user_input: user_input ?? {},
        warnings: workflow.warnings,
        next: workflow.path.endsWith('.md')
          ? 'Follow the instructions. Step files are listed in steps, not loaded: read each one with read_file ' +
            'only when the instructions (or the step before it) say to, one at a time; save with save_output.'
          : 'Follow the instructions step by step. Show the step number and goal, ask one question at a time, ' +
            'and save the document with save_output when the instructions say so.',
      };
    },
  });
}

/**
 * The `save_output` tool: writes into the output folder only. Also used by the skill tools, which may
 * give the context as a promise (an agent whose skills are still being discovered).
 */
export function saveOutputTool(source: BmadToolsContext | Promise<BmadToolsContext>) {
  return defineTool({
    name: 'save_output',
    description:
      'Save generated content to a file in the output folder (folders are created). Paths may use ' +
      '{output_folder} and the other variables; a relative path is taken inside the output folder. ' +
      'Writes outside the output folder are refused. Fill {{template slots}} in the path before saving.',
    parameters: z.object({
      file_path: z.string().describe('Where to save, e.g. {output_folder}/requirements-{date}.md'),
      content: z.string().describe('The full content to write'),
    }),
    execute: async ({ file_path, content }) => {
      const ctx = await source;
      const slot = TEMPLATE_SLOT.exec(file_path);
      if (slot) {
        throw new BundleError(
          'unresolved-variable',
          `save_output: fill the template slot {{${slot[1]}}} in the path before saving (${file_path})`,
          { file: file_path, key: slot[1] },
        );
      }
      const target = resolveToolPath(file_path, ctx, ctx.outputFolder, 'file_path');
      const saved = await ctx.sandbox.writeText(target, content);
      return { success: true, path: saved.path, bytes: saved.bytes };
    },
  });
}

/** The three tools of a bundle agent: `read_file`, `execute_workflow`, `save_output`. */
export function createBmadTools(ctx: BmadToolsContext): Tool[] {
  return [readFileTool(ctx), executeWorkflowTool(ctx), saveOutputTool(ctx)];
}
