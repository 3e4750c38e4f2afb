import type { BaseEvent, Interrupt } from '@ag-ui/core';
import type { TranscriptEntry } from '../session-imports.js';
import { RUN_ENDED_ENTRY } from './transcript-events.js';

// With an approval timeout (`approvalTimeoutMs`), an interrupt carries `expiresAt`: the time the run
// that first asked for it ended, plus the timeout. It is written in the run's end entry, so every
// process and every later run that asks again (some calls answered, others not) gives the same time.

/** The `expiresAt` each interrupt was first given, from the run ends in the transcript. */
export function recordedExpiries(entries: readonly TranscriptEntry[]): Map<string, string> {
  const expiries = new Map<string, string>();
  for (const entry of entries) {
    if (entry.kind !== 'event' || entry.event !== RUN_ENDED_ENTRY) continue;
    const event = (entry.data as { event?: { outcome?: { interrupts?: unknown } } } | undefined)?.event;
    const interrupts = event?.outcome?.interrupts;
    if (!Array.isArray(interrupts)) continue;
    for (const interrupt of interrupts as Partial<Interrupt>[]) {
      if (typeof interrupt?.id === 'string' && typeof interrupt.expiresAt === 'string') {
        if (!expiries.has(interrupt.id)) expiries.set(interrupt.id, interrupt.expiresAt);
      }
    }
  }
  return expiries;
}

/** `final` with `expiresAt` on each of its interrupts (the recorded one, else `now` + `timeoutMs`). */
export function withExpiry(
  final: BaseEvent | undefined,
  recorded: ReadonlyMap<string, string>,
  timeoutMs: number | undefined,
  now = Date.now(),
): BaseEvent | undefined {
  const outcome = (final as { outcome?: { type?: string; interrupts?: Interrupt[] } } | undefined)?.outcome;
  if (timeoutMs === undefined || outcome?.type !== 'interrupt' || !outcome.interrupts) return final;
  const interrupts = outcome.interrupts.map((interrupt) => ({
    ...interrupt,
    expiresAt: recorded.get(interrupt.id) ?? new Date(now + timeoutMs).toISOString(),
  }));
  return { ...final, outcome: { ...outcome, interrupts } } as BaseEvent;
}

/** Whether the interrupt `id` has expired at `now` (never without a recorded expiry). */
export function hasExpired(recorded: ReadonlyMap<string, string>, id: string, now = Date.now()): boolean {
  const at = recorded.get(id);
  return at !== undefined && Date.parse(at) <= now;
}
