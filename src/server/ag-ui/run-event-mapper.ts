import { type BaseEvent, EventType } from '@ag-ui/core';
import type { Message } from '../../llm/message.js';
import type { AgentStateName } from '../../machines/agent-states.js';
import type { AgentEvent, TerminateReason, ToolCallInfo } from '../../machines/emitted-events.js';
import type { Plan } from '../../tools/update-plan-tool.js';
import { messageId } from './message-ids.js';
import { approvalInterrupt, tokenUsage, toolActivity } from './run-events.js';

/** What the mapper reads of the agent it follows (the agent's own getters). */
export interface MappedAgent {
  readonly messages: readonly Message[];
  readonly pendingApprovals: ToolCallInfo[];
  readonly plan: Plan | null;
}

/** How a run ends, as the mapper reports it to the run handler. */
export type RunEnd =
  | { kind: 'finished'; outcome: 'success' | 'interrupt' | 'cancelled' }
  | { kind: 'error'; code: string };

/** The states shown as AG-UI steps (WaitingApproval ends the run with an interrupt instead). */
const STEPS: ReadonlySet<AgentStateName> = new Set(['Thinking', 'ExecutingTool', 'Compacting']);

/** Turn ends that are successes; every other terminate reason is a `RUN_ERROR` with the reason as its code. */
const SUCCESS: ReadonlySet<TerminateReason> = new Set(['completed', 'question']);

export interface RunMapperOptions {
  threadId: string;
  runId: string;
  /** The client speaks AG-UI 1.0: the `cancelled` outcome is sent as such (older clients get a `RUN_ERROR`). */
  protocol10: boolean;
  /** The run was cancelled on request: an interrupted turn ends `cancelled` rather than as an error. */
  cancelled: () => boolean;
  /** Scrubs text for the client (the agent's redactor, paths removed). */
  scrub: (text: string) => string;
  /** The client's own tools (frontend tools): their waiting calls end the run as pending, not as interrupts. */
  frontend?: ReadonlySet<string>;
  /** Text messages streamed and not yet ended, shared with the transcript's mapping, which ends them. */
  open: Set<string>;
}

/**
 * Maps one run of a session from the agent's bus to the AG-UI events that are not kept in the
 * transcript (and so carry no SSE id): the text and reasoning as they stream, steps for the busy
 * states, the plan and usage as state, a running tool's progress as its activity. It also decides how the run ends (`final`), which the run
 * handler writes to the transcript. Messages, tool calls and results come from the transcript
 * (transcript-events.ts). It reads the agent's messages and pending calls; it never drives the agent.
 */
export class RunEventMapper {
  readonly #agent: MappedAgent;
  readonly #options: RunMapperOptions;
  readonly #emit: (event: BaseEvent) => void;
  #text: string | undefined; // the open text message's id
  #reasoning: string | undefined; // the open reasoning message's id
  #step: AgentStateName | undefined;
  #attempt = 1;
  /**
   * Where the reply being streamed will sit: the conversation's length when Thinking was entered (a
   * chunk's event may be heard after the reply was appended, so the length then is not the place).
   */
  #replyIndex = 0;
  #usage = new Map<string, { input: number; output: number; cached: number }>();
  #state: Record<string, unknown> | undefined;
  #ended: RunEnd | undefined;
  #final: BaseEvent | undefined;

  constructor(agent: MappedAgent, options: RunMapperOptions, emit: (event: BaseEvent) => void) {
    this.#agent = agent;
    this.#options = options;
    this.#emit = emit;
  }

  /** How the run ended (undefined while it runs). */
  get ended(): RunEnd | undefined {
    return this.#ended;
  }

  /** Opens the run: `RUN_STARTED`, then the state as it stands. */
  start(extra: { parentRunId?: string; timestamp: number }): void {
    const { threadId, runId } = this.#options;
    this.#emit({
      type: EventType.RUN_STARTED,
      threadId,
      runId,
      ...(extra.parentRunId ? { parentRunId: extra.parentRunId } : {}),
      timestamp: extra.timestamp,
    });
    this.#sendState({ plan: this.#agent.plan }, extra.timestamp);
  }

  /** Feeds one bus event. */
  onEvent(event: AgentEvent): void {
    if (this.#ended) return;
    const at = event.timestamp;
    switch (event.type) {
      case 'content_chunk':
        this.#closeReasoning(at);
        if (this.#text === undefined) {
          this.#text = messageId(this.#replyIndex, this.#attempt);
          this.#options.open.add(this.#text);
          this.#emit({
            type: EventType.TEXT_MESSAGE_START,
            messageId: this.#text,
            role: 'assistant',
            timestamp: at,
          });
        }
        this.#emit({
          type: EventType.TEXT_MESSAGE_CONTENT,
          messageId: this.#text,
          delta: event.delta,
          timestamp: at,
        });
        return;
      case 'thinking':
        if (this.#reasoning === undefined) {
          this.#reasoning = `reasoning-${this.#replyIndex}.${this.#attempt}`;
          this.#emit({ type: EventType.REASONING_START, messageId: this.#reasoning, timestamp: at });
          this.#emit({
            type: EventType.REASONING_MESSAGE_START,
            messageId: this.#reasoning,
            role: 'reasoning',
            timestamp: at,
          });
        }
        this.#emit({
          type: EventType.REASONING_MESSAGE_CONTENT,
          messageId: this.#reasoning,
          delta: event.content,
          timestamp: at,
        });
        return;
      case 'stream_reset':
        if (this.#text !== undefined) {
          this.#options.open.delete(this.#text);
          this.#emit({ type: EventType.TEXT_MESSAGE_END, messageId: this.#text, timestamp: at });
          this.#text = undefined;
        }
        this.#closeReasoning(at);
        this.#attempt++;
        return;
      case 'state_change':
        this.#stateChange(event.previous, event.state, at);
        return;
      case 'model_call':
        if (event.usage) this.#addUsage(event.responseModel ?? '', event.usage);
        return;
      case 'plan_updated':
        this.#sendState({ plan: event.plan }, at);
        return;
      case 'usage':
        this.#sendState({ usage: event.totalUsage }, at);
        return;
      case 'tool_progress':
        this.#emit(toolActivity(event, this.#options.scrub));
        return;
      case 'turn_end':
        this.#turnEnd(event.terminateReason, event.response, at);
        return;
      default:
        return;
    }
  }

  /** Ends the run as a turn that had come to rest ended (a run taken over after its end was lost). */
  rested(reason: TerminateReason, response: string, at = Date.now()): void {
    if (!this.#ended) this.#turnEnd(reason, response, at);
  }

  /** Ends the run with an error that did not come from the turn (a failure of the server or the store). */
  fail(code: string, message: string, at = Date.now()): void {
    if (this.#ended) return;
    this.#closeAll(at);
    this.#end(
      { kind: 'error', code },
      { type: EventType.RUN_ERROR, code, message: this.#options.scrub(message), timestamp: at },
    );
  }

  #stateChange(previous: AgentStateName | null, state: AgentStateName, at: number): void {
    if (previous === 'Thinking') this.#replyAccepted(at);
    if (state === 'Thinking') this.#replyIndex = this.#agent.messages.length;
    if (this.#step !== undefined && this.#step !== state) {
      this.#emit({ type: EventType.STEP_FINISHED, stepName: this.#step, timestamp: at });
      this.#step = undefined;
    }
    if (STEPS.has(state) && this.#step === undefined) {
      this.#step = state;
      this.#emit({ type: EventType.STEP_STARTED, stepName: state, timestamp: at });
    }
    if (state === 'WaitingApproval') this.waiting(at);
  }

  /**
   * The turn waits: for approvals (the run ends with their interrupts) or only for the client's own
   * tools (the run ends `success`, naming their calls in `pendingToolCallIds` for a 1.0 client).
   */
  waiting(at: number): void {
    if (this.#ended) return;
    const frontend = this.#options.frontend ?? new Set<string>();
    const pending = this.#agent.pendingApprovals;
    const approvals = pending.filter((call) => !frontend.has(call.name));
    if (approvals.length > 0) {
      this.#interrupt(approvals, at);
      return;
    }
    this.#closeAll(at);
    const ids = pending.map((call) => call.toolCallId);
    const { threadId, runId } = this.#options;
    this.#end(
      { kind: 'finished', outcome: 'success' },
      {
        type: EventType.RUN_FINISHED,
        threadId,
        runId,
        ...(this.#options.protocol10 ? { outcome: { type: 'success', pendingToolCallIds: ids } } : {}),
        usage: tokenUsage(this.#usage),
        timestamp: at,
      },
    );
  }

  /** The model's reply is in the conversation: its reasoning ends; its text is ended by its transcript entry. */
  #replyAccepted(at: number): void {
    this.#closeReasoning(at);
    this.#text = undefined;
    this.#attempt = 1;
  }

  #interrupt(pending: readonly ToolCallInfo[], at: number): void {
    this.#closeAll(at);
    this.#end(
      { kind: 'finished', outcome: 'interrupt' },
      {
        type: EventType.RUN_FINISHED,
        threadId: this.#options.threadId,
        runId: this.#options.runId,
        outcome: { type: 'interrupt', interrupts: pending.map(approvalInterrupt) },
        usage: tokenUsage(this.#usage),
        timestamp: at,
      },
    );
  }

  #turnEnd(reason: TerminateReason, response: string, at: number): void {
    this.#closeAll(at);
    const { threadId, runId } = this.#options;
    if (SUCCESS.has(reason)) {
      this.#end(
        { kind: 'finished', outcome: 'success' },
        {
          type: EventType.RUN_FINISHED,
          threadId,
          runId,
          result: this.#options.scrub(response),
          usage: tokenUsage(this.#usage),
          timestamp: at,
        },
      );
      return;
    }
    if (reason === 'interrupted' && this.#options.cancelled() && this.#options.protocol10) {
      this.#end(
        { kind: 'finished', outcome: 'cancelled' },
        {
          type: EventType.RUN_FINISHED,
          threadId,
          runId,
          outcome: { type: 'cancelled' },
          usage: tokenUsage(this.#usage),
          timestamp: at,
        },
      );
      return;
    }
    const code = reason === 'interrupted' && this.#options.cancelled() ? 'cancelled' : reason;
    const message = response.trim() !== '' ? response : `the turn ended: ${reason}`;
    this.#end(
      { kind: 'error', code },
      {
        type: EventType.RUN_ERROR,
        code,
        message: this.#options.scrub(message),
        usage: tokenUsage(this.#usage),
        timestamp: at,
      },
    );
  }

  #end(end: RunEnd, event: BaseEvent): void {
    this.#ended = end;
    this.#final = event;
  }

  /** The run's last event (`RUN_FINISHED` or `RUN_ERROR`), once it has ended; the handler sends it. */
  get final(): BaseEvent | undefined {
    return this.#final;
  }

  #closeAll(at: number): void {
    this.#closeReasoning(at);
    if (this.#step !== undefined) {
      this.#emit({ type: EventType.STEP_FINISHED, stepName: this.#step, timestamp: at });
      this.#step = undefined;
    }
  }

  #closeReasoning(at: number): void {
    if (this.#reasoning === undefined) return;
    this.#emit({ type: EventType.REASONING_MESSAGE_END, messageId: this.#reasoning, timestamp: at });
    this.#emit({ type: EventType.REASONING_END, messageId: this.#reasoning, timestamp: at });
    this.#reasoning = undefined;
  }

  #addUsage(
    model: string,
    usage: { promptTokens: number; completionTokens: number; cachedPromptTokens?: number },
  ): void {
    const sum = this.#usage.get(model) ?? { input: 0, output: 0, cached: 0 };
    sum.input += usage.promptTokens;
    sum.output += usage.completionTokens;
    sum.cached += usage.cachedPromptTokens ?? 0;
    this.#usage.set(model, sum);
  }

  /** The run's state: a snapshot first, then JSON Patch deltas of the keys that changed. */
  #sendState(change: Record<string, unknown>, at: number): void {
    if (this.#state === undefined) {
      this.#state = { plan: null, usage: null, ...change };
      this.#emit({ type: EventType.STATE_SNAPSHOT, snapshot: this.#state, timestamp: at });
      return;
    }
    const delta = Object.entries(change).map(([key, value]) => ({
      op: 'replace' as const,
      path: `/${key}`,
      value,
    }));
    this.#state = { ...this.#state, ...change };
    this.#emit({ type: EventType.STATE_DELTA, delta, timestamp: at });
  }
}
