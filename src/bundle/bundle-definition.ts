import path from 'node:path';
import {
  AGENT_NAME_PATTERN,
  type AgentDefinition,
  defineAgent,
  escapeInstructions,
} from '../prompt/agent-definition.js';
import type { Tool } from '../tools/define-tool.js';
import type { AgentFile } from './agent-file-parser.js';

/** A system message of plain text: what a critical action contributes. */
export interface CriticalActionMessage {
  role: 'system';
  content: string;
}

/** The definition a BMAD agent compiles into: its context messages and tools are always present. */
export interface BundleAgentDefinition extends AgentDefinition {
  contextMessages: CriticalActionMessage[];
  tools: Tool[];
}

/**
 * The definition name of a BMAD agent: its persona name when that is a valid agent name (`Iris`),
 * else the stem of its id (or file) made valid (`BMad Master` in `bmad-master.md` is `bmad-master`).
 */
export function bundleDefinitionName(agent: Pick<AgentFile, 'name' | 'id' | 'file'>): string {
  if (AGENT_NAME_PATTERN.test(agent.name)) return agent.name;
  for (const source of [agent.id, agent.file]) {
    const stem = path.basename(source.trim()).replace(/\.md$/i, '');
    const name = stem
      .replace(/[^a-zA-Z0-9_-]+/g, '-')
      .slice(0, 64)
      .replace(/^-+|-+$/g, '');
    if (name) return name;
  }
  return 'agent';
}

/** What the loader worked out for one agent file. */
export interface BundleDefinitionInput {
  agent: AgentFile;
  /** The system prompt, variables filled (taken as written: `${...}` in it is not a placeholder). */
  systemPrompt: string;
  contextMessages: CriticalActionMessage[];
  tools: Tool[];
}

/**
 * Compiles a loaded BMAD agent into an `AgentDefinition`, checked by `defineAgent`. The description is
 * the front matter's, else the persona's role, else the title.
 */
export function compileBundleDefinition(input: BundleDefinitionInput): BundleAgentDefinition {
  const { agent } = input;
  const description =
    typeof agent.frontMatter?.description === 'string'
      ? agent.frontMatter.description
      : agent.persona.role || agent.title;
  const definition: BundleAgentDefinition = {
    name: bundleDefinitionName(agent),
    description,
    instructions: escapeInstructions(input.systemPrompt),
    contextMessages: input.contextMessages,
    tools: input.tools,
  };
  defineAgent(definition);
  return definition;
}
