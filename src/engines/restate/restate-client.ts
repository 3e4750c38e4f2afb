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

/** What one call may carry besides its arguments. */
export interface RestateCallOptions {
  /**
   * Stops waiting for Restate's answer when aborted (the call rejects with a {@link RestateClientError}).
   * What Restate already took goes on: a turn that `send` started runs to its end without this client.
   */
  signal?: AbortSignal;
}

/** What undici reports when a connection Restate had accepted closes before the answer. */
const LOST = new Set(['UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNRESET', 'EPIPE']);

/**
 * Talks to an agent served by Restate through its HTTP ingress, from any process: messages, answers
 * to approvals, interrupts and reads of the session.
 */
export function restateClient(options: RestateClientOptions) {
  const base = options.url.replace(/\/+$/, '');
  const call = async <T>(
    sessionId: string,
    handler: string,
    body: unknown,
    callOptions: RestateCallOptions | undefined,
    suffix = '',
  ): Promise<T> => {
    const where = `${base}/${encodeURIComponent(options.agent)}/${encodeURIComponent(sessionId)}/${handler}${suffix}`;
    const signal = callOptions?.signal;
    const aborted = () =>
      new RestateClientError(
        `agentloop/restate: ${handler} on session "${sessionId}" at ${base} stopped waiting (${String(signal?.reason ?? 'aborted')}); what Restate already took goes on: read the session's state to see where it stands`,
      );
    let response: Response;
    let text: string;
    try {
      response = await fetch(where, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body ?? null),
        ...(signal ? { signal } : {}),
      });
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw aborted();
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
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new RestateClientError(
        `agentloop/restate: ${handler} on session "${sessionId}" of agent "${options.agent}" at ${base} answered with text that is not JSON (HTTP ${response.status}, ${text.length} characters: ${JSON.stringify(text.slice(0, 80))})`,
        response.status,
      );
    }
  };
  return {
    /** Sends a message and waits for the turn to rest (approvals answered meanwhile by others). */
    send: (sessionId: string, text: string, callOptions?: RestateCallOptions) =>
      call<RestateTurnResult>(sessionId, 'send', { text }, callOptions),
    /** Sends a message without waiting: resolves once Restate accepted it. */
    post: (sessionId: string, text: string, callOptions?: RestateCallOptions) =>
      call<{ invocationId: string }>(sessionId, 'send', { text }, callOptions, '/send'),
    approve: (
      sessionId: string,
      toolCallId: string,
      approve: { always?: boolean } = {},
      callOptions?: RestateCallOptions,
    ) => call<boolean>(sessionId, 'approve', { toolCallId, ...approve }, callOptions),
    reject: (sessionId: string, toolCallId: string, reason?: string, callOptions?: RestateCallOptions) =>
      call<boolean>(
        sessionId,
        'reject',
        { toolCallId, ...(reason !== undefined ? { reason } : {}) },
        callOptions,
      ),
    /** Interrupts the running turn; false when none runs. */
    interrupt: (sessionId: string, callOptions?: RestateCallOptions) =>
      call<boolean>(sessionId, 'interrupt', undefined, callOptions),
    state: (sessionId: string, callOptions?: RestateCallOptions) =>
      call<RestateSessionView>(sessionId, 'state', undefined, callOptions),
    /** The last turn's outcome, or null before one ended. */
    result: (sessionId: string, callOptions?: RestateCallOptions) =>
      call<RestateTurnResult | null>(sessionId, 'result', undefined, callOptions),
  };
}

/** A client of {@link restateClient}. */
export type RestateClient = ReturnType<typeof restateClient>;
