import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { ReasoningItem } from '../llm/message.js';

/** A Chat Completions request body as the scripted server received it (parsed JSON). */
export type ScriptedRequest = ChatCompletionCreateParams;

/** Why the model stopped, as OpenAI reports it in `finish_reason`. */
export type ScriptedFinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter';

/** One tool call the scripted model makes. */
export interface ScriptedToolCall {
  /**
   * Defaults to `call_<turn>_<i>` (deterministic, so retries see the same ids). Real models also send
   * broken ids, and a scenario can too: the same id twice, `''` (sent as an empty id) or `null` (no
   * `id` field at all).
   */
  id?: string | null;
  name: string;
  /** An object is sent as `JSON.stringify(arguments)`; a string is sent verbatim (may be malformed JSON). */
  arguments: string | Record<string, unknown>;
}

/** An HTTP error answered instead of a completion, in OpenAI's error JSON shape. */
export interface ScriptedError {
  /** HTTP status, e.g. 400, 401, 429, 500, 503. */
  status: number;
  message?: string;
  /** OpenAI's `error.type`; defaults from the status (`requests` for 429, `server_error` for 5xx, ...). */
  type?: string;
  code?: string;
  /** Extra response headers, e.g. `{ 'retry-after-ms': '20' }` or `{ 'retry-after': '1' }`. */
  headers?: Record<string, string>;
}

/**
 * A transport failure instead of a response:
 * - `reset`: the socket is destroyed before any response byte;
 * - `cut-mid-text` / `cut-mid-tool-call`: the response starts (SSE chunks, or headers and part of the
 *   JSON body) and the socket is destroyed inside the text / inside a tool call's arguments;
 * - `hang`: nothing is ever sent; the request stays open until the client aborts or the server closes.
 */
export type ScriptedFault = 'reset' | 'cut-mid-text' | 'cut-mid-tool-call' | 'hang';

/** What the scripted model answers for one turn. */
export interface ScriptedTurn {
  /** Assistant text. */
  content?: string;
  /**
   * The model's reasoning: `reasoning_content` on Chat Completions; on the Responses API a reasoning
   * item with this summary and an opaque `encrypted_content`, which the server expects back.
   */
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  /**
   * Responses API: these reasoning items are sent as they are, instead of the one made from
   * `reasoning` (a replay sends the recorded ones, whose ids and `encrypted_content` come back).
   */
  reasoningItems?: ReasoningItem[];
  /** Default: `tool_calls` when tool calls are sent, else `stop`. */
  finishReason?: ScriptedFinishReason;
  /**
   * Default: an estimate (about a token per 4 characters of the request and of the reply).
   * `cached_tokens` (default 0) is the part of `prompt_tokens` reported as served from the prompt cache.
   */
  usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
  /** Milliseconds to wait before the response starts (added to the scenario's `latencyMs`). */
  delayMs?: number;
  /** Milliseconds between stream chunks (default 0: all chunks are written at once). */
  chunkDelayMs?: number;
  /** Characters of content (and of tool-call arguments) per stream delta; default 8. */
  chunkSize?: number;
  /** Answer with this HTTP error instead (see `times`). */
  error?: ScriptedError;
  /** Fail the transport instead (see `times`). */
  fault?: ScriptedFault;
  /**
   * How many requests for this turn index get the `error`/`fault` (per server, until `reset()`);
   * later requests get the turn served normally. Default: every request.
   */
  times?: number;
}

/** What a turn function gets beside the request: the body exactly as it came, and its API. */
export interface ScriptedRequestInfo {
  /** The parsed JSON body as sent (for the Responses API: not its Chat Completions view). */
  body: unknown;
  api: 'chat-completions' | 'responses';
}

/**
 * A turn computed from the request (for tests whose answer depends on what was sent, and for replays
 * answering from a recording).
 */
export type ScriptedTurnFn = (
  request: ScriptedRequest,
  index: number,
  info: ScriptedRequestInfo,
) => ScriptedTurn | Promise<ScriptedTurn>;

/**
 * A script for the scripted server. Turn `i` answers every request whose `messages` hold exactly
 * `i` assistant messages, so concurrent conversations share one server and retries replay a turn.
 */
export interface Scenario {
  turns: Array<ScriptedTurn | ScriptedTurnFn>;
  /** Milliseconds added before every chat completion response (benchmarks). */
  latencyMs?: number;
  /** `model` reported in responses and by `GET /v1/models`; default: the request's model. */
  model?: string;
}

/** A scenario that failed validation; `message` names the source and each bad turn/key. */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
  constructor(
    /** The file path (or `scenario` for an in-memory value). */
    readonly source: string,
    /** One line per problem, e.g. `turns[2].toolCalls[0].name: expected a non-empty string`. */
    readonly problems: string[],
  ) {
    super(`${source}: invalid scenario:\n  ${problems.join('\n  ')}`);
  }
}

const ms = z.number().int().min(0);
const toolCallSchema = z.strictObject({
  id: z.string().nullable().optional(),
  name: z.string().min(1, 'expected a non-empty string'),
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())], {
    error: 'expected a JSON string or an object',
  }),
});
const errorSchema = z.strictObject({
  status: z.number().int().min(400).max(599),
  message: z.string().optional(),
  type: z.string().optional(),
  code: z.string().optional(),
  headers: z.record(z.string(), z.union([z.string(), z.number().transform(String)])).optional(),
});
const turnSchema = z
  .strictObject({
    content: z.string().optional(),
    reasoning: z.string().optional(),
    toolCalls: z.array(toolCallSchema).optional(),
    reasoningItems: z
      .array(
        z.looseObject({
          type: z.literal('reasoning'),
          id: z.string(),
          summary: z.array(z.strictObject({ type: z.literal('summary_text'), text: z.string() })),
          encrypted_content: z.string().nullable().optional(),
        }),
      )
      .optional(),
    finishReason: z.enum(['stop', 'tool_calls', 'length', 'content_filter']).optional(),
    usage: z
      .strictObject({
        prompt_tokens: ms.optional(),
        completion_tokens: ms.optional(),
        cached_tokens: ms.optional(),
      })
      .optional(),
    delayMs: ms.optional(),
    chunkDelayMs: ms.optional(),
    chunkSize: z.number().int().min(1).optional(),
    error: errorSchema.optional(),
    fault: z.enum(['reset', 'cut-mid-text', 'cut-mid-tool-call', 'hang']).optional(),
    times: z.number().int().min(0).optional(),
  })
  .superRefine((turn, ctx) => {
    if (turn.error && turn.fault)
      ctx.addIssue({ code: 'custom', message: 'give either error or fault, not both' });
    if (turn.times !== undefined && !turn.error && !turn.fault) {
      ctx.addIssue({ code: 'custom', path: ['times'], message: 'times needs an error or a fault to limit' });
    }
  });
const scenarioSchema = z.strictObject({
  turns: z.array(z.unknown(), { error: 'expected an array of turns' }),
  latencyMs: ms.optional(),
  model: z.string().min(1).optional(),
});

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out ? `.${String(key)}` : String(key);
  return out;
}

/** One line per zod issue, each starting with its key path (`turns[2].toolCalls[0].name: ...`); also used for eval suites. */
export function describeIssues(issues: z.core.$ZodIssue[], prefix: ReadonlyArray<PropertyKey>): string[] {
  return issues.map((issue) => {
    const where = formatPath([...prefix, ...issue.path]);
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
        : issue.message;
    return where ? `${where}: ${message}` : message;
  });
}

/**
 * Checks a scenario value (an object, or an array taken as its `turns`) and returns it with
 * defaults normalised (header numbers become strings). Function turns are kept as they are.
 * @throws ScenarioError naming `source` and each bad turn index and key.
 */
export function parseScenario(value: unknown, source = 'scenario'): Scenario {
  const top = scenarioSchema.safeParse(Array.isArray(value) ? { turns: value } : value);
  if (!top.success) throw new ScenarioError(source, describeIssues(top.error.issues, []));
  const problems: string[] = [];
  const turns = top.data.turns.map((turn, index) => {
    if (typeof turn === 'function') return turn as ScriptedTurnFn;
    const parsed = turnSchema.safeParse(turn);
    if (parsed.success) return parsed.data as ScriptedTurn;
    problems.push(...describeIssues(parsed.error.issues, ['turns', index]));
    return {};
  });
  if (problems.length > 0) throw new ScenarioError(source, problems);
  return { ...top.data, turns };
}

/**
 * Reads a scenario from a `.json`, `.yaml` or `.yml` file.
 * @throws ScenarioError naming the file (and the turn index/key when the content is invalid).
 */
export async function loadScenario(path: string): Promise<Scenario> {
  const ext = extname(path).toLowerCase();
  if (ext !== '.json' && ext !== '.yaml' && ext !== '.yml') {
    throw new ScenarioError(path, [`unsupported file type "${ext}" (use .json, .yaml or .yml)`]);
  }
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ScenarioError(path, [`cannot read file: ${(error as Error).message}`]);
  }
  let value: unknown;
  try {
    value = ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ScenarioError(path, [
      `cannot parse ${ext.slice(1).toUpperCase()}: ${(error as Error).message}`,
    ]);
  }
  return parseScenario(value, path);
}
