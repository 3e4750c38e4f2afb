import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BaseEvent } from '@ag-ui/core';
import { AGUI_MEDIA_TYPE, EventEncoder } from '@ag-ui/encoder';

/**
 * One client's stream of AG-UI events: SSE (`text/event-stream`, each event with its `id:` when it
 * has one) or AG-UI's protobuf framing when the client's `Accept` asks for it (@ag-ui/encoder).
 * A client that stops reading is cut off once `maxBuffered` bytes wait for it: the run goes on
 * without it (it may reconnect), and the server's memory stays bounded.
 */
export class EventStream {
  readonly #res: ServerResponse;
  readonly #encoder: EventEncoder;
  readonly #protobuf: boolean;
  readonly #maxBuffered: number;
  #open = true;

  constructor(req: IncomingMessage, res: ServerResponse, maxBuffered: number) {
    this.#res = res;
    this.#maxBuffered = maxBuffered;
    // Protobuf only when the client names AG-UI's media type (`*/*` would pick it otherwise).
    const accept = req.headers.accept ?? '';
    this.#encoder = new EventEncoder({
      accept: accept.includes(AGUI_MEDIA_TYPE) ? accept : 'text/event-stream',
    });
    this.#protobuf = this.#encoder.getContentType() !== 'text/event-stream';
    res.on('close', () => {
      this.#open = false;
    });
    res.writeHead(200, {
      'content-type': this.#encoder.getContentType(),
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
  }

  /** Whether the client is still connected. */
  get open(): boolean {
    return this.#open;
  }

  /** Sends one event (nothing once the client is gone). */
  send(event: BaseEvent, id?: number): void {
    if (!this.#open) return;
    if (this.#protobuf) this.#res.write(this.#encoder.encodeBinary(event));
    else
      this.#res.write(
        id === undefined ? this.#encoder.encodeSSE(event) : `id: ${id}\n${this.#encoder.encodeSSE(event)}`,
      );
    if (this.#res.writableLength > this.#maxBuffered) {
      this.#open = false;
      this.#res.destroy();
    }
  }

  /**
   * Sends the events one transcript entry maps to, in one write, the entry's seq as the SSE id of the
   * last: a client's `Last-Event-ID` moves past an entry only once it has all of its events.
   */
  sendGroup(events: readonly BaseEvent[], id: number): void {
    if (!this.#open) return;
    if (this.#protobuf) {
      for (const event of events) this.send(event);
      return;
    }
    const last = events.length - 1;
    const text = events
      .map((event, i) => (i === last ? `id: ${id}\n` : '') + this.#encoder.encodeSSE(event))
      .join('');
    this.#res.write(text);
    if (this.#res.writableLength > this.#maxBuffered) {
      this.#open = false;
      this.#res.destroy();
    }
  }

  /** Ends the response. */
  end(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#res.end();
  }
}
