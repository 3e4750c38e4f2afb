import { DBOSClient } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { whenUnreachable } from './database-unreachable.js';
import type { DbosTurnResult } from './dbos-agent.js';
import { DbosInterrupts } from './dbos-interrupts.js';
import { INPUT_TOPIC, type TurnInput, turnQueueName, turnWorkflowName } from './dbos-names.js';
import { DbosSessions, type DbosSessionView } from './dbos-sessions.js';

/** Where an agent's turns run: the database of DBOS and the sessions table, and the agent's name. */
export interface DbosClientOptions {
  /** DBOS's system database (and, by default, the sessions table's). */
  systemDatabaseUrl: string;
  /** The sessions table's database, when it is not the system database. */
  databaseUrl?: string;
  /** The name the agent was made with (`dbosAgent(name, ...)`). */
  agent: string;
  /** The sessions table's schema and the agent's queue, when not the defaults. */
  schema?: string;
  queue?: string;
}

/**
 * Reaches an agent's turns from a process that runs none (a web app, the CLI's `send`): enqueues
 * messages, sends answers to approvals to the waiting turn, reads the session. Uses DBOS's client
 * (no `DBOS.launch()`). `close()` when done.
 */
export async function dbosClient(options: DbosClientOptions) {
  const { agent } = options;
  const client = await DBOSClient.create({ systemDatabaseUrl: options.systemDatabaseUrl });
  const pool = new pg.Pool({ connectionString: options.databaseUrl ?? options.systemDatabaseUrl, max: 2 });
  // An idle connection the database drops: the next query says so (whenUnreachable), not a crash.
  pool.on('error', () => {});
  const sessions = new DbosSessions(pool, options.schema);
  const interrupts = new DbosInterrupts(pool, options.schema);
  const queueName = options.queue ?? turnQueueName(agent);
  const tell = async (
    sessionId: string,
    input: Extract<TurnInput, { kind: 'approval' }>,
    handler: string,
  ) => {
    const view = (await sessions.load(agent, sessionId))?.view;
    const waits = view?.pendingApprovals.some((p) => p.toolCallId === input.toolCallId);
    if (!view?.workflowId || !waits || view.state !== 'WaitingApproval') {
      throw new Error(
        `agentloop/dbos: ${handler}: no call "${input.toolCallId}" waits for approval in session "${sessionId}" of agent "${agent}"`,
      );
    }
    await client.send(view.workflowId, input, INPUT_TOPIC).catch((error: unknown) => {
      throw whenUnreachable(error, options.systemDatabaseUrl, `${handler} on session "${sessionId}"`);
    });
    return true as const;
  };
  return {
    /** Enqueues a message; resolves with the turn's workflow id. */
    async post(sessionId: string, text: string): Promise<string> {
      if (text.trim() === '') {
        throw new Error(`agentloop/dbos: send to session "${sessionId}" of agent "${agent}" needs a message`);
      }
      const handle = await client
        .enqueue(
          { workflowName: turnWorkflowName(agent), queueName, queuePartitionKey: sessionId },
          sessionId,
          text,
        )
        .catch((error: unknown) => {
          throw whenUnreachable(error, options.systemDatabaseUrl, `send to session "${sessionId}"`);
        });
      return handle.workflowID;
    },
    /** Waits for a turn's outcome. */
    result: (workflowId: string) => client.retrieveWorkflow<DbosTurnResult>(workflowId).getResult(),
    approve: (sessionId: string, toolCallId: string, approve: { always?: boolean } = {}) =>
      tell(sessionId, { kind: 'approval', toolCallId, approved: true, ...approve }, 'approve'),
    reject: (sessionId: string, toolCallId: string, reason?: string) =>
      tell(
        sessionId,
        { kind: 'approval', toolCallId, approved: false, ...(reason !== undefined ? { reason } : {}) },
        'reject',
      ),
    /**
     * Interrupts the session's running turn, wherever it stands (a model call, tools, an approval
     * wait): it ends Interrupted. False when no turn runs.
     */
    async interrupt(sessionId: string, reason?: string): Promise<boolean> {
      const view = (await sessions.load(agent, sessionId))?.view;
      if (!view?.workflowId) return false;
      const what = `interrupt on session "${sessionId}"`;
      await interrupts.ask(view.workflowId, reason, what);
      // A turn waiting for approval is in `DBOS.recv`: the message wakes it there.
      const input: TurnInput = { kind: 'interrupt', ...(reason !== undefined ? { reason } : {}) };
      await client.send(view.workflowId, input, INPUT_TOPIC).catch((error: unknown) => {
        throw whenUnreachable(error, options.systemDatabaseUrl, what);
      });
      return true;
    },
    async state(sessionId: string): Promise<DbosSessionView> {
      return (
        (await sessions.load(agent, sessionId))?.view ?? {
          sessionId,
          state: 'AwaitingInput',
          turn: 0,
          pendingApprovals: [],
        }
      );
    },
    async close(): Promise<void> {
      await client.destroy();
      await pool.end();
    },
  };
}

/** A client of {@link dbosClient}. */
export type DbosAgentClient = Awaited<ReturnType<typeof dbosClient>>;
