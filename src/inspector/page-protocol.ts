// The server's side of the conversation with a page (messages typed in protocol.ts): the greeting
// and the answers to the page's commands. Batches are sent by the event recorder.
import { readCommand } from './client-message.js';
import type { ChartDefinition, ClientMessage, ServerMessage } from './protocol.js';
import { sessionSync, type TrackedSessions } from './tracked-sessions.js';

/** What a page gets when it connects: `hello` (the chart and the session list), then every session in full. */
export function greeting(chart: ChartDefinition, sessions: TrackedSessions): ServerMessage[] {
  const hello: ServerMessage = { t: 'hello', version: 1, chart, sessions: sessions.list() };
  return [
    hello,
    ...[...sessions.values()].map((s): ServerMessage => ({ t: 'sync', session: sessionSync(s) })),
  ];
}

/**
 * Answers one WebSocket frame of a page: a valid command is carried out ({@link answerCommand});
 * anything else gets an `ack` with `ok: false` when it had a usable `id`, else an `error`.
 */
export function answerFrame(
  frame: string,
  sessions: TrackedSessions,
  send: (message: ServerMessage) => void,
  fork?: ForkSaved,
): void {
  const read = readCommand(frame);
  if (read.ok) answerCommand(read.message, sessions, send, fork);
  else if (read.id !== undefined) send({ t: 'ack', id: read.id, ok: false, error: read.error });
  else send({ t: 'error', error: read.error });
}

/** Forks saved session `session` after entry `seq` and shows the fork; resolves to its id. */
export type ForkSaved = (session: string, seq: number) => Promise<string>;

/**
 * Carries out one (validated) command of a page and answers it through `send`: `sync` sends the session again;
 * `approve` / `reject` go to the running agent with the exact tool call id; `fork` forks a saved
 * session through `fork` (the server's store) and acks with the new id. Every command ends with an
 * `ack` carrying its id (with `error` when it could not be done).
 */
export function answerCommand(
  message: ClientMessage,
  sessions: TrackedSessions,
  send: (message: ServerMessage) => void,
  fork?: ForkSaved,
): void {
  const reply = (ok: boolean, error?: string) =>
    send({ t: 'ack', id: message.id, ok, ...(error ? { error } : {}) });
  const session = sessions.get(message.session);
  if (!session) {
    reply(false, `no session "${message.session}"`);
    return;
  }
  if (message.t === 'sync') {
    send({ t: 'sync', session: sessionSync(session) });
    reply(true);
    return;
  }
  if (message.t === 'fork') {
    if (session.kind !== 'saved') reply(false, 'only a saved session can be forked here');
    else if (!fork) reply(false, 'this inspector has no session store to fork into');
    else
      fork(session.id, message.seq).then(
        (forked) => send({ t: 'ack', id: message.id, ok: true, session: forked }),
        (error: unknown) => reply(false, error instanceof Error ? error.message : String(error)),
      );
    return;
  }
  if (session.kind !== 'live' || !session.attached) {
    reply(false, 'this session is not running here');
    return;
  }
  try {
    if (message.t === 'approve') session.agent.approve(message.toolCallId);
    else if (message.t === 'reject') {
      session.agent.reject(message.toolCallId, message.reason ?? 'rejected in the inspector');
    } else {
      const unknown: never = message;
      throw new Error(`unknown command ${String((unknown as { t: unknown }).t)}`);
    }
    reply(true);
  } catch (error) {
    reply(false, error instanceof Error ? error.message : String(error));
  }
}
