import type { Redactor } from '../events/redact.js';
import { McpServers } from '../mcp/mcp-servers.js';
import type { Tool } from '../tools/define-tool.js';
import { loopControlTools } from '../tools/loop-control-tools.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { updatePlanTool } from '../tools/update-plan-tool.js';
import type { AgentOptions } from './agent-options.js';
import type { AgentSkills } from './agent-skills.js';

/** An agent's tools: its own, its skills', the loop-control tools, `update_plan`, and its MCP servers' (added as they list them). */
export interface AgentTools {
  registry: ToolRegistry;
  /** The MCP servers, when `mcpServers` names any. */
  mcp: McpServers | undefined;
}

/**
 * The registry of an agent's local tools (the options' tools, the skills' tools, the loop-control tools unless
 * `loopControlTools: false`, `update_plan` unless `planning: false`) and its MCP servers, not yet started.
 * `report` receives what the servers report (a server that failed to start, a tool left out);
 * `redactor` learns every OAuth token they read or get.
 */
export function agentTools(
  options: AgentOptions<unknown>,
  skills: Pick<AgentSkills, 'tools'> | undefined,
  report: (message: string) => void,
  redactor?: Pick<Redactor, 'addSecret'>,
): AgentTools {
  const tools: Tool[] = [
    ...(options.tools ?? []),
    ...(skills?.tools ?? []),
    ...(options.loopControlTools === false ? [] : loopControlTools),
    ...(options.planning === false ? [] : [updatePlanTool]),
  ];
  const registry = new ToolRegistry(tools);
  const servers = options.mcpServers ?? {};
  const mcp =
    Object.keys(servers).length === 0
      ? undefined
      : new McpServers(servers, {
          registry,
          report,
          ...(options.mcpAuth ? { auth: options.mcpAuth } : {}),
          ...(redactor ? { secret: (token: string) => redactor.addSecret(token) } : {}),
          ...(options.limits?.toolTimeoutMs !== undefined
            ? { toolTimeoutMs: options.limits.toolTimeoutMs }
            : {}),
        });
  return { registry, mcp };
}
