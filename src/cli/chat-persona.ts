import type { BundleAgent } from '../bundle/bundle-agent.js';
import { loadMcpConfigFile, type McpServersConfig } from '../mcp/mcp-config.js';
import { type AgentDefinition, defineAgent } from '../prompt/agent-definition.js';
import type { Tool } from '../tools/define-tool.js';

/** What the chat shows of the agent it talks with: a bundle agent, or the plain assistant. */
export type ChatPersona = Pick<BundleAgent, 'name' | 'icon' | 'title' | 'greeting'>;

/** The agent `run` and `chat` use without `--bundle`: a plain assistant with the configured tools. */
export const PLAIN_ASSISTANT: ChatPersona = {
  name: 'assistant',
  icon: '',
  title: '',
  greeting: 'A plain assistant with the tools you configured (/tools lists them). Ask away.',
};

/** The plain assistant's definition with `tools` (a `--tools` module's; MCP tools come with the agent). */
export function plainAssistantDefinition(tools: Tool[] = []): AgentDefinition {
  return defineAgent({
    name: 'assistant',
    description: 'A plain assistant with the configured tools',
    instructions:
      'You are a helpful assistant. Use the tools you have when they help answer the user. ' +
      'For a task of several steps, keep a short plan with update_plan and tick steps off as you go. ' +
      'Answer plainly and briefly.',
    tools,
  });
}

/** The `--mcp-config` flag's servers (none without it). */
export async function mcpServersFlag(file: string | undefined): Promise<McpServersConfig> {
  return file === undefined ? {} : loadMcpConfigFile(file);
}
