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
export type { AuthOption } from './request-auth.js';
