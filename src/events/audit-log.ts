import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RunToolsInput, ToolRunHooks } from '../machines/actors/run-tools.js';
import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import { createRedactor, type Redactor } from './redact.js';

/** Written (and awaited) before a tool call runs. */
export interface AuditStartRecord {
  type: 'tool_call_started';
  sessionId: string;
  turn: number;
  iteration: number;
  toolCallId: string;
  tool: string;
  /** The parsed arguments, or the raw text when it is not valid JSON (`argumentsValid: false`). */
  arguments: unknown;
  argumentsValid: boolean;
  /** ISO time. */
  startedAt: string;
}

/** Written (and awaited) after a tool call returned, before the model hears of it. */
export interface AuditFinishRecord {
  type: 'tool_call_finished';
  sessionId: string;
  turn: number;
  iteration: number;
  toolCallId: string;
  tool: string;
  outcome: 'ok' | 'error';
  /** The tool's run time as the runner measured it. */
  durationMs: number;
  /** Characters of the result the model reads (after truncation). */
  resultChars: number;
  /** Characters cut from an oversized result. */
  truncatedChars?: number;
  /** The error the model reads (at most 2,000 characters), for `outcome: 'error'`. */
  error?: string;
  /** The call was cut short by the turn's deadline. */
  deadlineExceeded?: true;
  startedAt?: string;
  /** ISO time. */
  finishedAt: string;
}

export type AuditRecord = AuditStartRecord | AuditFinishRecord;

/** Options of `createAuditLog`. */
export interface AuditLogOptions {
  /** The JSONL file records are appended to (its folder is created). */
  file: string;
  /**
   * Applied to every record before it is written. Default: a redactor with the default patterns and
   * `OPENAI_API_KEY`; `createAgent({ auditLog: path })` passes the agent's own redactor.
   */
  redact?: Redactor | ((value: unknown) => unknown);
  /** Clock, for tests (default `Date.now`). */
  now?: () => number;
}

/**
 * An audit trail of tool calls, usable as `ToolRunHooks` (`toolHooks: log`, or through
 * `composeToolHooks`). Writes are awaited by the tool runner: the start record is on disk before the
 * tool runs and the finish record before the model reads the result. A failed write fails the call
 * closed (it gets an error result instead of running unrecorded).
 */
export interface AuditLog extends Required<ToolRunHooks> {
  readonly file: string;
  /** Resolves when every record appended so far is written. */
  flush(): Promise<void>;
  /** Flushes; later records are refused. */
  close(): Promise<void>;
}

const MAX_ERROR_CHARS = 2_000;
const TRUNCATION_NOTE = /\n\[truncated: (\d+) of \d+ characters cut\]$/;

/** The agent's `auditLog` option as a log: a path is opened with the agent's redactor, a log kept. */
export function auditLogFor(option: string | AuditLog | undefined, redact: Redactor): AuditLog | undefined {
  return typeof option === 'string' ? createAuditLog({ file: option, redact }) : option;
}

/** Creates an append-only JSONL audit log of tool calls (one record before each call, one after). */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { file } = options;
  const now = options.now ?? Date.now;
  const redactor = options.redact ?? createRedactor();
  const redact = typeof redactor === 'function' ? redactor : (value: unknown) => redactor.redactValue(value);
  const startedAt = new Map<string, string>();
  let closed = false;
  let ready: Promise<unknown> | undefined;
  let chain: Promise<void> = Promise.resolve();

  const write = (record: AuditRecord): Promise<void> => {
    if (closed) return Promise.reject(new Error(`audit log ${file} is closed`));
    const line = `${JSON.stringify(redact(record))}\n`;
    ready ??= mkdir(dirname(file), { recursive: true });
    const next = chain.then(async () => {
      await ready;
      await appendFile(file, line, 'utf8');
    });
    // One failed write must not block the ones after it; the caller still sees its own failure.
    chain = next.catch(() => {});
    return next;
  };

  const common = (call: ToolCallRequest, input: RunToolsInput) => ({
    sessionId: input.sessionId,
    turn: input.turn,
    iteration: input.iteration,
    toolCallId: call.id,
    tool: call.name,
  });

  return {
    file,
    beforeRun: async (call, input) => {
      const at = new Date(now()).toISOString();
      startedAt.set(call.id, at);
      await write({
        type: 'tool_call_started',
        ...common(call, input),
        arguments: call.args === undefined ? call.argsText : call.args,
        argumentsValid: call.args !== undefined,
        startedAt: at,
      });
      return undefined;
    },
    afterRun: async (result: ToolResult, call, input) => {
      const record: AuditFinishRecord = {
        type: 'tool_call_finished',
        ...common(call, input),
        outcome: result.isError ? 'error' : 'ok',
        durationMs: result.durationMs,
        resultChars: result.content.length,
        finishedAt: new Date(now()).toISOString(),
      };
      const cut = TRUNCATION_NOTE.exec(result.content);
      if (cut) record.truncatedChars = Number(cut[1]);
      if (result.isError) record.error = result.content.slice(0, MAX_ERROR_CHARS);
      if (result.deadlineExceeded) record.deadlineExceeded = true;
      const started = startedAt.get(call.id);
      if (started) record.startedAt = started;
      startedAt.delete(call.id);
      await write(record);
    },
    flush: () => chain,
    close: async () => {
      await chain;
      closed = true;
    },
  };
}
