// agentloop/restate: agents as Restate virtual objects (docs/engines.md). `@restatedev/restate-sdk`
// is an optional peer dependency: install it to use this subpath.
import { providePromiseWithResolvers } from './promise-with-resolvers.js';

providePromiseWithResolvers();

export {
  type AgentOptionsFactory,
  type ApprovalInput,
  type RestateAgentOptions,
  type RestateSessionView,
  type RestateTurnResult,
  restateAgent,
} from './restate-agent.js';
export {
  type RestateCallOptions,
  type RestateClient,
  RestateClientError,
  type RestateClientOptions,
  restateClient,
} from './restate-client.js';
