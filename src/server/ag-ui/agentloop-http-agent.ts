import {
  HttpAgent,
  type HttpAgentConfig,
  type RunAgentInput,
  runHttpRequest,
  transformHttpEventStream,
} from '@ag-ui/client';

/**
 * `@ag-ui/client`'s `HttpAgent` for an agentloop server, with the reconnect `HttpAgent` 1.0 lacks
 * (`connect()`): it remembers the SSE id (a transcript seq) of the last event it received, and
 * `connectAgent()` asks `GET …/threads/<id>/events` for everything after it, then the run as it goes
 * on, from any server sharing the store. A text message cut off mid-stream is dropped before the
 * reconnect: the server sends it again whole. `url` is the run endpoint (`…/agents/<name>/runs`).
 */
export class AgentloopHttpAgent extends HttpAgent {
  /** The id of the last event received that had one (undefined before any). */
  lastEventId: string | undefined;
  readonly #partial = new Set<string>();

  constructor(config: HttpAgentConfig) {
    super(config);
    const fetchOf = this.fetch;
    this.fetch = async (url, init) =>
      tapEventIds(await fetchOf(url, init), (id) => {
        this.lastEventId = id;
      });
    this.subscribe({
      // A run that started answered the open interrupts (the server refuses a run that does not): a
      // reconnect after it was cut must not be refused by the client for interrupts already answered.
      onRunStartedEvent: () => {
        this.pendingInterrupts = [];
      },
      onTextMessageStartEvent: ({ event }) => void this.#partial.add(event.messageId),
      onTextMessageEndEvent: ({ event }) => void this.#partial.delete(event.messageId),
    });
  }

  /** The thread's event stream after `lastEventId`. */
  protected override connect(_input: RunAgentInput): ReturnType<HttpAgent['run']> {
    const events = this.url.replace(/\/runs\/?$/, `/threads/${encodeURIComponent(this.threadId)}/events`);
    const headers: Record<string, string> = { ...this.headers, Accept: 'text/event-stream' };
    if (this.lastEventId !== undefined) headers['Last-Event-ID'] = this.lastEventId;
    return transformHttpEventStream(
      runHttpRequest(() =>
        this.fetch(events, { method: 'GET', headers, signal: this.abortController.signal }),
      ),
    );
  }

  /** Reconnects to the thread's run (drops text messages that were cut off mid-stream first). */
  override async connectAgent(
    ...args: Parameters<HttpAgent['connectAgent']>
  ): ReturnType<HttpAgent['connectAgent']> {
    if (this.#partial.size > 0) {
      this.setMessages(this.messages.filter((message) => !this.#partial.has(message.id)));
      this.#partial.clear();
    }
    this.abortController = new AbortController();
    return super.connectAgent(...args);
  }
}

/** The response with its body passed through unchanged, `onId` hearing each SSE `id:` as it goes by. */
function tapEventIds(response: Response, onId: (id: string) => void): Response {
  const type = response.headers.get('content-type') ?? '';
  if (!response.body || !type.startsWith('text/event-stream')) return response;
  const decoder = new TextDecoder();
  let carry = '';
  const tap = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      carry += decoder.decode(chunk, { stream: true });
      const lines = carry.split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('id:')) onId(line.slice(3).trim());
      controller.enqueue(chunk);
    },
  });
  const tapped = new Response(response.body.pipeThrough(tap), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  return quietCancel(tapped);
}

/**
 * The response with a body whose readers' `cancel()` never rejects. `@ag-ui/client` (1.0 and 0.0.x)
 * cancels the reader when its stream ends and rethrows what the cancel rejects with: after the server
 * went away mid-stream (its process died), that is an unhandled rejection, which ends a Node client.
 * The error itself still reaches the run (it fails, and `connectAgent()` picks it up again).
 */
function quietCancel(response: Response): Response {
  const body = response.body!;
  const getReader = body.getReader.bind(body) as () => ReadableStreamDefaultReader<Uint8Array>;
  const quiet = Object.assign(Object.create(body) as ReadableStream<Uint8Array>, {
    getReader: () => {
      const reader = getReader();
      return {
        read: () => reader.read(),
        releaseLock: () => reader.releaseLock(),
        cancel: (reason?: unknown) => reader.cancel(reason).catch(() => {}),
        closed: reader.closed,
      } satisfies ReadableStreamDefaultReader<Uint8Array>;
    },
  });
  Object.defineProperty(response, 'body', { value: quiet });
  return response;
}
