import type { AnyTransitionDefinition, InspectionEvent } from 'xstate';
import { waitFor } from 'xstate';
import { z } from 'zod';
import { type Agent, createAgent } from '../../../src/agent/agent.js';
import type { Message } from '../../../src/llm/message.js';
import type { LlmCallOutput } from '../../../src/machines/actors/call-llm.js';
import { MemorySessionStore } from '../../../src/session/memory-session-store.js';
import type { SessionRecordInput } from '../../../src/session/session-store.js';
import type { TranscriptEntryInput } from '../../../src/session/transcript.js';
import {
  type ScriptedFinishReason,
  type ScriptedServer,
  type ScriptedTurn,
  startScriptedServer,
} from '../../../src/testing/index.js';
import { defineTool, type ToolContext } from '../../../src/tools/define-tool.js';
import type { ToolResult } from '../../../src/tools/tool-call.js';
import { enospc } from '../disk-full-store.js';
import { ForwardingStore } from '../forwarding-store.js';
import {
  abstractState,
  CONTROLLED_TOOLS,
  compactionCalls,
  isRunnerDone,
  MAX_ITERATIONS,
  type ModelEvent,
  type ModelPath,
  modelSteps,
  pathCoverage,
  type Snapshot,
  SUMMARY,
  stepTransitions,
  TEXT,
  transitionKey,
} from './agent-model.js';
import { checkInvariants } from './invariants.js';

/**
 * Replays a model path on the real agent: `createAgent` with the real `callLlm` and tool runner, the
 * real `openai` SDK over HTTP to the scripted server, and real tools whose completion the test
 * controls. Each step is realised by what would cause it in the real world (a server reply, a tool
 * finishing, a user action; a runner's done event finishes its last call); steps the real world
 * produces by itself (a tool starting, the rest of a reply already on the wire) need no action.
 * After every step the real actor must have passed through the step's abstract state.
 */

const STEP_TIMEOUT_MS = 5_000;
/** Turn deadline of agents whose path lets the deadline pass during a model call. */
const DEADLINE_MS = 1_500; // long enough that the steps before it finish first on a loaded machine

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Polls a condition outside the actor (server arrivals, running tools); `waitFor` covers the actor. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const end = Date.now() + STEP_TIMEOUT_MS;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The reply a finished model call was scripted with. */
function turnFor(output: LlmCallOutput): ScriptedTurn {
  const turn: ScriptedTurn = { finishReason: output.finishReason as ScriptedFinishReason };
  if (typeof output.message.content === 'string' && output.message.content !== '')
    turn.content = output.message.content;
  if (output.calls.length > 0)
    turn.toolCalls = output.calls.map((c) => ({ id: c.id, name: c.name, arguments: c.argsText }));
  return turn;
}
/** Text that starts at once and then trickles for seconds: the stream is open when the next step comes. */
const STALLED: ScriptedTurn = { content: TEXT.repeat(100), chunkSize: TEXT.length, chunkDelayMs: 50 };

/**
 * A first call that is complete at once (its arguments in one delta, and the second call begins right
 * after: a call starts early only once the next one begins), then a second one that trickles for seconds.
 */
const STALLED_CALL: ScriptedTurn = {
  toolCalls: [
    { id: 'w1', name: 'work', arguments: { n: 1 } },
    { id: 'w9', name: 'work', arguments: `{"n":${' '.repeat(2_000)}9}` },
  ],
  chunkSize: 16,
  chunkDelayMs: 20,
};

const isLlmEvent = (e: ModelEvent) =>
  (e.type.startsWith('LLM.') && e.type !== 'LLM.COMPACT') ||
  e.type === 'xstate.done.actor.callLlm' ||
  e.type === 'xstate.error.actor.callLlm';
const isDeadline = (e: ModelEvent) =>
  e.type === 'xstate.error.actor.callLlm' && e.error.code === 'deadline_exceeded';

/**
 * Which LLM request (0-based, in arrival order at the server) is open in each state of the path, and
 * which model calls (counted by Thinking's invocations of callLlm) compact first. A call that compacts
 * sends no request (LLM.COMPACT comes before it); a compaction's summary call sends one, unless there
 * is nothing to summarize.
 */
function requestIndexes(steps: ReturnType<typeof modelSteps>) {
  const out: number[] = [];
  const compacting = new Set<number>();
  let r = -1;
  let calls = -1;
  for (const [i, step] of steps.entries()) {
    const entersThinking =
      step.to.value === 'Thinking' && (step.from.value !== 'Thinking' || isDeadline(step.event));
    if (entersThinking) calls++;
    const compacts = entersThinking && steps[i + 1]?.event.type === 'LLM.COMPACT';
    if (compacts) compacting.add(calls);
    if (
      (step.to.value === 'Thinking' && !compacts && (entersThinking || step.event.type === 'LLM.RESET')) ||
      (step.to.value === 'Compacting' &&
        step.from.value !== 'Compacting' &&
        compactionCalls(step.to.context)) ||
      step.event.type === 'COMPACTED'
    )
      r++;
    out.push(r);
  }
  return { requestOf: out, compacting };
}

/**
 * The store of paths where a write fails: a memory store whose appends and saves, when called while
 * the agent is in `holdIn`, wait until the test fails them (with a real ENOSPC) at the WRITE_FAILED step.
 */
class HeldWriteStore extends ForwardingStore<MemorySessionStore> {
  holdIn: string | undefined;
  readonly held: Deferred<void>[] = [];
  stateOf: () => string = () => '';

  constructor() {
    super(new MemorySessionStore());
  }

  fail(error: unknown): void {
    this.holdIn = undefined;
    for (const write of this.held.splice(0)) write.reject(error);
  }
  #gate<T>(write: () => Promise<T>): Promise<T> {
    if (this.holdIn === undefined || this.stateOf() !== this.holdIn) return write();
    const gate = deferred<void>();
    this.held.push(gate);
    return gate.promise.then(write);
  }
  override save(record: SessionRecordInput) {
    return this.#gate(() => super.save(record));
  }
  override appendTranscript(id: string, entries: readonly TranscriptEntryInput[]) {
    return this.#gate(() => super.appendTranscript(id, entries));
  }
}

export interface ReplayReport {
  /** Abstract states the real actor went through. */
  history: string[];
  /** Transitions the real actor took. */
  transitions: Set<string>;
  invariantProblems: string[];
}

/** Replays `path` on a real agent; throws (with the step and the real history) when it diverges. */
export async function replay(path: ModelPath): Promise<ReplayReport> {
  const steps = modelSteps(path);
  const { requestOf, compacting } = requestIndexes(steps);
  let modelCalls = 0;
  const requestBefore = (i: number) => (i === 0 ? -1 : requestOf[i - 1]!);
  const withDeadline = steps.some((s) => isDeadline(s.event));
  // A session store only where a write fails: the other paths run as before, without one.
  const store = steps.some((s) => s.event.type === 'WRITE_FAILED') ? new HeldWriteStore() : undefined;

  const arrivals: Deferred<ScriptedTurn>[] = [];
  const server: ScriptedServer = await startScriptedServer({
    respond: () => {
      const reply = deferred<ScriptedTurn>();
      arrivals.push(reply);
      return reply.promise;
    },
  });

  // Tools whose completion the test controls: each run waits for the test to finish it.
  const running = new Map<string, (output: string) => void>();
  // Their contexts, for a progress report the path makes (TOOL.PROGRESS).
  const contexts = new Map<string, ToolContext>();
  const controlled = (ctx: ToolContext) =>
    new Promise<string>((resolve) => {
      const { toolCallId } = ctx;
      contexts.set(toolCallId, ctx);
      running.set(toolCallId, resolve);
      ctx.signal.addEventListener('abort', () => {
        if (running.get(toolCallId) === resolve) running.delete(toolCallId);
      });
    });
  const work = defineTool({
    name: 'work',
    description: 'Does one unit of work',
    parameters: z.object({ n: z.number() }),
    execute: (_args, ctx) => controlled(ctx),
  });
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys (needs approval)',
    parameters: z.object({ target: z.string() }),
    needsApproval: true,
    execute: (_args, ctx) => controlled(ctx),
  });

  const init = deferred<{ messages?: Message[] }>();
  const start = steps[0]?.event;
  const withInitialize = start?.type !== 'INITIALIZE' || start.effect;
  const transitions = new Set<string>();
  const agent: Agent = createAgent({
    baseURL: server.url,
    apiKey: 'test',
    tools: [work, deploy],
    instructions: 'Be brief.',
    // Only a path that starts up with an `initialize` effect has one (the machine says which).
    ...(withInitialize ? { initialize: () => init.promise } : {}),
    limits: { maxIterations: MAX_ITERATIONS, ...(withDeadline ? { timeoutMs: DEADLINE_MS } : {}) },
    retry: { baseDelayMs: 1, maxDelayMs: 1, jitter: 'none' },
    ...(store ? { store } : {}),
    // Every request reports a context-window warning, so each model call sends LLM.CONTEXT; the calls
    // the path compacts before report that they are past compactAt.
    prepareMessages: (messages) => ({
      messages,
      warning: { used: 90, max: 100 },
      ...(compacting.has(modelCalls++) ? { overCompactAt: { tokens: 90, max: 80 } } : {}),
    }),
    inspect: (e: InspectionEvent) => {
      if (e.type === '@xstate.microstep')
        for (const t of e._transitions as AnyTransitionDefinition[]) transitions.add(transitionKey(t));
    },
  });
  const toolStarts = new Set<string>();
  agent.on('tool_call_start', (e) => toolStarts.add(e.toolCallId));
  // Someone listens for progress: a report reaches the machine (TOOL.PROGRESS) only then.
  agent.on('tool_progress', () => {});
  // Someone reads the streamed text: text that comes with the stream's end reaches the machine
  // (LLM.DELTA) only then (docs/agent-loop.md, "Streamed text").
  agent.on('content_chunk', () => {});
  if (store) {
    store.stateOf = () => agent.state;
    // The actor starts once the (new, empty) session is open.
    await until(() => hasActor(agent), 'the session to open');
  }

  const history: string[] = [];
  const invariantProblems: string[] = [];
  let previous: Message[] | undefined;
  const observe = (snapshot: Snapshot) => {
    history.push(abstractState(snapshot));
    for (const p of checkInvariants(previous, snapshot))
      invariantProblems.push(`${p} [after ${history.length}]`);
    previous = snapshot.context.messages;
  };
  observe(agent.actor.getSnapshot());
  const subscription = agent.actor.subscribe(observe);

  let cursor = 0;
  const released = new Set<number>();
  const untilArrived = (r: number) => until(() => arrivals.length > r, `LLM request ${r + 1} to arrive`);
  const settle = (promise: Promise<unknown>) => promise.catch(() => {});

  /** Answers request `r` as the LLM steps of its window (from step `i`) call for. */
  const releaseReply = async (i: number, r: number) => {
    const window: ModelEvent[] = [];
    for (let j = i; j < steps.length && steps[j]!.from.value === 'Thinking' && requestBefore(j) === r; j++)
      window.push(steps[j]!.event);
    const streamed = window.some((e) => e.type === 'LLM.DELTA');
    const earlyCall = window.some((e) => e.type === 'LLM.TOOL_CALL_READY');
    const end = window.find(
      (e) =>
        e.type === 'LLM.RESET' ||
        e.type === ('LLM.RETRY' as string) ||
        e.type === 'xstate.done.actor.callLlm' ||
        e.type === 'xstate.error.actor.callLlm' ||
        e.type === 'INTERRUPT',
    );
    let turn: ScriptedTurn | undefined;
    if (end?.type === 'LLM.RESET' || end?.type === ('LLM.RETRY' as string))
      turn = { content: TEXT, fault: 'cut-mid-text' };
    else if (end?.type === 'xstate.done.actor.callLlm') {
      turn = turnFor(end.output);
      // A call started early is announced when the event loop turns after the chunk that made it
      // ready; the stream's end must come in a later read for that (else the end carries it).
      if (earlyCall) turn.chunkDelayMs = 20;
    } else if (end && end.type === 'xstate.error.actor.callLlm' && !isDeadline(end))
      turn = { error: { status: 400, message: 'scripted bad request' } };
    // Otherwise the stream stays open: INTERRUPT, the deadline, or the end of the path comes next.
    else if (earlyCall) turn = STALLED_CALL;
    else if (streamed) turn = STALLED;
    released.add(r);
    await untilArrived(r);
    if (turn) arrivals[r]!.resolve(turn);
  };

  /** Lets a controlled tool call finish with `content`; other tools run by themselves. */
  const finishTool = async ({ toolCallId, name, content }: ToolResult) => {
    if (!CONTROLLED_TOOLS.has(name)) return;
    await until(() => running.has(toolCallId), `tool call ${toolCallId} to run`);
    const finish = running.get(toolCallId)!;
    running.delete(toolCallId);
    finish(content);
  };

  const act = async (i: number) => {
    const { from, event } = steps[i]!;
    if (from.value === 'Thinking' || (from.value === 'Compacting' && compactionCalls(from.context)))
      await untilArrived(requestBefore(i));
    // A runner's done event: the call that finished last (its result is in the output) was unanswered.
    if (isRunnerDone(event)) {
      for (const result of event.output)
        if (
          from.context.batch.started.includes(result.toolCallId) &&
          !from.context.batch.results[result.toolCallId]
        )
          await finishTool(result);
      return;
    }
    switch (event.type) {
      case 'INITIALIZE':
        return; // the machine asks itself, a microtask after it starts
      case 'xstate.done.actor.initialize':
        return init.resolve({});
      case 'xstate.error.actor.initialize':
        return init.reject(new Error('init failed'));
      case 'USER_MESSAGE':
        return void settle(agent.send(event.text));
      case 'APPROVE':
        return agent.approve(event.toolCallId);
      case 'REJECT':
        return agent.reject(event.toolCallId, event.reason);
      case 'INTERRUPT':
        return agent.interrupt();
      case 'RESUME':
        return void settle(agent.resume());
      case 'EXTEND_LIMIT':
        return void settle(agent.extendLimit(event.by));
      case 'TOOL.FINISHED':
        return finishTool(event.result);
      case 'TOOL.PROGRESS':
        await until(() => contexts.has(event.toolCallId), `tool call ${event.toolCallId} to run`);
        return contexts.get(event.toolCallId)!.progress({ message: event.message ?? '' });
      case 'LLM.COMPACT':
        return; // the model call's prepareMessages said so; no request is sent
      case 'COMPACTED': {
        // agent.compact(): its summary call arrives, and its summary comes back.
        void settle(agent.compact('keep the decisions'));
        const r = requestOf[i]!;
        await untilArrived(r);
        released.add(r);
        return arrivals[r]!.resolve({ content: SUMMARY });
      }
      case 'xstate.done.actor.compact':
      case 'xstate.error.actor.compact': {
        if (!compactionCalls(from.context)) return; // fails at once: nothing to summarize
        const r = requestBefore(i);
        await untilArrived(r);
        released.add(r);
        return arrivals[r]!.resolve(
          event.type === 'xstate.done.actor.compact'
            ? { content: SUMMARY }
            : { error: { status: 400, message: 'scripted bad request' } },
        );
      }
      case 'WRITE_FAILED':
        // A write of the step before, held since it was issued, fails now as on a full disk.
        await until(() => (store?.held.length ?? 0) > 0, 'a write to fail');
        return store!.fail(await enospc());
      default:
        if (isLlmEvent(event) && event.type !== 'LLM.CONTEXT') {
          const r = requestBefore(i);
          if (!released.has(r)) await releaseReply(i, r);
        }
      // LLM.CONTEXT, the rest of a released reply: nothing to do.
    }
  };

  try {
    for (let i = 0; i < steps.length; i++) {
      const { event, to } = steps[i]!;
      const expected = abstractState(to);
      // Self-loops (a tool starting, a context or retry notice) leave the abstract state as it was:
      // the real actor must also have taken the step's transitions.
      const taken = stepTransitions(steps[i]!.from, event);
      // The writes the next step fails are those this step issues in the state it reaches.
      if (store && steps[i + 1]?.event.type === 'WRITE_FAILED') store.holdIn = String(to.value);
      try {
        await act(i);
        await waitFor(
          agent.actor,
          () => {
            const at = history.indexOf(expected, cursor);
            if (at < 0) return false;
            // Every call handed to a runner has been announced (tool_call_start, as it is spawned).
            if (to.context.batch.started.some((id) => !toolStarts.has(id))) return false;
            if (!taken.every((t) => transitions.has(t))) return false;
            cursor = at;
            return true;
          },
          { timeout: STEP_TIMEOUT_MS },
        );
      } catch (error) {
        throw new Error(
          `step ${i + 1} (${event.type}) did not reach ${expected}: ${(error as Error).message}\n` +
            `real history since the previous step:\n  ${history.slice(cursor).join('\n  ')}`,
        );
      }
    }
  } finally {
    subscription.unsubscribe();
    agent.stop();
    for (const a of arrivals) a.resolve({ fault: 'hang' });
    await server.close();
  }
  return { history, transitions, invariantProblems };
}

function hasActor(agent: Agent): boolean {
  try {
    return agent.actor !== undefined;
  } catch {
    return false;
  }
}

/** The transitions a model path takes that the real actor did not. */
export function missingTransitions(path: ModelPath, report: ReplayReport): string[] {
  return [...pathCoverage(path).transitions].filter((t) => !report.transitions.has(t));
}
