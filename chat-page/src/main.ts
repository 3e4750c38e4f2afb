// The chat page served at `/` by `agentloop serve` (docs/serve.md): a conversation with the agent
// over AG-UI through AgentloopHttpAgent, with approvals answered by `resume[]` and a reconnect that
// picks a run up again after a lost connection. The page's fragment carries its settings:
// `#thread=<id>` (kept, so a reload continues the thread), `token=<bearer>` for a server started with
// `--token`, `agent=<name>` for a server with several agents.
import type { AgentSubscriber, RunAgentParameters } from '@ag-ui/client';
import { AgentloopHttpAgent } from '../../src/server/ag-ui/agentloop-http-agent.js';
import { type ApprovalAnswer, ChatView } from './chat-view.js';

/** A random id (crypto.randomUUID needs a secure context, which a LAN address over http is not). */
function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The HTTP status of a refused request (`@ag-ui/client` sets `status`); undefined for a network failure. */
function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const fragment = new URLSearchParams(location.hash.slice(1));
const knownThread = fragment.get('thread');
const threadId = knownThread || newId();
fragment.set('thread', threadId);
history.replaceState(null, '', `#${fragment}`);
let token = fragment.get('token') ?? undefined;
const agentName = fragment.get('agent') ?? 'default';

const view = new ChatView();
const agent = new AgentloopHttpAgent({
  url: new URL(`agents/${encodeURIComponent(agentName)}/runs`, location.href).toString(),
  threadId,
  headers: token ? { Authorization: `Bearer ${token}` } : {},
});

/** Whether the run followed now has ended (RUN_FINISHED or RUN_ERROR seen). */
let ended = false;
let busy = false;

const subscriber: AgentSubscriber = {
  onRunStartedEvent: () => {
    ended = false;
  },
  onTextMessageStartEvent: ({ event }) => view.textStart(event.messageId),
  onTextMessageContentEvent: ({ event }) => view.textDelta(event.messageId, event.delta),
  onToolCallStartEvent: ({ event }) => view.toolStart(event.toolCallId, event.toolCallName),
  onToolCallArgsEvent: ({ event }) => view.toolArgs(event.toolCallId, event.delta),
  onToolCallResultEvent: ({ event }) =>
    view.toolResult(
      event.toolCallId,
      typeof event.content === 'string' ? event.content : JSON.stringify(event.content),
    ),
  onStepStartedEvent: ({ event }) => view.step(event.stepName),
  onStepFinishedEvent: () => view.step(undefined),
  onStateChanged: ({ state }) => view.state(state),
  onRunFinishedEvent: (finished) => {
    ended = true;
    view.step(undefined);
    if (finished.outcome === 'interrupt') {
      view.approvals(finished.interrupts, answer);
      view.approvalsEnabled(!busy);
    } else if (finished.outcome === 'cancelled') view.notice('the run was cancelled');
  },
  onRunErrorEvent: ({ event }) => {
    ended = true;
    view.step(undefined);
    view.error(`the run ended: ${event.code ? `${event.code}: ` : ''}${event.message}`);
  },
};

function setBusy(value: boolean): void {
  busy = value;
  (document.getElementById('send') as HTMLButtonElement).disabled = value;
  view.approvalsEnabled(!value);
}

/** One run; a connection lost before its end is picked up again through the reconnect. */
async function runOnce(parameters: RunAgentParameters): Promise<void> {
  setBusy(true);
  ended = false;
  try {
    await agent.runAgent(parameters, subscriber);
  } catch (error) {
    const status = statusOf(error);
    if (!ended && status === 401 && askToken()) return runOnce(parameters);
    if (!ended && status !== undefined) {
      view.error(`refused: ${messageOf(error)}`);
      ended = true;
    }
  }
  if (!ended) await reconnect();
  setBusy(false);
}

/**
 * Follows the thread's run again after a lost connection: the events after the last one received,
 * then the rest of the run, from whichever server now answers (they share the store). Retries while
 * the server is away.
 */
async function reconnect(): Promise<void> {
  view.status('connection lost: reconnecting…');
  for (let attempt = 0; attempt < 60 && !ended; attempt++) {
    try {
      await agent.connectAgent({}, subscriber);
    } catch (error) {
      const status = statusOf(error);
      if (status !== undefined && status < 500) {
        view.error(`could not reconnect: ${messageOf(error)}`);
        return;
      }
    }
    if (!ended) await sleep(Math.min(250 * 2 ** attempt, 2000));
  }
  if (ended) view.notice('reconnected: the events missed while away are shown');
  else view.error('could not reconnect: reload the page to try again');
}

function askToken(): boolean {
  const given = window.prompt('This server needs its token (agentloop serve --token):');
  if (!given) return false;
  token = given.trim();
  agent.headers = { ...agent.headers, Authorization: `Bearer ${token}` };
  fragment.set('token', token);
  history.replaceState(null, '', `#${fragment}`);
  return true;
}

function answer(interruptId: string, reply: ApprovalAnswer): void {
  void runOnce({ resume: [{ interruptId, status: 'resolved', payload: reply }] });
}

const input = document.getElementById('input') as HTMLTextAreaElement;
document.getElementById('composer')!.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text || busy) return;
  input.value = '';
  view.user(text);
  agent.addMessage({ id: newId(), role: 'user', content: text });
  void runOnce({});
});
input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    (document.getElementById('composer') as HTMLFormElement).requestSubmit();
  }
});

// A thread named in the address (a reload): show its latest run, and follow it if it goes on.
if (knownThread) {
  setBusy(true);
  agent
    .connectAgent({}, subscriber)
    .catch(() => {})
    .finally(() => setBusy(false));
}
