import { randomUUID } from 'node:crypto';
import type {
  CallToolResult,
  ElicitRequestFormParams,
  ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Agent, ExecutionResult } from '../../agent/agent.js';
import { progressText } from '../../events/progress-text.js';
import type { AgentEvent, ToolCallInfo } from '../../machines/emitted-events.js';
import type { ApprovalPolicy } from '../../tools/tool-call.js';
import { type AgentRuntimeOptions, type AgentSource, agentOptionsFor } from '../agent-source.js';
import { scrubForClient } from '../client-text.js';
import { HttpError } from '../http-error.js';
import { watchInbox } from '../run-cancel-inbox.js';
import type { SessionStore } from '../session-imports.js';
import { openThread, type ThreadContext, threadRecord } from '../thread-sessions.js';
import { approvalElicitation, decisionOf } from './approval-elicitation.js';
import { askCallResult, askOutput, askRefusal, type CallOutcomes, turnToolCalls } from './ask-result.js';
import type { RunningSessions, RunningTurn } from './running-sessions.js';

/** One agent served as the tool `toolName`, and what its turns need. */
export interface AskTarget {
  /** The agent's name (shown in approval questions). */
  name: string;
  /** `ask_<name>`. */
  toolName: string;
  source: AgentSource;
  store: SessionStore;
  runtime: AgentRuntimeOptions;
  /** Tools whose calls run without asking. */
  allow: ReadonlySet<string>;
  /** The longest message a call may carry, in characters. */
  maxMessageChars: number;
  /** How long an approval question waits for the client's answer before the turn is interrupted. */
  approvalTimeoutMs: number;
  /** Sessions a turn runs on in this process (shared by every client of the process). */
  running: RunningSessions;
  /** How often a turn looks at its session's inbox for entries other processes post for it (ms). */
  pollMs: number;
}

/** What the MCP request gives a turn: who asks, its cancel signal, progress, the elicitation channel. */
export interface AskCall {
  principal: string;
  signal: AbortSignal;
  /** Sends a progress notification (absent when the client sent no progressToken). */
  progress?: ((message: string) => void) | undefined;
  /** Asks the client (absent when the client does not support form elicitation). */
  elicit?: ((params: ElicitRequestFormParams, timeoutMs: number) => Promise<ElicitResult>) | undefined;
}

/** The arguments of `ask_<agent>`, as the input schema checked them. */
export interface AskArgs {
  message: string;
  session?: string | undefined;
}

/**
 * One call of `ask_<agent>`: the session opened (restored when given, new when not), the message
 * sent, the turn run to rest with progress, approvals asked as elicitations (or refused when the
 * client cannot be asked), the client's cancel as an interrupt; the result the turn's answer. Bad
 * input is a tool error naming what is wrong, before anything is written.
 */
export async function runAsk(target: AskTarget, args: AskArgs, call: AskCall): Promise<CallToolResult> {
  if (args.message.trim() === '') {
    return askRefusal(target.toolName, '`message` is empty: send the text for the agent');
  }
  if (args.message.length > target.maxMessageChars) {
    return askRefusal(
      target.toolName,
      `\`message\` has ${args.message.length} characters; the limit is ${target.maxMessageChars}`,
    );
  }
  const sessionId = args.session ?? randomUUID();
  // A free session is claimed at once: no await (and no promise) unless a cancelled turn is coming to rest.
  let claimed = target.running.claim(sessionId);
  if (claimed instanceof Promise) claimed = await claimed;
  if (!claimed) return askRefusal(target.toolName, busy(sessionId));
  let agent: Agent | undefined;
  try {
    // A session this call named (a new random id) has nothing in the store yet: nothing to read.
    let record: Awaited<ReturnType<typeof threadRecord>>;
    try {
      record =
        args.session === undefined ? undefined : await threadRecord(target.store, sessionId, call.principal);
    } catch (error) {
      return askRefusal(target.toolName, sessionProblem(error, sessionId));
    }
    if (args.session !== undefined && record === undefined) {
      return askRefusal(
        target.toolName,
        `no session "${sessionId}" in the store; leave \`session\` out to start a new conversation`,
      );
    }
    if (call.signal.aborted) return askRefusal(target.toolName, CANCELLED_BEFORE_TURN);
    try {
      agent = await openThread(threadContext(target, call.principal), sessionId, record);
    } catch (error) {
      return askRefusal(target.toolName, sessionProblem(error, sessionId));
    }
    // A cancel that came while the session opened (the turn listens for one only from its start).
    if (call.signal.aborted) return askRefusal(target.toolName, CANCELLED_BEFORE_TURN);
    // A new session's id is known to nobody else before the answer: no inbox watch (and no timer) for it.
    if (args.session === undefined) return await turn(target, agent, args.message, call, claimed, undefined);
    // What another process sharing the store posts to this session's inbox while the turn runs: an
    // interrupt (`agentloop send --interrupt`) ends the turn Interrupted, and entries for the transcript
    // (an A2A push config set there) are written here, by the session's one writer.
    const running = agent;
    const turnClaim = claimed;
    const ended: InboxInterrupt = {};
    const inbox = watchInbox(target.store, sessionId, {
      pollMs: target.pollMs,
      write: (entries) => target.store.appendTranscript(sessionId, entries),
      // No one can name this call's run: an interrupt counts when it names none and came during the turn.
      cancel: {
        runId: randomUUID(),
        onCancel: (reason) => {
          ended.reason = reason;
          turnClaim.cancelled();
          running.interrupt(reason);
        },
      },
    });
    try {
      await inbox.ready;
      return await turn(target, agent, args.message, call, claimed, ended);
    } finally {
      await inbox.stop();
    }
  } finally {
    if (agent) await agent.close().catch(ignore);
    claimed.release();
  }
}

/**
 * What `openThread` needs of a target for `principal`: made at its first call and kept (the allow list's
 * source wrapper with it), not spread again every call.
 */
function threadContext(target: AskTarget, principal: string): ThreadContext {
  let context = threadContexts.get(target);
  if (context?.principal !== principal) {
    // Without an allow list the source goes as it is (one options layer and one closure fewer).
    context =
      target.allow.size === 0
        ? { store: target.store, source: target.source, runtime: target.runtime, principal }
        : {
            store: target.store,
            source: withAllowList(target.source, target.runtime, target.allow),
            runtime: {},
            principal,
          };
    threadContexts.set(target, context);
  }
  return context;
}

const threadContexts = new WeakMap<AskTarget, ThreadContext>();

function ignore(): void {}

/** The refusal of a call its client cancelled before its turn started (checked before and after the session opens). */
const CANCELLED_BEFORE_TURN = 'the call was cancelled before the turn started';

/** The cancel listener's options, one object for every call. */
const ONCE = { once: true } as const;

/** No tool call had an outcome (a turn without tool calls): shared, never written to. */
const NO_OUTCOMES: CallOutcomes = new Map();

/** One turn's listeners: what its events say of its calls, its progress, its approvals, the client's cancel. */
class TurnWatch {
  /** What the events said of the turn's calls (made at the first one). */
  outcomes: Map<string, 'ok' | 'error' | 'declined'> | undefined;
  /** The first refusal an approval made (the turn's text then says why). */
  refusal: string | undefined;
  #approvals: ApprovalAsker | undefined;

  constructor(
    private readonly target: AskTarget,
    private readonly agent: Agent,
    private readonly call: AskCall,
    private readonly claimed: RunningTurn,
  ) {}

  /** The approval questions asked so far (none: undefined). */
  get approvals(): ApprovalAsker | undefined {
    return this.#approvals;
  }

  readonly toolCallEnd = (e: AgentEvent<'tool_call_end'>): void => {
    this.outcomes ??= new Map();
    if (this.outcomes.get(e.toolCallId) !== 'declined')
      this.outcomes.set(e.toolCallId, e.error ? 'error' : 'ok');
    this.call.progress?.(`${e.name} ${e.error ? 'failed' : 'done'}`);
  };

  readonly approvalResolved = (e: AgentEvent<'approval_resolved'>): void => {
    if (e.approved) return;
    this.outcomes ??= new Map();
    this.outcomes.set(e.toolCallId, 'declined');
  };

  readonly approvalRequested = (e: AgentEvent<'approval_requested'>): void => {
    this.call.progress?.(`waiting for approval of ${e.pending.map((p) => p.name).join(', ')}`);
    this.#approvals ??= new ApprovalAsker(this.target, this.agent, this.call, (text) => {
      this.refusal ??= text;
    });
    this.#approvals.ask(e.pending);
  };

  readonly cancel = (): void => {
    this.claimed.cancelled();
    this.agent.interrupt('cancelled by the MCP client');
  };
}

async function turn(
  target: AskTarget,
  agent: Agent,
  message: string,
  call: AskCall,
  claimed: RunningTurn,
  inbox: InboxInterrupt | undefined,
): Promise<CallToolResult> {
  const forClient = (text: string) => scrubForClient(text, agent.redactor.redact);
  // A session left waiting for approval (its process died mid-question) rests Interrupted first.
  if (agent.state === 'WaitingApproval')
    agent.interrupt('a new message came over MCP while approvals waited');
  const before = agent.messages.length;
  const watch = new TurnWatch(target, agent, call, claimed);
  const progress = call.progress;
  const stop = [
    agent.on('tool_call_end', watch.toolCallEnd),
    agent.on('approval_resolved', watch.approvalResolved),
    agent.on('approval_requested', watch.approvalRequested),
  ];
  // Events only progress reads: a client that sent no progressToken has the machine build none of them.
  if (progress) {
    stop.push(
      agent.on('iteration', (e) => progress(`thinking (model call ${e.iteration})`)),
      agent.on('tool_call_start', (e) => progress(`running ${e.name}`)),
      agent.on('tool_progress', (e) => {
        const text = progressText(e);
        if (text) progress(forClient(`${e.name}: ${text}`));
      }),
    );
  }
  call.signal.addEventListener('abort', watch.cancel, ONCE);
  let result: ExecutionResult;
  try {
    result = await agent.send(message);
    if (watch.approvals?.asking) await watch.approvals.idle();
    await agent.flush();
  } catch (error) {
    return askRefusal(target.toolName, forClient(error instanceof Error ? error.message : String(error)));
  } finally {
    call.signal.removeEventListener('abort', watch.cancel);
    for (const off of stop) off();
  }
  const added = agent.messages.slice(before);
  const calls = turnToolCalls(added, watch.outcomes ?? NO_OUTCOMES, forClient, (v) =>
    agent.redactor.redactValue(v),
  );
  const output = askOutput(agent.sessionId, agent.state, result, calls, forClient);
  let refusal = watch.refusal;
  if (inbox?.reason !== undefined && output.state === 'Interrupted') {
    refusal ??= `${target.toolName}: the turn ended interrupted: ${forClient(inbox.reason)}`;
  }
  return askCallResult(target.toolName, output, refusal);
}

/** Why an interrupt from the session's inbox ended the turn (set when one did). */
interface InboxInterrupt {
  reason?: string;
}

/**
 * Asks the client about each call waiting for approval, one at a time, and answers the agent. A client
 * that cannot be asked (no elicitation) or does not answer gets the turn interrupted, the call unrun.
 */
class ApprovalAsker {
  #queue: ToolCallInfo[] = [];
  #asking: Promise<void> | undefined;

  constructor(
    private readonly target: AskTarget,
    private readonly agent: Agent,
    private readonly call: AskCall,
    private readonly refused: (text: string) => void,
  ) {}

  ask(pending: readonly ToolCallInfo[]): void {
    this.#queue.push(...pending);
    // After the machine's transition: the answers are sent from outside the event's dispatch.
    this.#asking ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#drain());
  }

  /** Whether a question is open (or about to be asked). */
  get asking(): boolean {
    return this.#asking !== undefined;
  }

  /** Resolves once no question is open. */
  async idle(): Promise<void> {
    while (this.#asking) await this.#asking;
  }

  async #drain(): Promise<void> {
    try {
      for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
        if (!this.agent.pendingApprovals.some((p) => p.toolCallId === next!.toolCallId)) continue;
        if (!(await this.#askOne(next))) {
          this.#queue = [];
          return;
        }
      }
    } finally {
      this.#asking = undefined;
    }
  }

  /** Asks about one call; false when the turn was interrupted instead. */
  async #askOne(waiting: ToolCallInfo): Promise<boolean> {
    const { agent, target, call } = this;
    if (!call.elicit) {
      this.refused(
        `${target.toolName}: the agent's call to the tool "${waiting.name}" needs approval, and this MCP client cannot be asked (it does not support elicitation), so it was not run. ` +
          `To allow it, start the server with --allow ${waiting.name} (or --yes for every tool; createMcpServer's \`allow\` option), or use a client that supports elicitation.`,
      );
      agent.interrupt(`the tool "${waiting.name}" needs approval and the MCP client cannot be asked`);
      return false;
    }
    const shown = agent.redactor.redactValue(waiting) as ToolCallInfo;
    let answer: ElicitResult;
    try {
      answer = await call.elicit(approvalElicitation(target.name, shown), target.approvalTimeoutMs);
    } catch (error) {
      if (!call.signal.aborted) {
        const why = error instanceof Error ? error.message : String(error);
        this.refused(
          `${target.toolName}: the approval of the tool "${waiting.name}" got no answer from the MCP client (${scrubForClient(why, agent.redactor.redact)}), so it was not run`,
        );
        agent.interrupt(`the approval of "${waiting.name}" got no answer`);
      }
      return false;
    }
    if (!agent.pendingApprovals.some((p) => p.toolCallId === waiting.toolCallId)) return true;
    const decision = decisionOf(answer);
    if (decision.approved) agent.approve(waiting.toolCallId);
    else agent.reject(waiting.toolCallId, decision.reason);
    return true;
  }
}

/** The source with the allow list on top of its own approval policy: the listed tools never ask. */
function withAllowList(
  source: AgentSource,
  runtime: AgentRuntimeOptions,
  allow: ReadonlySet<string>,
): AgentSource {
  return async (sessionId) => {
    const options = await agentOptionsFor(source, sessionId, runtime);
    const own = options.approval;
    const approval: ApprovalPolicy = (request) => {
      if (allow.has(request.name)) return false;
      if (typeof own === 'function') return own(request);
      return own === 'always' ? true : own === 'never' ? false : undefined;
    };
    return { ...options, approval };
  };
}

function busy(sessionId: string): string {
  return `session "${sessionId}" is running a turn; wait for its answer (or cancel that call) first`;
}

/** The client's words for a session the store refused. */
function sessionProblem(error: unknown, sessionId: string): string {
  if (!(error instanceof HttpError)) return `session "${sessionId}" could not be opened`;
  switch (error.code) {
    case 'thread_forbidden':
      return `session "${sessionId}" belongs to another caller`;
    case 'bad_input':
      return `\`session\` ${JSON.stringify(sessionId)} cannot be a session id (letters, digits, -, _ and .)`;
    case 'thread_busy':
      return `session "${sessionId}" is being run by another process; try again when its turn ends`;
    default:
      return `session "${sessionId}" could not be read from the session store`;
  }
}
