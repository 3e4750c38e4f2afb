import { enqueueActions } from 'xstate';
import type { CompactionRecord } from '../../prompt/compaction.js';
import { workCounts } from '../../work-counters.js';
import { CompactionFailedError, type CompactOutput } from '../actors/compact-conversation.js';
import type { AgentContext } from '../agent-context.js';
import { machineSetup } from '../machine-setup.js';
import { usageAfter } from '../turn-limits.js';
import { event } from '../turn-messages.js';

// Actions of compaction by summary: the outcomes of Compacting, and of a compaction asked for at rest. The summary is
// taken into the context only when it came; a failed or interrupted compaction changes no message.

/** The `context_compacted` event of a summary taken in. */
function compactedEvent(context: AgentContext, record: CompactionRecord) {
  return event(context, 'context_compacted', {
    tokensBefore: record.tokensBefore,
    tokensAfter: record.tokensAfter,
    entriesCovered: record.through - record.from,
    model: record.model,
  });
}

/**
 * The summary call came back. With a summary, the requests from now on send it in place of the
 * messages it covers (`context_compacted`); without one, the model call goes on and the context window
 * prunes, with a `limit_warning` saying why. Either way this model call compacts no more.
 */
export const finishCompaction = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    const output = (ev as unknown as { output?: CompactOutput }).output;
    const error = (ev as unknown as { error?: unknown }).error;
    const failure = error instanceof CompactionFailedError ? error : undefined;
    const usage = output ? output.usage : failure?.usage;
    // A summary that came back was a model call, with or without usage (then its cost is unknown,
    // as for a model reply without usage).
    const counted = output !== undefined || usage;
    const done = { compactedCall: context.iteration, ...(counted ? usageAfter(context, usage ?? null) : {}) };
    if (output) {
      const { record } = output;
      workCounts.contextUpdates++;
      enqueue.assign({ ...done, compaction: record });
      enqueue.emit(compactedEvent(context, record));
      return;
    }
    // The message, not `reason`: the effect's wrapper redacts it (a server's error may echo a key).
    const reason = error instanceof Error ? error.message : String(error);
    workCounts.contextUpdates++;
    enqueue.assign(done);
    enqueue.emit(
      event(context, 'limit_warning', {
        limit: 'context_window',
        message: `Compaction failed (${reason}); old tool results are pruned instead.`,
        used: failure?.tokens ?? 0,
        max: failure?.max ?? 0,
      }),
    );
  }),
);

/** A compaction asked for after the turn (`COMPACTED`, from `agent.compact()`): taken in, or told why not. */
export const applyCompaction = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'COMPACTED') return;
    const usage = ev.record || ev.usage ? usageAfter(context, ev.usage ?? null) : {};
    const { record } = ev;
    if (record) {
      workCounts.contextUpdates++;
      enqueue.assign({ ...usage, compaction: record });
      enqueue.emit(compactedEvent(context, record));
      return;
    }
    workCounts.contextUpdates++;
    enqueue.assign(usage);
    enqueue.emit(
      event(context, 'limit_warning', {
        limit: 'context_window',
        message: `Compaction failed (${ev.failure ?? 'no summary'}); the conversation is unchanged.`,
        used: 0,
        max: 0,
      }),
    );
  }),
);
