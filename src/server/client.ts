// `agentloop/server/client`: the browser and Node side of an agentloop AG-UI server (needs
// `@ag-ui/client`). docs/serve.md shows it with CopilotKit.

export { AgentloopHttpAgent } from './ag-ui/agentloop-http-agent.js';
