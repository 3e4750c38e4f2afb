import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The checks of one JSON-RPC message as the MCP SDK's `JSONRPCMessageSchema` makes them (a request, a
 * notification, a result or an error; `jsonrpc: "2.0"`; no member beyond the protocol's; an integer
 * or string id; `params`, `result` and `_meta` objects), written out by hand: the SDK's stdio transport
 * runs that zod union on every line, which is cold code once a call. The SDK's `Protocol` checks each
 * message again with its own schemas, so what passes here is still checked there.
 */

/** JSON-RPC's error codes for a line that is not JSON and for JSON that is not a message. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** A line read: the message, or the error to answer it with (id `null` unless the line had a usable id). */
export type ReadLine =
  | { message: JSONRPCMessage; error?: undefined }
  | { message?: undefined; error: { code: number; message: string; id: string | number | null } };

/** Parses and checks one line (without its newline); never throws. */
export function readJsonRpcLine(line: string): ReadLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { error: { code: PARSE_ERROR, message: `Parse error: the line is not JSON (${why})`, id: null } };
  }
  const problem = messageProblem(value);
  if (problem === undefined) return { message: value as JSONRPCMessage };
  const id = isRecord(value) && isRequestId(value.id) ? value.id : null;
  return { error: { code: INVALID_REQUEST, message: `Invalid Request: ${problem}`, id } };
}

/** Why `value` is not a JSON-RPC message of MCP's, or undefined when it is one. */
export function messageProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'a message is a JSON object';
  if (value.jsonrpc !== '2.0') return '`jsonrpc` must be "2.0"';
  if ('method' in value) {
    if (typeof value.method !== 'string') return '`method` must be a string';
    if ('id' in value && !isRequestId(value.id)) return '`id` must be a string or an integer';
    const extra = extraKey(value, 'id' in value ? REQUEST_KEYS : NOTIFICATION_KEYS);
    if (extra !== undefined) return `unknown member "${extra}"`;
    return paramsProblem(value.params);
  }
  if ('result' in value) {
    if (!isRequestId(value.id)) return '`id` must be a string or an integer';
    const extra = extraKey(value, RESULT_KEYS);
    if (extra !== undefined) return `unknown member "${extra}"`;
    if (!isRecord(value.result)) return '`result` must be an object';
    return metaProblem(value.result._meta, 'result._meta');
  }
  if ('error' in value) {
    if (value.id !== undefined && !isRequestId(value.id)) return '`id` must be a string or an integer';
    const extra = extraKey(value, ERROR_KEYS);
    if (extra !== undefined) return `unknown member "${extra}"`;
    const error = value.error;
    if (!isRecord(error)) return '`error` must be an object';
    if (!Number.isSafeInteger(error.code)) return '`error.code` must be an integer';
    if (typeof error.message !== 'string') return '`error.message` must be a string';
    return undefined;
  }
  return 'a message has a `method` (request or notification), a `result` or an `error`';
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

function paramsProblem(params: unknown): string | undefined {
  if (params === undefined) return undefined;
  if (!isRecord(params)) return '`params` must be an object';
  return metaProblem(params._meta, 'params._meta');
}

function metaProblem(meta: unknown, where: string): string | undefined {
  if (meta === undefined) return undefined;
  if (!isRecord(meta)) return `\`${where}\` must be an object`;
  if (meta.progressToken !== undefined && !isRequestId(meta.progressToken)) {
    return `\`${where}.progressToken\` must be a string or an integer`;
  }
  const task = meta[RELATED_TASK_KEY];
  if (task !== undefined && !(isRecord(task) && typeof task.taskId === 'string')) {
    return `\`${where}["${RELATED_TASK_KEY}"].taskId\` must be a string`;
  }
  return undefined;
}

function extraKey(value: Record<string, unknown>, allowed: ReadonlySet<string>): string | undefined {
  for (const key in value) if (!allowed.has(key)) return key;
  return undefined;
}

function isRequestId(id: unknown): id is string | number {
  return typeof id === 'string' || Number.isSafeInteger(id);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
