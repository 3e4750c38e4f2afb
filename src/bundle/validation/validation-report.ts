import type { AgentFile, MenuKind } from '../agent-file-parser.js';
import type { BundleLayout } from '../bundle-discovery.js';
import type { ReferenceStatus } from './reference-status.js';

// What validation reports: the types validate-tree.ts and its validators share.

/** One target of a menu item, checked. */
export interface ValidatedTarget {
  kind: string;
  attribute: string;
  target: string;
  /** Absent for inline `action` text. */
  status?: ReferenceStatus;
  resolved?: string;
}

export interface ValidatedMenuItem {
  cmd: string;
  label: string;
  kind: MenuKind;
  /** The main target, raw. */
  target?: string;
  status?: ReferenceStatus;
  targets: ValidatedTarget[];
}

export interface ValidatedAgent extends Pick<AgentFile, 'id' | 'name' | 'title' | 'icon' | 'dialect'> {
  /** Relative to the report's root. */
  file: string;
  bundle: string;
  criticalActions: string[];
  /** Files the critical actions load (raw). */
  configFiles: string[];
  menu: ValidatedMenuItem[];
}

export interface ValidatedWorkflow {
  file: string;
  name: string;
  bundle: string;
  /** The path keys present, with raw value and status (`template: false` left out). */
  paths: Record<string, { value: string; status: ReferenceStatus; resolved?: string }>;
  /** Steps in its instructions, when they could be read. */
  steps?: number;
  instructionsForm?: string;
}

/** A problem found; none of them stops the report. */
export interface ValidationProblem {
  file: string;
  key: string;
  value: string;
  /** `no-agent-block`: a file under `agents/` without an `<agent>` element. */
  status: ReferenceStatus | 'missing-config-key' | 'parse-error' | 'no-agent-block';
  message: string;
}

/** What `agentloop validate` prints. */
export interface ValidationReport {
  /** The folder file paths are relative to (the project folder of an installed tree). */
  root: string;
  layout: BundleLayout;
  agents: ValidatedAgent[];
  workflows: ValidatedWorkflow[];
  configs: { file: string; keys: string[] }[];
  problems: ValidationProblem[];
}
