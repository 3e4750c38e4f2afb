import { MODEL_CALL_EVENT } from '../session/model-call-entry.js';
import type { TranscriptEntry } from '../session/transcript.js';
import { SESSION_STARTED_EVENT } from '../session/transcript-replay.js';

// Where a transcript may be cut for a fork: at a rest point, where the conversation up to the cut is
// one the model can be asked to go on from and no effect is half done. That is after a user message,
// before a model call (a tool batch answered in full), or after the model's final answer of a turn.
// Refused: a cut inside a tool batch (calls asked for whose results come after the cut), and a cut at
// a call that started and has no result (a tool call, or a model call whose reply comes after it).

/** A tool call seen in the transcript: where it was first seen and its tool. */
interface SeenCall {
  name: string;
  seq: number;
}

/** What a forward scan of a transcript knows at one entry. */
class CutScan {
  sawUser = false;
  /** The `model_call` entry whose reply has not come yet. */
  openModelCall: number | undefined;
  /** Calls of the last assistant message without their `role: 'tool'` message yet. */
  openCalls = new Map<string, SeenCall>();
  /** The last assistant message with tool calls. */
  batchSeq = 0;
  /** Calls started (ledger lines) and not finished. */
  started = new Map<string, SeenCall>();
  /** Calls with ledger lines but no assistant message asking for them yet (started while it streamed). */
  early = new Map<string, SeenCall>();
  /** Calls some assistant message asked for. */
  asked = new Set<string>();

  read(entry: TranscriptEntry): void {
    if (entry.kind === 'event') {
      if (entry.event === SESSION_STARTED_EVENT) Object.assign(this, new CutScan());
      else if (entry.event === MODEL_CALL_EVENT) this.openModelCall = entry.seq;
      return;
    }
    if (entry.kind === 'tool_call_started' || entry.kind === 'tool_call_finished') {
      const call = { name: String(entry.name), seq: entry.seq };
      if (!this.asked.has(entry.toolCallId) && !this.early.has(entry.toolCallId))
        this.early.set(entry.toolCallId, call);
      if (entry.kind === 'tool_call_finished') this.started.delete(entry.toolCallId);
      else if (!this.started.has(entry.toolCallId)) this.started.set(entry.toolCallId, call);
      return;
    }
    const message = entry.message as unknown as Record<string, unknown> | null;
    if (typeof message !== 'object' || message === null) return;
    if (message.role === 'user') this.sawUser = true;
    if (message.role === 'tool') {
      const id = String(message.tool_call_id);
      this.openCalls.delete(id);
      this.started.delete(id);
      return;
    }
    if (message.role !== 'assistant') return;
    this.openModelCall = undefined;
    this.openCalls.clear();
    for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
      const { id, function: fn } = (call ?? {}) as { id?: unknown; function?: { name?: unknown } };
      if (typeof id !== 'string') continue;
      this.asked.add(id);
      this.early.delete(id);
      this.openCalls.set(id, { name: String(fn?.name ?? 'tool'), seq: entry.seq });
      this.batchSeq = entry.seq;
    }
  }

  /** Why the transcript may not be cut after the entries read so far; undefined at a rest point. */
  problem(): string | undefined {
    if (this.openModelCall !== undefined) {
      return `it is at a model call that started and has no result (the model_call entry at seq ${this.openModelCall} has its reply after the cut)`;
    }
    const [openId, open] = [...this.openCalls][0] ?? [];
    if (openId !== undefined && open) {
      return `it is inside a tool batch (the assistant message at seq ${this.batchSeq} asked for ${this.openCalls.size} call(s) whose results come after the cut, e.g. "${open.name}", call ${openId})`;
    }
    const [startedId, started] = [...this.started][0] ?? [];
    if (startedId !== undefined && started) {
      return `it is at a tool call that started and has no result ("${started.name}", call ${startedId}, started at seq ${started.seq})`;
    }
    const [earlyId, early] = [...this.early][0] ?? [];
    if (earlyId !== undefined && early) {
      return `it is inside a tool batch ("${early.name}", call ${earlyId}, ran from seq ${early.seq} for an assistant message after the cut)`;
    }
    if (!this.sawUser) return 'there is no user message before it: nothing to fork';
    return undefined;
  }
}

/**
 * Why the transcript `entries` may not be cut after the entry with `seq` (the fork keeps that entry
 * and those before it); undefined when it is a rest point. Names the entry when there is none with
 * that `seq`. Pure; reads `entries` up to the cut once.
 */
export function forkCutProblem(entries: readonly TranscriptEntry[], seq: number): string | undefined {
  const scan = new CutScan();
  for (const entry of entries) {
    scan.read(entry);
    if (entry.seq === seq) return scan.problem();
  }
  const last = entries.at(-1)?.seq;
  return last === undefined
    ? 'the session has no transcript'
    : `there is no entry seq ${seq} (the transcript has seq ${entries[0]!.seq} to ${last})`;
}

/**
 * The `seq` of every message entry the transcript may be cut after (its rest points: user messages,
 * the last result of a tool batch, final answers). One pass, for a view that offers "Fork here".
 */
export function forkPoints(entries: readonly TranscriptEntry[]): number[] {
  const scan = new CutScan();
  const points: number[] = [];
  for (const entry of entries) {
    scan.read(entry);
    if (entry.kind === 'message' && scan.problem() === undefined) points.push(entry.seq);
  }
  return points;
}
