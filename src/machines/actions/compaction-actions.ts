import { assign, enqueueActions } from 'xstate';
import { CompactionFailedError, type CompactOutput } from '../actors/compact-conversation.js';
import type { CompactRequest } from '../agent-context.js';
import { machineSetup } from '../machine-setup.js';
import { usageAfter } from '../turn-limits.js';
import { event } from '../turn-messages.js';

// Actions of compaction by summary: the Compacting state's way in and its outcomes. The summary is
// taken into the context only when it came; a failed or interrupted compaction changes no message.

/** `COMPACT` at rest: remember the instructions and the state to rest in again. */
export const requestCompaction = machineSetup.createAction(
  assign(({ context, event: ev }) => {
    const instructions = ev.type === 'COMPACT' && ev.instructions?.trim() ? ev.instructions.trim() : null;
    const resume = (context.lastState ?? 'Completed') as CompactRequest['resume'];
    return { compactRequest: { instructions, resume } };
  }),
);

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
    const usage = output?.usage ?? failure?.usage;
    const done = {
      compactedCall: context.iteration,
      compactRequest: null,
      ...(usage ? usageAfter(context, usage) : {}),
    };
    if (output) {
      const { record } = output;
      enqueue.assign({ ...done, compaction: record });
      enqueue.emit(
        event(context, 'context_compacted', {
          tokensBefore: record.tokensBefore,
          tokensAfter: record.tokensAfter,
          entriesCovered: record.through - record.from,
          model: record.model,
        }),
      );
      return;
    }
    // The message, not `reason`: the effect's wrapper redacts it (a server's error may echo a key).
    const reason = error instanceof Error ? error.message : String(error);
    const fallback = context.compactRequest
      ? 'the conversation is unchanged'
      : 'old tool results are pruned instead';
    enqueue.assign(done);
    enqueue.emit(
      event(context, 'limit_warning', {
        limit: 'context_window',
        message: `Compaction failed (${reason}); ${fallback}.`,
        used: failure?.tokens ?? 0,
        max: failure?.max ?? 0,
      }),
    );
  }),
);
