import type { Actor } from 'xstate';
import type { AgentMachine } from '../machines/agent-machine.js';

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

/**
 * Compacts the conversation of an agent at rest after a turn (Completed, Interrupted, Error): the
 * machine goes through Compacting and back. Resolves once it is back; throws when a turn runs or no
 * turn has been taken yet.
 */
export function compactOnRequest(actor: Actor<AgentMachine>, instructions?: string): Promise<CompactResult> {
  const event = {
    type: 'COMPACT' as const,
    ...(instructions?.trim() ? { instructions: instructions.trim() } : {}),
  };
  const before = actor.getSnapshot();
  if (!before.can(event)) {
    throw new Error(
      `agent.compact(): nothing to compact in state ${String(before.value)} (compact after a turn, not while one runs)`,
    );
  }
  return new Promise((resolve) => {
    let reason: string | undefined;
    const warnings = actor.on('limit_warning', (e) => {
      if (e.limit === 'context_window') reason = e.message;
    });
    const subscription = actor.subscribe({
      next: (snapshot) => {
        if (snapshot.value === 'Compacting' && snapshot.status === 'active') return;
        subscription.unsubscribe();
        warnings.unsubscribe();
        const record = snapshot.context.compaction;
        if (record && record !== before.context.compaction) {
          resolve({
            compacted: true,
            tokensBefore: record.tokensBefore,
            tokensAfter: record.tokensAfter,
            entriesCovered: record.through - record.from,
          });
        } else resolve({ compacted: false, reason: reason ?? `stopped in state ${String(snapshot.value)}` });
      },
      error: () => resolve({ compacted: false, reason: 'the agent failed' }),
    });
    actor.send(event);
  });
}
