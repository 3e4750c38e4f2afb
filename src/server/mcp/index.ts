// `agentloop/server/mcp`: Agents as MCP servers (docs/mcp-server.md): one tool `ask_<agent>` per agent, stdio or Streamable HTTP.
// Its own subpath: it needs `@modelcontextprotocol/sdk` (an optional peer), which `agentloop/server` does not.
export { type AskOutput, askOutputSchema } from './ask-result.js';
export { askToolName, createMcpServer, type McpAgentServerOptions } from './mcp-agent-server.js';
export {
  createMcpHttpHandler,
  type McpHttpServerOptions,
  type McpRequestHandler,
  type StartedMcpHttpServer,
  startMcpHttpServer,
} from './mcp-http-server.js';
export { withAskLane } from './own-call-lane.js';
export {
  McpStdioServerTransport,
  type McpStdioServerTransportOptions,
} from './stdio-transport.js';
