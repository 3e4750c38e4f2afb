import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { TaskRequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  McpError,
  type MessageExtraInfo,
  RELATED_TASK_META_KEY,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { type OwnCallExtra, type OwnToolCall, ownToolCallsOf } from './own-tool-calls.js';

/**
 * `transport` with a lane for the server's own tools (`ask_<agent>`, registered by `createMcpServer`):
 * a `tools/call` request naming one of them is answered here, below the SDK's `Protocol`; every other
 * message goes to the `Protocol` as before. Connect the server to the result:
 * `await server.connect(withAskLane(server, new McpStdioServerTransport()))` (what `agentloop mcp
 * serve` does).
 *
 * Why: the `Protocol` runs zod type guards on every incoming message and the `Server` parses each
 * `tools/call` request and result again (`CallToolRequest`, `CallToolResult`): about 0.2 ms of cold
 * code a call, which `ask_` does not need (its arguments are checked by hand, its result is built by
 * typed code, the transport checked the message's JSON-RPC shape). docs/mcp-server.md, "The stdio lane".
 *
 * What the lane does as the `Protocol` would: the result (or, should the call throw, a JSON-RPC error
 * with the same code and message), progress notifications and elicitation requests through the
 * server's own `notification` / `request` tied to the call, the client's `notifications/cancelled`
 * aborting the call (and passed on to the `Protocol`, which ignores ids it does not know), no answer
 * for a cancelled call, every lane call aborted when the transport closes. What it leaves to the
 * `Protocol`: everything else, including an own tool's call that asks for a task, names a related
 * task, or whose `arguments` are not an object (the `Protocol`'s error answers it). Use it with a
 * transport that checks each message's JSON-RPC shape (both stdio transports do); the Streamable HTTP
 * server does not use it (its calls carry auth and session context the `Protocol` passes on).
 */
export function withAskLane(server: McpServer, transport: Transport): Transport {
  return new AskLaneTransport(server, transport);
}

/** The lane around one transport: the `Protocol` sees this object as its transport. */
class AskLaneTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #server: McpServer;
  readonly #inner: Transport;
  /** The lane's calls in flight, by request id: their cancel. */
  readonly #running = new Map<RequestId, AbortController>();

  constructor(server: McpServer, inner: Transport) {
    this.#server = server;
    this.#inner = inner;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    // Handlers set on the inner transport before it was wrapped still hear of its close and errors.
    const innerClose = this.#inner.onclose;
    const innerError = this.#inner.onerror;
    this.#inner.onclose = () => {
      for (const controller of this.#running.values()) controller.abort();
      this.#running.clear();
      innerClose?.();
      this.onclose?.();
    };
    this.#inner.onerror = (error) => {
      innerError?.(error);
      this.onerror?.(error);
    };
    this.#inner.onmessage = (message, extra) => this.#receive(message, extra);
    await this.#inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message) {
      if ('id' in message) {
        const call = message.method === 'tools/call' ? this.#laneCall(message) : undefined;
        if (call) {
          this.#answer(message, call);
          return;
        }
      } else if (message.method === 'notifications/cancelled') {
        const id = message.params?.requestId;
        if (typeof id === 'string' || typeof id === 'number') {
          const reason = message.params?.reason;
          this.#running.get(id)?.abort(typeof reason === 'string' ? reason : undefined);
        }
      }
    }
    this.onmessage?.(message, extra);
  }

  /** The own tool a `tools/call` request names, when the lane answers it (else the Protocol does). */
  #laneCall(request: JSONRPCRequest): OwnToolCall | undefined {
    const params = request.params;
    if (params === undefined || typeof params.name !== 'string') return undefined;
    const call = ownToolCallsOf(this.#server).get(params.name);
    if (call === undefined || params.task !== undefined) return undefined;
    if (params.arguments !== undefined && !isRecord(params.arguments)) return undefined;
    if (params._meta?.[RELATED_TASK_META_KEY] !== undefined) return undefined;
    return call;
  }

  /** Runs the call with an `extra` made from the raw request, and sends its answer unless it was cancelled. */
  #answer(request: JSONRPCRequest, call: OwnToolCall): void {
    const controller = new AbortController();
    this.#running.set(request.id, controller);
    const params = request.params as { arguments?: Record<string, unknown>; _meta?: OwnCallExtra['_meta'] };
    void this.#run(
      request.id,
      controller,
      call,
      params.arguments,
      new LaneCallExtra(this.#server, request.id, controller.signal, params._meta),
    );
  }

  /** One async frame a call (not a chain of promises and handlers): the call, its answer, the bookkeeping. */
  async #run(
    id: RequestId,
    controller: AbortController,
    call: OwnToolCall,
    args: Record<string, unknown> | undefined,
    extra: OwnCallExtra,
  ): Promise<void> {
    await undefined; // the call starts after the message's dispatch, as the Protocol's handlers do
    let answer: JSONRPCMessage;
    try {
      answer = { jsonrpc: '2.0', id, result: await call(args, extra) };
    } catch (error) {
      answer = { jsonrpc: '2.0', id, error: errorOf(error) };
    }
    try {
      if (!controller.signal.aborted) await this.#inner.send(answer);
    } catch (error) {
      this.onerror?.(new Error(`Failed to send response: ${error}`));
    } finally {
      if (this.#running.get(id) === controller) this.#running.delete(id);
    }
  }
}

/**
 * What the Protocol's extra does for a request: notifications and requests related to it, none once
 * cancelled. Methods, not closures a call (the `ask_` handler calls them as `extra.sendNotification(…)`).
 */
class LaneCallExtra implements OwnCallExtra {
  constructor(
    private readonly server: McpServer,
    private readonly id: RequestId,
    readonly signal: AbortSignal,
    readonly _meta: OwnCallExtra['_meta'],
  ) {}

  async sendNotification(notification: ServerNotification): Promise<void> {
    if (this.signal.aborted) return;
    await this.server.server.notification(notification, { relatedRequestId: this.id });
  }

  async sendRequest<U extends AnySchema>(
    outgoing: ServerRequest,
    schema: U,
    options?: TaskRequestOptions,
  ): Promise<SchemaOutput<U>> {
    if (this.signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'Request was cancelled');
    return await this.server.server.request(outgoing, schema, { ...options, relatedRequestId: this.id });
  }
}

/** A thrown error as the Protocol answers it: its integer `code` (else internal error), message and data. */
function errorOf(error: unknown): { code: number; message: string; data?: unknown } {
  const { code, message, data } = (isRecord(error) ? error : {}) as Record<string, unknown>;
  return {
    code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError,
    message: typeof message === 'string' ? message : 'Internal error',
    ...(data !== undefined ? { data } : {}),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
