// agentloop/dbos: agent turns as DBOS workflows (docs/engines.md). `@dbos-inc/dbos-sdk` and `pg` are
// optional peer dependencies: install them to use this subpath.
export {
  type AgentOptionsFactory,
  type DbosAgentOptions,
  type DbosTurnResult,
  dbosAgent,
} from './dbos-agent.js';
export { type DbosAgentClient, type DbosClientOptions, dbosClient } from './dbos-client.js';
export { type DbosSessionRow, DbosSessions, type DbosSessionView } from './dbos-sessions.js';
export {
  type DbosRecovery,
  type DbosRecoveryOptions,
  dbosExecutorId,
  startDbosRecovery,
} from './executor-leases.js';
