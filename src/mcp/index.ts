/**
 * `agentloop/mcp`: tools from MCP servers. `createAgent({ mcpServers })` starts them; this entry holds
 * the config types, the `mcp.json` reader and the naming rule for embedders and UIs.
 */
export type { McpAuthOptions } from './mcp-auth.js';
export { defaultAuthDir } from './mcp-auth-store.js';
export {
  loadMcpConfigFile,
  type McpApproval,
  McpConfigError,
  type McpHttpServerConfig,
  type McpOAuthConfig,
  type McpServerConfig,
  type McpServersConfig,
  type McpStdioServerConfig,
  parseMcpServers,
} from './mcp-config.js';
export { mcpResultText } from './mcp-result.js';
export type { McpServerState } from './mcp-server-state.js';
export { type McpServerStatus, McpServers, type McpServersOptions } from './mcp-servers.js';
export { McpSignInRequired } from './mcp-sign-in-required.js';
export { mcpToolName } from './mcp-tool-name.js';
