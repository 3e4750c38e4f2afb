import { randomUUID } from 'node:crypto';
import type { ModelCallRecord } from '../llm/model-reply.js';
import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import type { LlmCallOutput } from './actors/call-llm.js';
import { CompactionFailedError } from './actors/compact-conversation.js';
import type { RunToolsInput } from './actors/run-tools.js';
import type { AgentEffects } from './agent-effects.js';
import type { AgentActorEvent } from './agent-events.js';
import type { EffectIO } from './effect-io.js';

/**
 * A durable engine's step runner: what Restate's `ctx.run`, a DBOS step or the in-memory recorder
 * of the tests implement. The statechart runs unchanged over it (docs/agent-loop.md, "Durable steps").
 */
export interface DurableSteps {
  /**
   * Runs `run` as the step named `key` and records what it resolved with (JSON data). When the engine
   * holds a record of this step already (a replay after a crash, a resumed suspension), resolves with
   * that record and does not call `run`. `run` never rejects: failures come as data.
   *
   * Keys are unique within one execution of a handler or workflow: they say which effect of which
   * session, turn and iteration the step is, and a repeated effect gets `#2`, `#3`... An engine that
   * matches steps by position (Restate's journal, DBOS's step ids) gets them in the same order on every
   * replay, because the machine asks for them in the same order when given the same outcomes.
   */
  step<T>(key: string, run: () => Promise<T>): Promise<T>;
}

/** What the durable wrapper needs besides the engine's steps. */
export interface DurableEffectsOptions {
  steps: DurableSteps;
  /** Whether the tool named may run again after a crash cut it (`defineTool({ idempotent: true })`). */
  isIdempotent: (name: string) => boolean;
  /** The result text of a non-idempotent call that started and recorded no result ("outcome unknown"). */
  outcomeUnknown: (name: string) => string;
}

/** An error as a step records it: enough to rebuild what the machine's guards read (class, message, code). */
export interface RecordedError {
  name: string;
  message: string;
  code?: string;
  /** A `CompactionFailedError`'s fields. */
  compaction?: { reason: string; usage: CompactionFailedError['usage']; tokens: number; max: number };
}

/**
 * What a step records. `events` are what the effect told the machine while it ran (streamed text, a
 * retry, the context window's notes, a request to compact): a replay tells them again, in order,
 * before it settles. `aborted`: the machine stopped the effect (an interrupt, or it left the state);
 * a replay then never settles, and the same stop comes again from the replayed inputs.
 */
export type StepRecord<T> = { events: AgentActorEvent[] } & (
  | { ok: T }
  | { error: RecordedError }
  | { aborted: true }
);

/** The step identity of one effect: which session, turn and iteration, and which call for a tool. */
export function stepKey(
  kind: 'initialize' | 'model' | 'compact' | 'tools' | 'tool',
  at: { sessionId: string; turn: number; iteration: number },
  callId?: string,
): string {
  const base = `${at.sessionId}/${at.turn}/${at.iteration}/${kind}`;
  return callId === undefined ? base : `${base}/${callId}`;
}

/**
 * The agent's effects with each one run as a durable step of an engine: the model call, each tool
 * call (a batch with a call that is not idempotent is one marker step first, then a step per call),
 * the compaction summary and `initialize`.
 * A replay gets each step's recorded outcome instead of running it again.
 *
 * A tool call is run only in the execution that recorded its batch's marker: when the marker comes
 * from an earlier execution and the call recorded no result, the call may have run when that
 * execution died, so a tool that is not idempotent is answered "outcome unknown" (the Postgres
 * workers' rule) and an idempotent one runs again with the same idempotency key.
 *
 * Calls announced before the stream ends (`LLM.TOOL_CALL_READY`) are not passed on: under an engine a
 * call starts when its reply is recorded, so every replay asks for the steps in one order.
 */
export function durableEffects(effects: AgentEffects, options: DurableEffectsOptions): AgentEffects {
  const { steps } = options;
  const seen = new Map<string, number>();
  /** Markers this execution made: a marker not in here was recorded by an execution that died. */
  const mine = new Set<string>();
  const unique = (key: string) => {
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return n === 1 ? key : `${key}#${n}`;
  };
  const durable = <I, O>(
    key: (input: I) => string,
    run: (input: I, io: EffectIO) => Promise<O>,
  ): ((input: I, io: EffectIO) => Promise<O>) => {
    return (input, io) => runStep(steps, unique(key(input)), io, (told) => run(input, told));
  };

  const runTools = effects.runTools.bind(effects);
  const wrapped: AgentEffects = {
    callLlm: durable(
      (input) => stepKey('model', input),
      async (input, io) => recordedReply(await effects.callLlm(input, io), io),
    ),
    runTools: async (input, io) => {
      if (input.calls.length === 0) return [];
      const first = input.calls[0]!;
      // The marker tells a replay whether this execution started the batch; only a call that may not
      // run twice asks that, so a batch of idempotent calls goes without one (one step fewer).
      const guarded = input.calls.some((call) => !options.isIdempotent(call.name));
      const marker = guarded
        ? await steps.step(unique(stepKey('tools', input, first.id)), async () => {
            const nonce = randomUUID();
            mine.add(nonce);
            return nonce;
          })
        : undefined;
      if (io.aborted) return never();
      let unfinished = input.calls.length;
      const one = async (call: ToolCallRequest): Promise<ToolResult> => {
        const result = await runStep(steps, unique(stepKey('tool', input, call.id)), io, async (told) => {
          if (marker !== undefined && !mine.has(marker) && !options.isIdempotent(call.name))
            return outcomeUnknown(call, options);
          const results = await runTools(single(input, call), told);
          return results[0] ?? outcomeUnknown(call, options);
        });
        unfinished--;
        // As the batch runner does: each call but the last is reported as it ends; the output reports that one.
        if (unfinished > 0) io.send({ type: 'TOOL.FINISHED', result });
        return result;
      };
      return Promise.all(input.calls.map(one));
    },
    ...(effects.compact
      ? { compact: durable((input) => stepKey('compact', input), effects.compact.bind(effects)) }
      : {}),
    ...(effects.initialize
      ? {
          initialize: durable(
            (input) => stepKey('initialize', { sessionId: input.sessionId, turn: 0, iteration: 0 }),
            effects.initialize.bind(effects),
          ),
        }
      : {}),
    ...(effects.hears ? { hears: effects.hears.bind(effects) } : {}),
  };
  return wrapped;
}

/**
 * Runs one effect as the step `key`: records its outcome and the events it sent, or, replayed, tells
 * the machine those events again and settles as the effect did. In the execution that ran it, the
 * effect's own error is rethrown (its class and fields intact).
 */
async function runStep<O>(
  steps: DurableSteps,
  key: string,
  io: EffectIO,
  run: (io: EffectIO) => Promise<O>,
): Promise<O> {
  let thrown: { error: unknown } | undefined;
  let ran = false;
  const record = await steps.step<StepRecord<O>>(key, async () => {
    ran = true;
    const events: AgentActorEvent[] = [];
    const told = recordingIO(io, events);
    try {
      const value = await run(told);
      return io.aborted ? { events, aborted: true } : { events, ok: value };
    } catch (error) {
      if (io.aborted) return { events, aborted: true };
      thrown = { error };
      return { events, error: recordError(error) };
    }
  });
  if (!ran) for (const event of record.events) io.send(event);
  if ('aborted' in record) return never();
  if ('error' in record) throw thrown ? thrown.error : rebuildError(record.error);
  return record.ok;
}

/** An `EffectIO` that passes events on and keeps them for the step's record (streamed text joined). */
function recordingIO(io: EffectIO, events: AgentActorEvent[]): EffectIO {
  return {
    get signal() {
      return io.signal;
    },
    get aborted() {
      return io.aborted;
    },
    get reason() {
      return io.reason;
    },
    onAbort: (listener) => io.onAbort(listener),
    conversation: () => io.conversation?.() ?? [],
    hears: (type) => io.hears?.(type) ?? true,
    send(event) {
      if (event.type === 'LLM.TOOL_CALL_READY') return;
      if (io.aborted) return;
      // Progress is live feedback: passed on, never recorded, so a replayed step does not repeat it.
      if (event.type === 'TOOL.PROGRESS') return io.send(event);
      const last = events.at(-1);
      if (event.type === 'LLM.DELTA' && last?.type === 'LLM.DELTA') {
        events[events.length - 1] = { type: 'LLM.DELTA', delta: last.delta + event.delta };
      } else events.push(event);
      io.send(event);
    },
  };
}

/**
 * A model call's output as its step records it. The call's record works out its `requestHash` and
 * `settings` from the request body when they are first read (src/llm/model-call.ts), and recording a
 * step serializes it, which would read them: when nothing builds a `model_call` event for this agent
 * (no saved session, no listener), nothing reads them in this execution or a replay of it with the
 * same options, so the step records the call's record without them.
 */
function recordedReply(output: LlmCallOutput, io: EffectIO): LlmCallOutput {
  const record = output.record;
  if (!record || io.hears?.('model_call') !== false) return output;
  // Own keys copied one by one: a spread or a destructuring would call the two getters.
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    if (key !== 'requestHash' && key !== 'settings') kept[key] = record[key as keyof ModelCallRecord];
  }
  return { ...output, record: kept as unknown as ModelCallRecord };
}

/** The one-call batch a tool step runs. */
function single(input: RunToolsInput, call: ToolCallRequest): RunToolsInput {
  return { ...input, calls: [call] };
}

function outcomeUnknown(call: ToolCallRequest, options: DurableEffectsOptions): ToolResult {
  return {
    toolCallId: call.id,
    name: call.name,
    content: options.outcomeUnknown(call.name),
    isError: true,
    durationMs: 0,
  };
}

/** A promise that never settles: the machine stopped the effect, its outcome is dropped. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

/** The error as a step records it. */
export function recordError(error: unknown): RecordedError {
  if (error instanceof CompactionFailedError) {
    return {
      name: error.name,
      message: error.message,
      compaction: { reason: error.reason, usage: error.usage, tokens: error.tokens, max: error.max },
    };
  }
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}) };
}

/** The error a replayed step rejects with: what the machine reads of it (class, message, code). */
export function rebuildError(recorded: RecordedError): Error {
  if (recorded.compaction) {
    const { reason, usage, tokens, max } = recorded.compaction;
    return new CompactionFailedError(reason, usage, tokens, max);
  }
  const error = new Error(recorded.message) as Error & { code?: string };
  error.name = recorded.name;
  if (recorded.code !== undefined) error.code = recorded.code;
  return error;
}
