import type { ToolRunHooks } from '../machines/actors/run-tools.js';
import { idempotencyKeyFor } from '../tools/idempotency-key.js';
import type { ToolResult } from '../tools/tool-call.js';
import type { ResumeDecision, TranscriptEntryInput } from './transcript.js';

/** What the ledger hooks need from the session keeper. */
export interface LedgerIO {
  /** The restore's decision for a call of a restarted batch (taken once), if any. */
  takeDecision(toolCallId: string): ResumeDecision | undefined;
  /**
   * Appends entries in transcript order and resolves once they are durable (rejects when the write
   * failed); with `discard`, entries of a failed write are dropped instead of written later.
   */
  append(entries: TranscriptEntryInput[], options?: { discard?: boolean }): Promise<void>;
}

/**
 * The tool hooks that keep the transcript ledger (docs/persistence.md): the start (with the call's
 * idempotency key) is durable before the tool runs, the result is written after it. A call the restore
 * decided about gets its recorded result, or its "outcome unknown" result, without running. `inner`
 * hooks (the caller's) run after ours: their `beforeRun` only when the ledger lets the call run.
 */
export function ledgerHooks(io: LedgerIO, inner?: ToolRunHooks): ToolRunHooks {
  return {
    beforeRun: async (call, input) => {
      const decision = io.takeDecision(call.id);
      if (decision?.action === 'use-recorded') {
        return recorded(call.id, decision.name, decision.result, decision.isError);
      }
      if (decision?.action === 'report-interrupted') {
        await io.append([
          {
            kind: 'tool_call_finished',
            toolCallId: call.id,
            name: decision.name,
            result: decision.result,
            isError: true,
            durationMs: 0,
          },
        ]);
        return recorded(call.id, decision.name, decision.result, true);
      }
      // Durable first: a call whose start cannot be written does not run (and its start is dropped).
      await io.append(
        [
          {
            kind: 'tool_call_started',
            toolCallId: call.id,
            name: call.name,
            args: call.args ?? call.argsText,
            idempotencyKey: idempotencyKeyFor(input.sessionId, call.id),
          },
        ],
        { discard: true },
      );
      return inner?.beforeRun?.(call, input);
    },
    afterRun: async (result, call, input) => {
      await io.append([
        {
          kind: 'tool_call_finished',
          toolCallId: result.toolCallId,
          name: result.name,
          result: result.content,
          isError: result.isError,
          durationMs: result.durationMs,
        },
      ]);
      await inner?.afterRun?.(result, call, input);
    },
  };
}

function recorded(toolCallId: string, name: string, content: string, isError: boolean): ToolResult {
  return { toolCallId, name, content, isError, durationMs: 0 };
}
