// Names a turn's workflow, queue and messages go by: shared by the workers (dbos-agent.ts) and the
// clients that reach them from other processes (dbos-client.ts).

/** The DBOS workflow name of an agent's turns. */
export function turnWorkflowName(agent: string): string {
  return `agentloop.turn.${agent}`;
}

/** The default queue of an agent's turns (partitioned by session id). */
export function turnQueueName(agent: string): string {
  return `agentloop_${agent.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/** The topic a waiting turn receives answers to approvals and interrupts on. */
export const INPUT_TOPIC = 'agentloop.input';

/** A message to a turn waiting for approval. */
export type TurnInput =
  | { kind: 'approval'; toolCallId: string; approved: boolean; always?: boolean; reason?: string }
  | { kind: 'interrupt'; reason?: string };
