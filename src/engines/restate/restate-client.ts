import type { RestateSessionView, RestateTurnResult } from './restate-agent.js';

/** Where the agent's virtual object is served: Restate's ingress URL and the object's name. */
export interface RestateClientOptions {
  /** Restate's HTTP ingress, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The name the agent was registered under (`restateAgent(name, ...)`). */
  agent: string;
}

/** An error from Restate or on the way to it, naming the engine, the address and the call. */
export class RestateClientError extends Error {
  override readonly name = 'RestateClientError';
  constructor(
    message: string,
    /** The HTTP status Restate answered with; undefined when it could not be reached. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** What undici reports when a connection Restate had accepted closes before the answer. */
const LOST = new Set(['UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNRESET', 'EPIPE']);

/**
 * Talks to an agent served by Restate through its HTTP ingress, from any process: messages, answers
 * to approvals, interrupts and reads of the session.
 */
export function restateClient(options: RestateClientOptions) {
  const base = options.url.replace(/\/+$/, '');
  const call = async <T>(sessionId: string, handler: string, body?: unknown, suffix = ''): Promise<T> => {
    const where = `${base}/${encodeURIComponent(options.agent)}/${encodeURIComponent(sessionId)}/${handler}${suffix}`;
    let response: Response;
    try {
      response = await fetch(where, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body ?? null),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? String(error);
      if (cause?.code !== undefined && LOST.has(cause.code)) {
        // Restate took the call and went away before answering: it may have been received.
        throw new RestateClientError(
          `agentloop/restate: lost the connection to Restate at ${base} during ${handler} on session "${sessionId}" (${why}); the call may have reached Restate, and a turn it started goes on when Restate is back: read the session's state before sending it again`,
        );
      }
      throw new RestateClientError(
        `agentloop/restate: cannot reach Restate at ${base} (${handler} on session "${sessionId}"): ${why}`,
      );
    }
    const text = await response.text();
    if (!response.ok) {
      let message = text;
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? text;
      } catch {}
      throw new RestateClientError(
        `agentloop/restate: ${handler} on session "${sessionId}" of agent "${options.agent}" at ${base} failed (HTTP ${response.status}): ${message}`,
        response.status,
      );
    }
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  return {
    /** Sends a message and waits for the turn to rest (approvals answered meanwhile by others). */
    send: (sessionId: string, text: string) => call<RestateTurnResult>(sessionId, 'send', { text }),
    /** Sends a message without waiting: resolves once Restate accepted it. */
    post: (sessionId: string, text: string) =>
      call<{ invocationId: string }>(sessionId, 'send', { text }, '/send'),
    approve: (sessionId: string, toolCallId: string, approve: { always?: boolean } = {}) =>
      call<boolean>(sessionId, 'approve', { toolCallId, ...approve }),
    reject: (sessionId: string, toolCallId: string, reason?: string) =>
      call<boolean>(sessionId, 'reject', { toolCallId, ...(reason !== undefined ? { reason } : {}) }),
    /** Interrupts the running turn; false when none runs. */
    interrupt: (sessionId: string) => call<boolean>(sessionId, 'interrupt'),
    state: (sessionId: string) => call<RestateSessionView>(sessionId, 'state'),
    /** The last turn's outcome, or null before one ended. */
    result: (sessionId: string) => call<RestateTurnResult | null>(sessionId, 'result'),
  };
}

/** A client of {@link restateClient}. */
export type RestateClient = ReturnType<typeof restateClient>;
