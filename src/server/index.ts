// `agentloop/server`: serving agents to other programs (docs/serve.md). AG-UI for web apps first.

export {
  type AgentRequestHandler,
  type AgentServerOptions,
  createAgentServer,
  DEFAULT_AGENT_NAME,
  type StartedAgentServer,
  startAgentServer,
} from './ag-ui/agent-server.js';
export type { AgentRuntimeOptions, AgentSource } from './agent-source.js';
// Agents as MCP servers (docs/mcp-server.md): one tool `ask_<agent>` per agent, stdio or Streamable HTTP.
export { type AskOutput, askOutputSchema } from './mcp/ask-result.js';
export { askToolName, createMcpServer, type McpAgentServerOptions } from './mcp/mcp-agent-server.js';
export {
  createMcpHttpHandler,
  type McpHttpServerOptions,
  type McpRequestHandler,
  type StartedMcpHttpServer,
  startMcpHttpServer,
} from './mcp/mcp-http-server.js';
export type { AuthOption } from './request-auth.js';
