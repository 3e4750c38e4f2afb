import type { AgentOptions } from '../agent/agent-options.js';
import type { BundleAgent } from '../bundle/bundle-agent.js';
import type { ModelConnection } from './model-connection.js';

/** The `createAgent` options every command gives a bundle agent: who it is and which model answers. */
export function bundleAgentOptions(bundleAgent: BundleAgent, connection: ModelConnection): AgentOptions {
  return {
    name: bundleAgent.name,
    baseURL: connection.baseURL,
    apiKey: connection.apiKey,
    model: connection.model,
    instructions: bundleAgent.instructions,
    contextMessages: bundleAgent.contextMessages,
    tools: bundleAgent.tools,
  };
}
