/**
 * `agentloop/mcp`: tools from MCP servers. `createAgent({ mcpServers })` starts them; this entry holds
 * the config types, the `mcp.json` reader and the naming rule for embedders and UIs.
 */
export {
  loadMcpConfigFile,
  type McpApproval,
  McpConfigError,
  type McpHttpServerConfig,
  type McpServerConfig,
  type McpServersConfig,
  type McpStdioServerConfig,
  parseMcpServers,
} from './mcp-config.js';
export type { McpServerState } from './mcp-connection.js';
export { mcpResultText } from './mcp-result.js';
export { type McpServerStatus, McpServers, type McpServersOptions } from './mcp-servers.js';
export { mcpToolName } from './mcp-tool-name.js';
