import { McpServers } from '../mcp/mcp-servers.js';
import type { Tool } from '../tools/define-tool.js';
import { loopControlTools } from '../tools/loop-control-tools.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { updatePlanTool } from '../tools/update-plan-tool.js';
import type { AgentOptions } from './agent-options.js';

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
 * `secret` every OAuth token they read or get (for the agent's redactor).
 */
export function agentTools(
  options: AgentOptions<unknown>,
  skillTools: readonly Tool[],
  { report, secret }: { report: (message: string) => void; secret?: (value: string) => void },
): AgentTools {
  const tools: Tool[] = [
    ...(options.tools ?? []),
    ...skillTools,
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
          ...(secret ? { secret } : {}),
          ...(options.limits?.toolTimeoutMs !== undefined
            ? { toolTimeoutMs: options.limits.toolTimeoutMs }
            : {}),
        });
  return { registry, mcp };
}
