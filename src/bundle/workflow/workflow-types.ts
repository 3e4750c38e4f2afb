import type { YamlMap } from '../config-loader.js';
import type { Sandbox } from '../sandbox/sandbox.js';

// The types both workflow loaders share (workflow.yaml and the steps-based markdown form).

/** What a workflow is resolved against. */
export interface WorkflowContext {
  sandbox: Sandbox;
  projectRoot: string;
  bundleRoot?: string;
  coreRoot?: string;
  /** Session variables (the agent's config values). */
  variables?: Record<string, string>;
  /** The bundle's config, used for `{config_source}:key` when the workflow has no `config_source`. */
  bundleConfig?: { path: string; values: YamlMap };
  now?: () => Date;
}

/** A workflow loaded for the model: resolved config plus the texts it needs. */
export interface LoadedWorkflow {
  path: string;
  name: string;
  description: string;
  /** workflow.yaml with every value resolved (run-time `{{slots}}` left in place). */
  config: YamlMap;
  configSource?: string;
  instructions?: { path: string; content: string; steps: { n: string; goal?: string }[] };
  template?: { path: string; content: string };
  /** Checklist path (not loaded). */
  validation?: string;
  /** Where the output goes, if the workflow says. */
  defaultOutputFile?: string;
  /** Things the loader worked around (a misplaced installed_path, ...). */
  warnings: string[];
}
