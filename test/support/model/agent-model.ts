import { type AnyTransitionDefinition, createEmptyActor, type SnapshotFrom } from 'xstate';
import { getShortestPaths, getStateNodes, type StatePath } from 'xstate/graph';
import type { LlmCallOutput } from '../../../src/machines/actors/call-llm.js';
import {
  CompactionFailedError,
  type CompactOutput,
} from '../../../src/machines/actors/compact-conversation.js';
import type { AgentContext } from '../../../src/machines/agent-context.js';
import type { AgentMachineEvent } from '../../../src/machines/agent-events.js';
import { type AgentMachine, agentMachine } from '../../../src/machines/agent-machine.js';
import { compactionCut, leadingSystemCount } from '../../../src/prompt/compaction.js';
import type { ToolCallRequest, ToolResult } from '../../../src/tools/tool-call.js';

/**
 * The model of the agent statechart used by the model-based test: the machine itself, traversed with
 * `xstate/graph` over a state-aware menu of events that the real world (scripted server, tools, user)
 * can produce at that point. Actor completions are modelled as the events the real actors send.
 */

export type Snapshot = SnapshotFrom<AgentMachine>;

/** Every event a model path may hold: the machine's own events plus actor completions. */
export type ModelEvent =
  | AgentMachineEvent
  | { type: 'xstate.done.actor.initialize'; output: { messages?: [] }; actorId: 'initialize' }
  | { type: 'xstate.error.actor.initialize'; error: Error; actorId: 'initialize' }
  | { type: 'xstate.done.actor.callLlm'; output: LlmCallOutput; actorId: 'callLlm' }
  | { type: 'xstate.error.actor.callLlm'; error: Error & { code?: string }; actorId: 'callLlm' }
  | { type: `xstate.done.actor.tools:${string}`; output: ToolResult[]; actorId: string }
  | { type: 'xstate.done.actor.compact'; output: CompactOutput; actorId: 'compact' }
  | { type: 'xstate.error.actor.compact'; error: Error; actorId: 'compact' };

/** A tool runner's done event. */
export type RunnerDoneEvent = Extract<ModelEvent, { type: `xstate.done.actor.tools:${string}` }>;
export const isRunnerDone = (e: ModelEvent): e is RunnerDoneEvent =>
  e.type.startsWith('xstate.done.actor.tools:');

/** The time every model event happens at: the machine never reads the clock, so the model needs none. */
export const AT = 0;

/** The iteration limit the model and the replayed agents run with (small, so the limit is reached). */
export const MAX_ITERATIONS = 2;
/** The model extends the limit once, by one, so the state space stays finite. */
const MAX_EXTENDED = MAX_ITERATIONS + 1;
/** Text the scripted model streams (short: one delta). */
export const TEXT = 'Text';
/** What the user asks: long enough that a summary of it is shorter (else compacting saves nothing). */
export const USER_TEXT = `Please do the task. ${'Take care with every detail of it. '.repeat(12)}`;
/** What the scripted model's summary call answers. */
export const SUMMARY = 'The user asked for the task.';

/** Whether the model call about to be made may compact first: once a turn, with something to cover. */
export const canCompact = (c: AgentContext) =>
  c.compactedCall === null && compactionCut(c.messages, c.compaction) !== undefined;
/** The summary the scripted model's summary call gives for the conversation of `c`. */
const summaryOf = (c: AgentContext) => ({
  summary: SUMMARY,
  from: leadingSystemCount(c.messages),
  through: compactionCut(c.messages, c.compaction)!,
  tokensBefore: 200,
  tokensAfter: 100,
  model: 'gpt-4o-mini',
});
/** Whether a compaction now makes a summary call (else it fails at once: nothing to summarize). */
export const compactionCalls = (c: AgentContext) => compactionCut(c.messages, c.compaction) !== undefined;

// The calls the scripted model makes. `work` runs without approval (and starts early while the stream
// is still open), `deploy` needs approval, `ask_question` ends the turn with a question.
const call = (
  id: string,
  name: string,
  args: Record<string, unknown>,
  extra: Partial<ToolCallRequest> = {},
): ToolCallRequest => ({ id, name, argsText: JSON.stringify(args), args, needsApproval: false, ...extra });
export const CALLS = {
  w1: call('w1', 'work', { n: 1 }),
  w2: call('w2', 'work', { n: 2 }),
  d2: call('d2', 'deploy', { target: 'prod' }, { needsApproval: true }),
  q1: call('q1', 'ask_question', { question: 'Which file?' }, { loopBreaking: 'question' }),
  q2: call('q2', 'ask_question', { question: 'Which line?' }, { loopBreaking: 'question' }),
} as const;
/** Tools whose completion the test controls; the others (ask_question) finish on their own. */
export const CONTROLLED_TOOLS: ReadonlySet<string> = new Set(['work', 'deploy']);

function reply(content: string | null, calls: ToolCallRequest[], finishReason: string): LlmCallOutput {
  const message: LlmCallOutput['message'] = { role: 'assistant', content };
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.argsText },
    }));
  }
  return { message, calls, finishReason, usage: null, at: AT };
}

/** The model replies (the output `callLlm` resolves with), by event-case name. */
export const REPLIES = {
  oneCall: reply(null, [CALLS.w1], 'tool_calls'),
  twoCallsOneApproval: reply(null, [CALLS.w2, CALLS.d2], 'tool_calls'),
  askQuestion: reply(null, [CALLS.q1], 'tool_calls'),
  // Loop-breaking calls never start early, so these two run as one batch (one runner).
  twoQuestions: reply(null, [CALLS.q1, CALLS.q2], 'tool_calls'),
  finalAnswer: reply(TEXT, [], 'stop'),
  cutOff: reply(TEXT, [], 'length'),
  // A call starts early only once its arguments are certainly complete: here w1, because w2 began;
  // w2 is cut by the length limit.
  cutOffWithCall: reply(TEXT, [CALLS.w1, CALLS.w2], 'length'),
} as const;
export type ReplyName = keyof typeof REPLIES;

const llmError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
const TOOL_OUTPUT: Record<string, string> = {
  w1: 'done 1',
  w2: 'done 2',
  d2: 'deployed',
  q1: 'Which file?',
  q2: 'Which line?',
};
const resultOf = (c: ToolCallRequest): ToolResult => ({
  toolCallId: c.id,
  name: c.name,
  content: TOOL_OUTPUT[c.id] ?? '',
  isError: false,
  durationMs: 0,
});

/** Event constructors, named by event case. */
export const ev = {
  /** The start-up the machine asks itself for, with or without an `initialize` effect bound. */
  initialize: (effect: boolean): ModelEvent => ({ type: 'INITIALIZE', effect }),
  initDone: (): ModelEvent => ({ type: 'xstate.done.actor.initialize', output: {}, actorId: 'initialize' }),
  initError: (): ModelEvent => ({
    type: 'xstate.error.actor.initialize',
    error: new Error('init failed'),
    actorId: 'initialize',
  }),
  llmDone: (name: ReplyName): ModelEvent => ({
    type: 'xstate.done.actor.callLlm',
    output: REPLIES[name],
    actorId: 'callLlm',
  }),
  llmError: (): ModelEvent => ({
    type: 'xstate.error.actor.callLlm',
    error: llmError('400 scripted bad request', 'bad_request'),
    actorId: 'callLlm',
  }),
  llmDeadline: (): ModelEvent => ({
    type: 'xstate.error.actor.callLlm',
    error: llmError("the turn's time limit was reached during the model call", 'deadline_exceeded'),
    actorId: 'callLlm',
  }),
  delta: (): ModelEvent => ({ type: 'LLM.DELTA', delta: TEXT }),
  ready: (id: 'w1' | 'w2'): ModelEvent => ({ type: 'LLM.TOOL_CALL_READY', call: CALLS[id] }),
  reset: (): ModelEvent => ({ type: 'LLM.RESET', reason: 'retry', attempt: 2 }),
  context: (): ModelEvent => ({ type: 'LLM.CONTEXT', warning: { used: 90, max: 100 } }),
  // Cast: the retry notice is newer than some checkouts of agent-events.ts; offered only when handled.
  retry: (): ModelEvent =>
    ({
      type: 'LLM.RETRY',
      attempt: 1,
      maxAttempts: 4,
      delayMs: 1,
      kind: 'stream_cut',
      message: 'the stream was cut',
    }) as unknown as ModelEvent,
  toolFinished: (c: ToolCallRequest): ModelEvent => ({ type: 'TOOL.FINISHED', result: resultOf(c) }),
  /** A running call reports progress (`ctx.progress`): an event for listeners, the context unchanged. */
  progress: (c: ToolCallRequest): ModelEvent => ({
    type: 'TOOL.PROGRESS',
    toolCallId: c.id,
    name: c.name,
    message: 'halfway',
  }),
  /** A runner's done event: its output is the result of every call it ran (the last one's included). */
  runnerDone: (actorId: string, calls: ToolCallRequest[]): ModelEvent => ({
    type: `xstate.done.actor.${actorId}` as `xstate.done.actor.tools:${string}`,
    output: calls.map(resultOf),
    actorId,
  }),
  userMessage: (): ModelEvent => ({ type: 'USER_MESSAGE', text: USER_TEXT, at: AT }),
  // The request is past compactAt (the replay's prepareMessages says so for this call).
  compact: (): ModelEvent => ({ type: 'LLM.COMPACT' }),
  // agent.compact() after a turn: its summary came back.
  compacted: (c: AgentContext): ModelEvent => ({ type: 'COMPACTED', record: summaryOf(c), usage: null }),
  compactDone: (c: AgentContext): ModelEvent => ({
    type: 'xstate.done.actor.compact',
    output: { record: summaryOf(c), usage: null },
    actorId: 'compact',
  }),
  compactError: (): ModelEvent => ({
    type: 'xstate.error.actor.compact',
    error: new CompactionFailedError('the summary call failed: 400 scripted bad request', null, 200, 100),
    actorId: 'compact',
  }),
  approve: (id: string): ModelEvent => ({ type: 'APPROVE', toolCallId: id, at: AT }),
  reject: (id: string): ModelEvent => ({ type: 'REJECT', toolCallId: id, reason: 'not now', at: AT }),
  interrupt: (): ModelEvent => ({ type: 'INTERRUPT' }),
  resume: (): ModelEvent => ({ type: 'RESUME', at: AT }),
  extendLimit: (): ModelEvent => ({ type: 'EXTEND_LIMIT', by: 1, at: AT }),
  // The session could not be written (the replay fails a real write of the step before with ENOSPC).
  writeFailed: (): ModelEvent => ({
    type: 'WRITE_FAILED',
    message: 'appending 1 entry to the transcript failed: ENOSPC: no space left on device, write',
  }),
};

/** The event case a model event stands for (the brief's list, plus the actors' own signals). */
export function eventCase(event: ModelEvent): string {
  switch (event.type) {
    case 'xstate.done.actor.callLlm': {
      const name = (Object.keys(REPLIES) as ReplyName[]).find((k) => REPLIES[k] === event.output);
      return `reply:${name ?? 'other'}`;
    }
    case 'xstate.error.actor.callLlm':
      return event.error.code === 'deadline_exceeded' ? 'llm:deadline' : 'llm:error';
    case 'TOOL.FINISHED':
      return `tool-result:${event.result.name}`;
    case 'INITIALIZE':
      return event.effect ? 'INITIALIZE:effect' : 'INITIALIZE:none';
    default:
      // A runner's done event reports the result of the call that finished last.
      if (isRunnerDone(event))
        return `tool-result:${[...new Set(event.output.map((r) => r.name))].join('+')}`;
      return event.type;
  }
}

/** Whether the machine handles the retry notice the LLM actor sends before a retry's wait. */
const HAS_RETRY_NOTICE = agentMachine.root.states.Thinking!.transitions.has('LLM.RETRY');

const unfinished = (c: AgentContext) => c.batch.started.filter((id) => c.batch.results[id] === undefined);
const callById = (c: AgentContext, id: string) =>
  c.batch.calls.find((x) => x.id === id) ?? Object.values(CALLS).find((x) => x.id === id)!;
/** The calls a runner runs (the batch records them). */
const runnerCalls = (c: AgentContext, runner: string) => c.batch.runners[runner] ?? [];
/** Calls of the runner that are current and unanswered. */
const runnerUnfinished = (c: AgentContext, runner: string) =>
  runnerCalls(c, runner).filter((id) => c.batch.started.includes(id) && c.batch.results[id] === undefined);
const runners = (c: AgentContext) => Object.keys(c.batch.runners);

/**
 * The event that reports `x` finished: `TOOL.FINISHED` while other calls of its runner still run,
 * else (the runner's last call) the runner's done event, which carries every result.
 */
function finishEvent(c: AgentContext, x: ToolCallRequest): ModelEvent {
  const runner = runners(c).find((r) => runnerCalls(c, r).includes(x.id));
  if (!runner || runnerUnfinished(c, runner).length > 1) return ev.toolFinished(x);
  return doneEvent(c, runner);
}
const doneEvent = (c: AgentContext, runner: string) =>
  ev.runnerDone(
    runner,
    runnerCalls(c, runner).map((id) => callById(c, id)),
  );

/** agent.compact() after a turn, when there is something to summarize (else it sends nothing). */
const compactNow = (c: AgentContext) => (c.turn > 0 && compactionCalls(c) ? [ev.compacted(c)] : []);

/** Whether the snapshot's `initialize` actor runs (start-up with an effect, until it ends). */
export const initializing = (snapshot: Snapshot) =>
  snapshot.value === 'Initializing' && snapshot.children.initialize !== undefined;

/**
 * What can happen next in the real world, given the snapshot. Events the real world produces by
 * itself right after the previous step (a runner's done event, an auto-run tool finishing) are the
 * only ones offered while due, because a test cannot slip a user action in before them.
 */
export function menu(snapshot: Snapshot): ModelEvent[] {
  const c = snapshot.context;
  const value = snapshot.value as string;
  // A runner with nothing left to run (its calls answered or no longer current) is done at once.
  const finishedRunner = runners(c).find((r) => runnerUnfinished(c, r).length === 0);
  if (finishedRunner) return [doneEvent(c, finishedRunner)];
  const running = unfinished(c).map((id) => callById(c, id));
  const autoRunning = running.filter((x) => !CONTROLLED_TOOLS.has(x.name));
  // Auto-run tools of one batch finish in call order.
  if (autoRunning.length > 0) return [finishEvent(c, autoRunning[0]!)];
  const finish = running.map((x) => finishEvent(c, x));

  const extend = c.maxIterations < MAX_EXTENDED ? [ev.extendLimit()] : [];
  switch (value) {
    case 'Initializing':
      // Its `initialize` actor runs (spawned on INITIALIZE), or start-up has not begun.
      return initializing(snapshot)
        ? [ev.initDone(), ev.initError()]
        : [ev.initialize(true), ev.initialize(false)];
    case 'AwaitingInput':
      return [ev.userMessage()];
    case 'Thinking': {
      const tools = c.finalReason === null;
      // A call started early: its stream is already out, the reply follows at once.
      // A call started early: the reply ends (or the stream stalls, and the user or the deadline stops it).
      if (c.batch.started.includes('w1')) {
        if (c.partial !== '') return [ev.llmDone('cutOffWithCall')];
        return [ev.llmDone('oneCall'), ev.interrupt(), ev.llmDeadline()];
      }
      if (c.batch.started.includes('w2')) return [ev.llmDone('twoCallsOneApproval')];
      if (c.partial !== '') {
        return [
          ev.llmDone('finalAnswer'),
          ev.llmDone('cutOff'),
          ev.reset(),
          ...(HAS_RETRY_NOTICE ? [ev.retry()] : []),
          ev.interrupt(),
          ...(tools ? [ev.llmDeadline(), ev.ready('w1')] : []),
        ];
      }
      return [
        ev.context(),
        ev.delta(),
        ...(canCompact(c) ? [ev.compact()] : []),
        ev.llmError(),
        ev.interrupt(),
        ev.writeFailed(),
        ...extend,
        ...(tools
          ? [
              ev.ready('w1'),
              ev.ready('w2'),
              ev.llmDone('askQuestion'),
              ev.llmDone('twoQuestions'),
              ev.llmDeadline(),
            ]
          : []),
      ];
    }
    case 'Compacting':
      return compactionCalls(c)
        ? [ev.compactDone(c), ev.compactError(), ev.interrupt()]
        : [ev.compactError()];
    case 'ExecutingTool':
      return [...finish, ...running.map(ev.progress), ev.interrupt(), ev.writeFailed(), ...extend];
    case 'WaitingApproval':
      return [
        ...finish,
        ...c.batch.pending.flatMap((id) => [ev.approve(id), ev.reject(id)]),
        ev.interrupt(),
        ev.writeFailed(),
        ...extend,
      ];
    case 'Completed':
    case 'Interrupted':
      return [ev.userMessage(), ev.resume(), ev.writeFailed(), ...extend, ...compactNow(c)];
    case 'Error':
      return [ev.userMessage(), ev.resume(), ...extend, ...(c.initialized ? compactNow(c) : [])];
    default:
      return [];
  }
}

/**
 * The abstract state compared between model and real actor: the state value and the context fields
 * that decide what can happen next. The iteration is clamped at the limit (past it, behaviour is the
 * same), which keeps the space finite when RESUME re-enters Thinking again and again.
 */
export function abstractState(snapshot: Snapshot): string {
  const c = snapshot.context;
  const status = (id: string) =>
    c.batch.pending.includes(id) ? 'P' : c.batch.results[id] ? 'R' : c.batch.started.includes(id) ? 'S' : '-';
  return JSON.stringify([
    snapshot.value,
    initializing(snapshot),
    c.initialized,
    c.turn > 0,
    Math.min(c.iteration, c.maxIterations + 1),
    c.maxIterations,
    c.finalReason,
    c.terminateReason,
    c.partial !== '',
    c.batch.calls.map((x) => `${x.id}:${status(x.id)}`),
    [...c.batch.started].sort(),
    runners(c).sort(),
    c.compaction !== null,
    canCompact(c),
    compactionCalls(c),
  ]);
}

/** Vertex key of the traversal: the abstract state, marking a notice just taken (else a pure self-loop). */
function serializeState(snapshot: Snapshot, event: ModelEvent | undefined): string {
  const marker =
    event?.type === 'LLM.CONTEXT' || event?.type === ('LLM.RETRY' as string) ? `|${event.type}` : '';
  return abstractState(snapshot) + marker;
}

export type ModelPath = StatePath<Snapshot, ModelEvent>;

// ---- Transitions of the definition, and which ones a step takes ----

/** A stable name for a transition: source state, event type, target(s) and its index among siblings. */
export function transitionKey(t: AnyTransitionDefinition): string {
  const source = t.source;
  const siblings: AnyTransitionDefinition[] =
    t.eventType === '' ? (source.always ?? []) : (source.transitions.get(t.eventType) ?? []);
  const index = siblings.indexOf(t);
  const target = t.target?.map((n) => n.key).join(',') ?? '(none)';
  const event = t.eventType === '' ? 'always' : t.eventType;
  const sourceName = source.parent ? source.key : '(root)';
  return `${sourceName} --${event}${siblings.length > 1 ? `#${index}` : ''}--> ${target}`;
}

/** Every transition of the machine definition (root included), as keys. */
export function allTransitions(): string[] {
  const nodes = [agentMachine.root, ...getStateNodes(agentMachine.root)];
  return nodes.flatMap((node) => [
    ...[...node.transitions.values()].flat().map(transitionKey),
    ...(node.always ?? []).map(transitionKey),
  ]);
}

/** Every state node of the machine definition (top-level states; the machine has no sub-states). */
export function allStates(): string[] {
  return getStateNodes(agentMachine.root).map((n) => n.path.join('.'));
}

/**
 * Transitions a model step takes, found by re-running the pure transition with an actor scope whose
 * inspection hook records the microsteps.
 */
export function stepTransitions(from: Snapshot, event: ModelEvent): string[] {
  const taken: string[] = [];
  const empty = createEmptyActor();
  const system = Object.assign(Object.create(empty.system), {
    _sendInspectionEvent: (e: { type: string; _transitions?: AnyTransitionDefinition[] }) => {
      if (e.type === '@xstate.microstep') taken.push(...(e._transitions ?? []).map(transitionKey));
    },
  });
  const scope = {
    self: empty,
    logger: () => {},
    id: '',
    sessionId: 'model',
    defer: () => {},
    system,
    stopChild: () => {},
    emit: () => {},
    actionExecutor: () => {},
  };
  // biome-ignore lint/suspicious/noExplicitAny: the actor scope is an internal shape of xstate.
  agentMachine.transition(from, event as never, scope as any);
  return taken;
}

/** States (top-level) and transitions a path goes through, and its event cases. */
export interface PathCoverage {
  states: Set<string>;
  transitions: Set<string>;
  cases: Set<string>;
}

export function pathCoverage(path: ModelPath): PathCoverage {
  const cover: PathCoverage = { states: new Set(), transitions: new Set(), cases: new Set() };
  const steps = modelSteps(path);
  cover.states.add(String(steps[0]?.from.value ?? path.state.value));
  for (const step of steps) {
    for (const t of stepTransitions(step.from, step.event)) cover.transitions.add(t);
    cover.cases.add(eventCase(step.event));
    cover.states.add(String(step.to.value));
  }
  return cover;
}

/** A path as (from, event, to) triples, dropping the synthetic `xstate.init` step. */
export function modelSteps(path: ModelPath): { from: Snapshot; event: ModelEvent; to: Snapshot }[] {
  const out: { from: Snapshot; event: ModelEvent; to: Snapshot }[] = [];
  for (let i = 1; i < path.steps.length; i++) {
    out.push({ from: path.steps[i - 1]!.state, event: path.steps[i]!.event, to: path.steps[i]!.state });
  }
  return out;
}

export const traversalOptions = {
  events: menu,
  serializeState,
  limit: 50_000,
  input: {
    sessionId: 'model',
    messages: [{ role: 'system' as const, content: 'Be brief.' }],
    limits: { maxIterations: MAX_ITERATIONS },
  },
};

/** Shortest paths to every abstract state, plus each one-step extension that takes a transition no shortest path takes. */
export function generatePaths(): { shortest: ModelPath[]; extended: ModelPath[] } {
  const shortest = (getShortestPaths(agentMachine, traversalOptions as never) as ModelPath[])
    .filter(realizable)
    .map(concretize);
  const seen = new Set<string>();
  for (const p of shortest) {
    const cover = pathCoverage(p);
    for (const t of cover.transitions) seen.add(t);
    for (const k of cover.cases) seen.add(`case:${k}`);
  }
  const extended: ModelPath[] = [];
  for (const p of shortest) {
    for (const event of menu(p.state)) {
      if (event.type === 'WRITE_FAILED' && !writeCanFail(p.state, p.steps.at(-2)?.state)) continue;
      const taken = [...stepTransitions(p.state, event), `case:${eventCase(event)}`];
      if (taken.every((t) => seen.has(t))) continue;
      for (const t of taken) seen.add(t);
      const next = agentMachine.transition(p.state, event as never, mockScope()) as Snapshot;
      extended.push({ state: next, steps: [...p.steps, { state: next, event }], weight: p.weight + 1 });
    }
  }
  return { shortest, extended };
}

/**
 * The traversal keys vertices by abstract state, so a path's snapshots may come from different runs
 * that share it. This re-runs the path's events from its first snapshot, so each snapshot (messages
 * included) is the one this very path produces, and checks that the abstraction held on the way.
 */
export function concretize(path: ModelPath): ModelPath {
  let state = path.steps[0]!.state;
  const steps = [path.steps[0]!];
  for (const step of path.steps.slice(1)) {
    state = agentMachine.transition(state, step.event as never, mockScope()) as Snapshot;
    if (abstractState(state) !== abstractState(step.state))
      throw new Error(`the abstraction merged states that behave differently, at ${step.event.type}`);
    steps.push({ state, event: step.event });
  }
  return { state, steps, weight: path.weight };
}

/**
 * Whether the real world can produce the path: a retry notice is always followed by the stream reset
 * of the retry itself (the notice alone is a self-loop the menu cannot rule out from the snapshot);
 * a write fails only right after the step that issued it (see {@link writeCanFail}).
 */
function realizable(path: ModelPath): boolean {
  return path.steps.every((step, i) => {
    if (step.event.type === 'WRITE_FAILED')
      return writeCanFail(path.steps[i - 1]!.state, path.steps[i - 2]?.state);
    if (step.event.type !== ('LLM.RETRY' as string)) return true;
    const next = path.steps[i + 1]?.event.type;
    return next === undefined || next === 'LLM.RESET';
  });
}

/**
 * Whether the step that reached `at` (from `before`) wrote something a failure can end the turn with:
 * in a busy state, messages it appended (or the save of WaitingApproval, a rest point); in Completed
 * or Interrupted, only the writes of the turn that just came to rest (a turn_end), as the agent ends
 * no turn for a later write.
 */
export function writeCanFail(at: Snapshot, before: Snapshot | undefined): boolean {
  if (!before) return false;
  const entered = at.value !== before.value;
  const grew = at.context.messages.length > before.context.messages.length;
  switch (at.value) {
    case 'Thinking':
    case 'ExecutingTool':
      return grew;
    case 'WaitingApproval':
      return grew || entered;
    case 'Completed':
    case 'Interrupted':
      return entered;
    default:
      return false;
  }
}

/** The model path that takes `events` from the initial state. */
export function pathOf(events: ModelEvent[]): ModelPath {
  let state = agentMachine.getInitialSnapshot(mockScope(), traversalOptions.input as never) as Snapshot;
  const steps: ModelPath['steps'] = [{ state, event: { type: 'xstate.init' } as unknown as ModelEvent }];
  for (const event of events) {
    state = nextState(state, event);
    steps.push({ state, event });
  }
  return { state, steps, weight: events.length };
}

/** The pure transition of the machine. */
export function nextState(snapshot: Snapshot, event: ModelEvent): Snapshot {
  return agentMachine.transition(snapshot, event as never, mockScope()) as Snapshot;
}

function mockScope() {
  const empty = createEmptyActor();
  return {
    self: empty,
    logger: () => {},
    id: '',
    sessionId: 'model',
    defer: () => {},
    system: empty.system,
    stopChild: () => {},
    emit: () => {},
    actionExecutor: () => {},
    // biome-ignore lint/suspicious/noExplicitAny: the actor scope is an internal shape of xstate.
  } as any;
}

/**
 * Picks few paths that together cover everything the candidates cover (greedy set cover over states,
 * transitions and event cases; shorter paths win ties).
 */
export function selectPaths(candidates: ModelPath[]): ModelPath[] {
  const items = (cov: PathCoverage) => [
    ...[...cov.states].map((s) => `state:${s}`),
    ...[...cov.transitions].map((t) => `transition:${t}`),
    ...[...cov.cases].map((k) => `case:${k}`),
  ];
  const pool = candidates.map((path) => ({ path, items: new Set(items(pathCoverage(path))) }));
  const covered = new Set<string>();
  const chosen: ModelPath[] = [];
  for (;;) {
    let best: (typeof pool)[number] | undefined;
    let bestGain = 0;
    for (const entry of pool) {
      let gain = 0;
      for (const item of entry.items) if (!covered.has(item)) gain++;
      if (
        gain > bestGain ||
        (gain === bestGain && gain > 0 && best && entry.path.steps.length < best.path.steps.length)
      ) {
        best = entry;
        bestGain = gain;
      }
    }
    if (!best) break;
    chosen.push(best.path);
    for (const item of best.items) covered.add(item);
  }
  return chosen;
}
