import type { ToolResult } from '../tools/tool-call.js';
import type { ReplayPlan } from './restore-plan.js';
import { type ToolCallFinishedEntry, type TranscriptEntry, toolCallLedger } from './transcript.js';
/** Runs one tool call again (with the same idempotency key: it is made from the session and call ids). */
export type IdempotentRerun = (call: {
  toolCallId: string;
  name: string;
  args: unknown;
}) => Promise<ToolResult>;

/**
 * After a crash between rest points, the calls of the cut-off batch whose tools are `idempotent` run
 * again (same idempotency key) instead of being answered "outcome unknown". Returns the
 * `tool_call_finished` entries of their results, to append before planning the restore again.
 */
export async function rerunIdempotentCalls(
  plan: ReplayPlan,
  entries: readonly TranscriptEntry[],
  isIdempotent: (name: string) => boolean,
  rerun: IdempotentRerun,
): Promise<{ finished: Omit<ToolCallFinishedEntry, 'seq' | 'at'>[]; ids: Set<string> }> {
  if (plan.report.state !== 'Interrupted' || plan.report.transcript) return { finished: [], ids: new Set() };
  const ledger = toolCallLedger(entries);
  const calls = plan.report.calls.filter(
    (c) =>
      c.outcome === 'interrupted' &&
      isIdempotent(c.name) &&
      ledger.get(c.toolCallId)?.status === 'started-no-result',
  );
  const results = await Promise.all(
    calls.map((c) => {
      const status = ledger.get(c.toolCallId);
      const args = status?.status === 'started-no-result' ? status.args : {};
      return rerun({ toolCallId: c.toolCallId, name: c.name, args });
    }),
  );
  return {
    finished: results.map((r) => ({
      kind: 'tool_call_finished' as const,
      toolCallId: r.toolCallId,
      name: r.name,
      result: r.content,
      isError: r.isError,
      durationMs: r.durationMs,
    })),
    ids: new Set(calls.map((c) => c.toolCallId)),
  };
}
