import type { Actor } from 'xstate';
import type { Message } from '../llm/message.js';
import { CompactionFailedError } from '../machines/actors/compact-conversation.js';
import { effectsOf } from '../machines/agent-effects.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import type { EffectIO } from '../machines/effect-io.js';
import { fromSignal } from '../tools/execute-tool-call.js';
/** What `agent.compact()` did. */
export interface CompactResult {
  /** Whether the requests now send a (new) summary in place of the older conversation. */
  compacted: boolean;
  /** Estimated prompt tokens before and after, and the messages the summary stands for (when compacted). */
  tokensBefore?: number;
  tokensAfter?: number;
  entriesCovered?: number;
  /** Why nothing was compacted (the summary call failed, nothing to summarize, interrupted). */
  reason?: string;
}

/** The states after a turn in which a compaction may be asked for. */
const AFTER_TURN = new Set(['Completed', 'Interrupted', 'Error']);

/**
 * Compacts the conversation of an agent at rest after a turn (Completed, Interrupted, Error): the
 * summary call runs here (the agent's `compact` effect) and its outcome goes to the machine as
 * `COMPACTED`, which takes the summary in or warns why there is none. `signal` stops the call (the
 * conversation is then unchanged). Throws when a turn runs or none was taken yet.
 */
export async function compactOnRequest(
  actor: Actor<AgentMachine>,
  signal: AbortSignal,
  instructions?: string,
): Promise<CompactResult> {
  const snapshot = actor.getSnapshot();
  const { context } = snapshot;
  if (!AFTER_TURN.has(String(snapshot.value)) || context.turn === 0) {
    throw new Error(
      `agent.compact(): nothing to compact in state ${String(snapshot.value)} (compact after a turn, not while one runs)`,
    );
  }
  const compact = effectsOf(actor)?.compact;
  if (!compact) return { compacted: false, reason: 'this agent does not compact (compaction is off)' };
  // The effect runs outside the machine: it tells nobody as it goes; `signal` stops it.
  const io: EffectIO = Object.assign(fromSignal(signal), {
    signal,
    send: () => {},
    conversation: (): readonly Message[] => actor.getSnapshot().context.messages,
  });
  const input = {
    sessionId: context.sessionId,
    turn: context.turn,
    iteration: context.iteration,
    messages: context.messages,
    compaction: context.compaction,
    instructions: instructions?.trim() || null,
  };
  try {
    const { record, usage } = await compact(input, io);
    if (signal.aborted) return { compacted: false, reason: 'interrupted' };
    actor.send({ type: 'COMPACTED', record, usage });
    if (actor.getSnapshot().context.compaction !== record)
      return { compacted: false, reason: 'a turn started meanwhile' };
    return {
      compacted: true,
      tokensBefore: record.tokensBefore,
      tokensAfter: record.tokensAfter,
      entriesCovered: record.through - record.from,
    };
  } catch (error) {
    if (signal.aborted) return { compacted: false, reason: 'interrupted' };
    const failure = error instanceof Error ? error.message : String(error);
    const usage = error instanceof CompactionFailedError ? error.usage : null;
    actor.send({ type: 'COMPACTED', failure, usage });
    return { compacted: false, reason: failure };
  }
}
