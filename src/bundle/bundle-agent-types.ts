import type { AgentFile, MenuItem } from './agent-file-parser.js';
import type { BmadToolsContext } from './bmad-tools.js';
import type { BundleAgentDefinition } from './bundle-definition.js';
import type { FileLoadListener, Sandbox } from './sandbox/sandbox.js';

// What loading a bundle agent takes and gives, below both loaders (bundle-agent.ts and the BMAD 6
// loader it hands installed agents to).

/** What `loadBundleAgent` is given. */
export interface LoadBundleAgentOptions {
  /** A spec-layout bundle root, a module of an installed tree, or a project folder holding `bmad/`. */
  bundleRoot: string;
  /** The agent's id, name or file stem. */
  agent: string;
  /**
   * `{project-root}`: the folder the agent works in. Defaults to the folder holding `bmad/` when the
   * bundle sits in an installed tree (its agents say `{project-root}/bmad/...`), else the current directory.
   */
  projectRoot?: string;
  /** `{core-root}`; defaults to `bmad/core` of an installed tree or the nearest `core` above the bundle. */
  coreRoot?: string;
  /** Where `save_output` may write; defaults to the config's `output_folder`, else `<projectRoot>/output`. */
  outputFolder?: string;
  /**
   * The session store's folder when it is configured elsewhere (`FileSessionStore`'s `dir`): the tools
   * never read or write it. `<projectRoot>/.agentloop/sessions` and `$AGENTLOOP_HOME/sessions` are
   * refused without it.
   */
  sessionsDir?: string;
  /** Where `AGENTLOOP_HOME` is read (for the sessions folder the sandbox refuses); defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Largest file the tools read (bytes). */
  maxReadBytes?: number;
  /** Called for every file read, with the reason (lazy-loading log). */
  onFileLoad?: FileLoadListener;
  /** Clock for `{date}`. */
  now?: () => Date;
}

/**
 * A loaded bundle agent: the `AgentDefinition` it compiled into, and beside it what UIs need (who it is,
 * its greeting and menu, the sandbox, roots and variables of its session). Run it with
 * `createAgent(toAgentOptions(bundleAgent.definition, {}, runtime))`.
 */
export interface BundleAgent {
  /**
   * The compiled agent: a valid `name` (see `bundleDefinitionName`), the description, the system prompt
   * as `instructions`, the critical actions' `contextMessages` (variables filled) and the `tools`
   * (read_file, execute_workflow, save_output, bound to this agent's sandbox).
   */
  definition: BundleAgentDefinition;
  /** The agent's `id` attribute. */
  id: string;
  /** The agent file's path. */
  file: string;
  /** The persona's name as written, for display (`BMad Master`); `definition.name` is the identifier. */
  name: string;
  title: string;
  icon: string;
  menu: MenuItem[];
  /** Greeting in persona plus the numbered menu, for the CLI to print. */
  greeting: string;
  /** Session variables (config values plus project-root, bundle-root, core-root, output_folder). */
  variables: Record<string, string>;
  sandbox: Sandbox;
  bundleRoot: string;
  projectRoot: string;
  coreRoot: string | undefined;
  outputFolder: string;
  /** The parsed agent file. */
  agentFile: AgentFile;
  /** Non-fatal findings of initialization. */
  warnings: string[];
  /**
   * For a user message that is just a menu code or number, the message to send instead (the choice
   * with the tool call it maps to); undefined for anything else. BMAD 6.12 agents have it.
   */
  menuChoice?: (text: string) => string | undefined;
  /** What the agent's tools resolve paths against (sandbox, variables, config): skills reuse it. */
  toolsContext: BmadToolsContext;
}
