import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { INVALID_REQUEST, readJsonRpcLine } from './jsonrpc-line.js';

/** What {@link McpStdioServerTransport} takes besides its streams. */
export interface McpStdioServerTransportOptions {
  /** The longest line read, in bytes (default 10 MiB, the SDK's stdio limit); a longer one is answered with an error. */
  maxLineBytes?: number;
}

const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * The server side of MCP's stdio transport (newline-delimited JSON-RPC on stdin and stdout), an
 * implementation of the SDK's `Transport` that `agentloop mcp serve` uses in place of the SDK's
 * `StdioServerTransport`. It differs in two ways (docs/mcp-server.md): each line is checked by
 * {@link readJsonRpcLine} rather than the SDK's zod union (the `Protocol` on top checks it again), and
 * a line that is not JSON, not a JSON-RPC message or too long is answered with a JSON-RPC error
 * (-32700, -32600) instead of being dropped, so the client learns why its request got no answer.
 */
export class McpStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #maxLineBytes: number;
  /** The start of the line being read: chunks without a newline yet. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** The line being read went over the limit: its bytes are dropped up to its newline. */
  #overlong = false;
  #started = false;

  constructor(
    stdin: Readable = process.stdin,
    stdout: Writable = process.stdout,
    options: McpStdioServerTransportOptions = {},
  ) {
    this.#stdin = stdin;
    this.#stdout = stdout;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('McpStdioServerTransport already started (connect() starts it)');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#stdout.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onError);
    // Leave stdin flowing when someone else reads it too.
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.#pending = [];
    this.#pendingBytes = 0;
    this.onclose?.();
  }

  readonly #onError = (error: Error) => {
    this.onerror?.(error);
  };

  readonly #onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let from = 0;
    for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, from)) {
      this.#lineEnds(bytes.subarray(from, end));
      from = end + 1;
    }
    if (from < bytes.length) this.#keep(bytes.subarray(from));
  };

  /** More of the line being read, without its end. */
  #keep(part: Buffer): void {
    if (this.#overlong) return;
    if (this.#pendingBytes + part.length > this.#maxLineBytes) {
      this.#overlong = true;
      this.#pending = [];
      this.#pendingBytes = 0;
      return;
    }
    this.#pending.push(part);
    this.#pendingBytes += part.length;
  }

  /** The last part of a line (before its newline): the whole line is handled. */
  #lineEnds(last: Buffer): void {
    if (this.#overlong || this.#pendingBytes + last.length > this.#maxLineBytes) {
      this.#overlong = false;
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#answerError(
        INVALID_REQUEST,
        `Invalid Request: the message is longer than ${this.#maxLineBytes} bytes`,
        null,
      );
      return;
    }
    let bytes = last;
    if (this.#pending.length > 0) {
      this.#pending.push(last);
      bytes = Buffer.concat(this.#pending, this.#pendingBytes + last.length);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    let length = bytes.length;
    if (length > 0 && bytes[length - 1] === 0x0d) length -= 1; // CRLF
    const line = bytes.toString('utf8', 0, length);
    if (line.trim() === '') return;
    const read = readJsonRpcLine(line);
    if (read.message) {
      try {
        this.onmessage?.(read.message);
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
      return;
    }
    this.#answerError(read.error.code, read.error.message, read.error.id);
  }

  /** Answers a line that is no message with a JSON-RPC error, and reports it to `onerror`. */
  #answerError(code: number, message: string, id: string | number | null): void {
    this.onerror?.(new Error(`stdin: ${message}`));
    // JSON-RPC's error response for a request whose id could not be read has `id: null`.
    const response = { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage;
    this.send(response).catch(() => {});
  }
}
