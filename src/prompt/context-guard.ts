import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { DEFAULTS } from '../defaults.js';
import type { Message } from '../llm/message.js';
import { ContextWindow, type PruneReport } from './context-window.js';
import { type ModelWindowOverrides, resolveModelWindow } from './model-windows.js';
import { tokenCounterFor } from './token-counter.js';

/** Options of the context window an agent keeps its requests inside. */
export interface ContextGuardOptions extends ModelWindowOverrides {
  /** Share of the window at which a `limit_warning` is raised (default 0.8). */
  warnShare?: number;
  /** Tokens kept free for the completion. */
  reserveTokens?: number;
  /** Whether older tool results of the current turn may be pruned too (default true). */
  pruneCurrentTurn?: boolean;
  /**
   * Share of the window above which the conversation is compacted by summary before the model call
   * (default 0.8; never above the pruning budget). Applies when the agent compacts (`compaction`).
   */
  compactAt?: number;
}

/** What the guard decided for one request. */
export interface GuardedRequest {
  messages: Message[];
  warning?: { used: number; max: number };
  pruned?: PruneReport;
  /** Set when the request is past `compactAt`: its estimated tokens and the threshold. */
  overCompactAt?: { tokens: number; max: number };
}

/** Upper bound of tokens per message beyond its bytes (role, separators, tool-call framing). */
const FRAMING_TOKENS = 16;

/**
 * Builds the request view of the conversation for each model call. A byte-length bound comes first:
 * a BPE token covers at least one UTF-8 byte, so while the conversation's bytes stay under the warning
 * level no tokenizer is loaded or run. Past it, real token counts decide warnings and pruning.
 */
export function createContextGuard(
  model: string,
  toolList: readonly ChatCompletionTool[] | (() => readonly ChatCompletionTool[]),
  options: ContextGuardOptions = {},
): (messages: Message[]) => GuardedRequest {
  const { contextWindow, encoding } = resolveModelWindow(model, options);
  // A function gives the tools of each request (the list changes as MCP servers come and go); a new
  // list (a new array) is measured again.
  const toolsNow = typeof toolList === 'function' ? toolList : () => toolList;
  let tools = toolsNow();
  let toolBytes = Buffer.byteLength(JSON.stringify(tools));
  let window: ContextWindow | undefined;
  const windowFor = () => {
    window ??= new ContextWindow({
      contextWindow,
      tools,
      counter: tokenCounterFor(encoding),
      ...(options.warnShare !== undefined ? { warnShare: options.warnShare } : {}),
      ...(options.reserveTokens !== undefined ? { reserveTokens: options.reserveTokens } : {}),
      ...(options.pruneCurrentTurn !== undefined ? { pruneCurrentTurn: options.pruneCurrentTurn } : {}),
    });
    return window;
  };
  const bytes = new WeakMap<Message, number>();
  const share = options.warnShare ?? DEFAULTS.contextWarningShare;
  const compactShare = options.compactAt ?? DEFAULTS.compactAtShare;
  // The cheap bound is compared with the lowest level at which the window would act.
  const cheapLimit = Math.floor(contextWindow * Math.min(share, compactShare, 0.5));
  return (messages) => {
    const current = toolsNow();
    if (current !== tools) {
      tools = current;
      toolBytes = Buffer.byteLength(JSON.stringify(tools));
      window = undefined;
    }
    let bound = toolBytes;
    for (const message of messages) {
      let size = bytes.get(message);
      if (size === undefined) {
        size = Buffer.byteLength(JSON.stringify(message)) + FRAMING_TOKENS;
        bytes.set(message, size);
      }
      bound += size;
      if (bound >= cheapLimit) break;
    }
    if (bound < cheapLimit) return { messages };
    const guard = windowFor();
    const prepared = guard.prepareRequest(messages);
    const result: GuardedRequest = { messages: prepared.messages };
    const compactAt = Math.min(guard.budget, Math.floor(contextWindow * compactShare));
    const tokens = prepared.pruned?.tokensBefore ?? prepared.tokens;
    if (tokens > compactAt) result.overCompactAt = { tokens, max: compactAt };
    if (prepared.warning) result.warning = prepared.warning;
    if (prepared.pruned) result.pruned = prepared.pruned;
    return result;
  };
}

/** How requests to a model are measured: their estimated tokens, and the most a prompt may take. */
export interface RequestMeasure {
  count(messages: Message[]): number;
  budget: number;
}

/**
 * Measures requests to `model` with `toolList` against its window (the same counting and budget as
 * {@link createContextGuard}): what compaction checks its summary call and its result with.
 */
export function createRequestMeasure(
  model: string,
  toolList: readonly ChatCompletionTool[] | (() => readonly ChatCompletionTool[]),
  options: ContextGuardOptions = {},
): RequestMeasure {
  const { contextWindow, encoding } = resolveModelWindow(model, options);
  const toolsNow = typeof toolList === 'function' ? toolList : () => toolList;
  const windowFor = (tools: readonly ChatCompletionTool[]) =>
    new ContextWindow({
      contextWindow,
      tools,
      counter: tokenCounterFor(encoding),
      ...(options.reserveTokens !== undefined ? { reserveTokens: options.reserveTokens } : {}),
    });
  let tools = toolsNow();
  let window = windowFor(tools);
  return {
    budget: window.budget,
    count(messages) {
      const current = toolsNow();
      if (current !== tools) {
        tools = current;
        window = windowFor(tools);
      }
      return window.count(messages);
    },
  };
}
