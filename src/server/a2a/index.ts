// `agentloop/a2a`: serving an agent to other agents over A2A, and calling remote A2A agents as tools
// (docs/a2a.md). Needs `@a2a-js/sdk` (an optional peer of agentloop).

export { type A2aAgentToolOptions, a2aAgentTool } from './a2a-agent-tool.js';
export {
  type A2aRequestHandler,
  type A2aServerOptions,
  AGENT_CARD_PATH,
  createA2aServer,
  type StartedA2aServer,
  startA2aServer,
} from './a2a-server.js';
export { A2A_RPC_PATH, type CardInfo, type CardSkill } from './agent-card.js';
export type { PushOptions } from './task-handler.js';
