import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import { DEFAULTS } from '../defaults.js';
import { REPLY_PRIMING_TOKENS, type TokenCounter, tokenCounterFor } from './token-counter.js';

/** How a context window is sized and pruned. */
export interface ContextWindowOptions {
  /** The model's context window in tokens (see `resolveModelWindow`). */
  contextWindow: number;
  /** The tool definitions sent with every request: they count against the window. */
  tools?: readonly ChatCompletionTool[];
  /** Share of the window above which `prepareRequest` returns a warning (default 0.8). */
  warnShare?: number;
  /**
   * Tokens kept free for the completion; the request is pruned to `contextWindow - reserveTokens`.
   * Default: `DEFAULTS.completionReserveTokens`, at most `DEFAULTS.completionReserveMaxShare` of the window.
   */
  reserveTokens?: number;
  /** The counter (its encoding must match the model); the shared o200k_base counter by default. */
  counter?: TokenCounter;
  /**
   * When pruning everything before the last user message is not enough, also shrink the current
   * turn's older tool results (never those of its latest tool-call message). Default true: in a
   * long autonomous turn the whole history sits after the one user message, and without this the
   * request would overflow. Set false to keep the current turn byte-for-byte intact.
   */
  pruneCurrentTurn?: boolean;
}

/** What pruning did to build the request view. */
export interface PruneReport {
  /** Messages whose content was replaced by a placeholder or that were left out. */
  prunedMessages: number;
  /** Of those, messages left out entirely. */
  droppedMessages: number;
  removedTokens: number;
  tokensBefore: number;
  tokensAfter: number;
  /** `tool_call_id`s whose results were replaced or left out. */
  prunedIds: string[];
}

/** The request view of a conversation and what it costs. */
export interface PreparedRequest {
  /** The messages to send: the input array itself when nothing was pruned, else a new array. */
  messages: ChatCompletionMessageParam[];
  /** Estimated prompt tokens of `messages` plus the tool definitions. */
  tokens: number;
  /** The most the prompt may take: `contextWindow - reserveTokens`. */
  budget: number;
  /** False when even full pruning leaves the request above the budget. */
  fits: boolean;
  /** Present when the full conversation is above `warnShare` of the window (a `limit_warning` is due). */
  warning?: { used: number; max: number };
  /** Present when messages were pruned (a `context_pruned` event is due). */
  pruned?: PruneReport;
}

/** A run of messages that must be kept or removed together: one message, or a tool-call message and its results. */
interface Group {
  start: number;
  /** Inclusive. */
  end: number;
  /** The assistant message's calls by id, for a tool-call group. */
  calls?: Map<string, ChatCompletionMessageToolCall>;
}

const ARGS_PREVIEW_CHARS = 120;

/**
 * Keeps requests inside a model's context window without touching the transcript.
 *
 * `prepareRequest(messages)` counts the conversation (each message once, cached) and:
 * - at or below `warnShare` of the window: returns the same array, no copy;
 * - above it: adds a `warning`;
 * - above the budget (`contextWindow - reserveTokens`): builds a pruned view. In order:
 *   1. tool results before the last user message, oldest first, become a one-line placeholder
 *      naming the call (`[pruned: result of read_file {"path":"a.md"} (1,234 tokens) — call it
 *      again if needed]`), so the model can ask again;
 *   2. if that is not enough, whole groups before the last user message are left out, oldest
 *      first (a tool-call message always goes with all its results); placeholders that the freed
 *      room can pay for are then restored, newest first;
 *   3. if still not enough and `pruneCurrentTurn`, older tool results of the current turn become
 *      placeholders, oldest first, sparing the latest tool-call message's results.
 *   The leading system/developer messages (system prompt, critical-action context) are never
 *   touched, nor is the last user message and what follows it (save step 3's placeholders).
 *
 * The input array and its messages are never mutated: messages are append-only, and the request
 * view is rebuilt from the full transcript for every call.
 */
export class ContextWindow {
  readonly contextWindow: number;
  readonly budget: number;
  /** Tokens above which a warning is returned. */
  readonly warnAt: number;
  readonly #tools: readonly ChatCompletionTool[] | undefined;
  readonly #counter: TokenCounter;
  readonly #pruneCurrentTurn: boolean;
  /** Placeholder message per pruned tool message, built once so that its count is cached too. */
  readonly #placeholders = new WeakMap<object, ChatCompletionToolMessageParam>();

  constructor(options: ContextWindowOptions) {
    const window = options.contextWindow;
    const reserve =
      options.reserveTokens ??
      Math.min(DEFAULTS.completionReserveTokens, Math.floor(window * DEFAULTS.completionReserveMaxShare));
    this.contextWindow = window;
    this.budget = Math.max(0, window - reserve);
    this.warnAt = Math.min(
      this.budget,
      Math.floor(window * (options.warnShare ?? DEFAULTS.contextWarningShare)),
    );
    this.#tools = options.tools;
    this.#counter = options.counter ?? tokenCounterFor('o200k_base');
    this.#pruneCurrentTurn = options.pruneCurrentTurn ?? true;
  }

  /** Estimated prompt tokens of `messages` with this window's tools, unpruned. */
  count(messages: readonly ChatCompletionMessageParam[]): number {
    return this.#counter.countPrompt(messages, this.#tools);
  }

  /** Builds the request view of `messages` (see the class comment). */
  prepareRequest(messages: ChatCompletionMessageParam[]): PreparedRequest {
    const counter = this.#counter;
    const n = messages.length;
    const counts = new Array<number>(n);
    let total = REPLY_PRIMING_TOKENS + counter.countTools(this.#tools);
    for (let i = 0; i < n; i++) {
      const c = counter.countMessage(messages[i]!);
      counts[i] = c;
      total += c;
    }
    const base = { budget: this.budget };
    if (total <= this.warnAt) return { ...base, messages, tokens: total, fits: true };
    const warning = { used: total, max: this.contextWindow };
    if (total <= this.budget) return { ...base, messages, tokens: total, fits: true, warning };

    const tokensBefore = total;
    const lead = leadingSystemCount(messages);
    const groups = groupMessages(messages, lead);
    const tailIndex = tailGroupIndex(messages, groups, lead);
    const replaced = new Map<number, ChatCompletionToolMessageParam>();
    const droppedGroups = new Set<number>();

    const replace = (g: number, i: number): void => {
      if (total <= this.budget || replaced.has(i)) return;
      const placeholder = this.#placeholder(messages, groups[g]!, i, counts[i]!);
      const saving = counts[i]! - counter.countMessage(placeholder);
      if (saving <= 0) return;
      replaced.set(i, placeholder);
      total -= saving;
    };

    // 1. Old tool results become placeholders, oldest first.
    for (let g = 0; g < tailIndex && total > this.budget; g++) {
      const group = groups[g]!;
      if (!group.calls) continue;
      for (let i = group.start + 1; i <= group.end; i++) if (messages[i]!.role === 'tool') replace(g, i);
    }

    // 2. Old groups go whole, oldest first; then placeholders come back while they fit, newest first.
    if (total > this.budget) {
      for (let g = 0; g < tailIndex && total > this.budget; g++) {
        const group = groups[g]!;
        for (let i = group.start; i <= group.end; i++) {
          const placeholder = replaced.get(i);
          total -= placeholder ? counter.countMessage(placeholder) : counts[i]!;
          replaced.delete(i);
        }
        droppedGroups.add(g);
      }
      const restorable = [...replaced.keys()].sort((a, b) => b - a);
      for (const i of restorable) {
        const placeholder = replaced.get(i)!;
        const cost = counts[i]! - counter.countMessage(placeholder);
        if (total + cost > this.budget) break;
        replaced.delete(i);
        total += cost;
      }
    }

    // 3. Last resort: older tool results of the current turn, sparing the latest tool-call group.
    if (total > this.budget && this.#pruneCurrentTurn) {
      let lastCallGroup = -1;
      for (let g = groups.length - 1; g >= tailIndex; g--) {
        if (groups[g]!.calls) {
          lastCallGroup = g;
          break;
        }
      }
      for (let g = tailIndex; g < lastCallGroup && total > this.budget; g++) {
        const group = groups[g]!;
        if (!group.calls) continue;
        for (let i = group.start + 1; i <= group.end; i++) if (messages[i]!.role === 'tool') replace(g, i);
      }
    }

    if (replaced.size === 0 && droppedGroups.size === 0) {
      return { ...base, messages, tokens: total, fits: false, warning };
    }

    const view: ChatCompletionMessageParam[] = [];
    const prunedIds: string[] = [];
    let droppedMessages = 0;
    for (let i = 0; i < lead; i++) view.push(messages[i]!);
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!;
      if (droppedGroups.has(g)) {
        droppedMessages += group.end - group.start + 1;
        if (group.calls) prunedIds.push(...group.calls.keys());
        continue;
      }
      for (let i = group.start; i <= group.end; i++) {
        const placeholder = replaced.get(i);
        if (placeholder) prunedIds.push(placeholder.tool_call_id);
        view.push(placeholder ?? messages[i]!);
      }
    }
    return {
      ...base,
      messages: view,
      tokens: total,
      fits: total <= this.budget,
      warning,
      pruned: {
        prunedMessages: droppedMessages + replaced.size,
        droppedMessages,
        removedTokens: tokensBefore - total,
        tokensBefore,
        tokensAfter: total,
        prunedIds,
      },
    };
  }

  #placeholder(
    messages: readonly ChatCompletionMessageParam[],
    group: Group,
    index: number,
    tokens: number,
  ): ChatCompletionToolMessageParam {
    const original = messages[index] as ChatCompletionToolMessageParam;
    let placeholder = this.#placeholders.get(original);
    if (!placeholder) {
      const call = group.calls?.get(original.tool_call_id);
      placeholder = {
        role: 'tool',
        tool_call_id: original.tool_call_id,
        content: placeholderText(call, tokens),
      };
      this.#placeholders.set(original, placeholder);
    }
    return placeholder;
  }
}

/** One-shot form of `new ContextWindow(options).prepareRequest(messages)`. */
export function prepareRequest(
  messages: ChatCompletionMessageParam[],
  options: ContextWindowOptions,
): PreparedRequest {
  return new ContextWindow(options).prepareRequest(messages);
}

/** The text that stands in for a pruned tool result. */
export function placeholderText(call: ChatCompletionMessageToolCall | undefined, tokens: number): string {
  let what = 'a tool call';
  if (call?.type === 'function') what = `${call.function.name} ${preview(call.function.arguments)}`;
  else if (call?.type === 'custom') what = `${call.custom.name} ${preview(call.custom.input)}`;
  return `[pruned: result of ${what.trim()} (${tokens.toLocaleString('en-US')} tokens) — call it again if needed]`;
}

function preview(args: string): string {
  const flat = args.replace(/\s+/g, ' ').trim();
  return flat.length > ARGS_PREVIEW_CHARS ? `${flat.slice(0, ARGS_PREVIEW_CHARS)}…` : flat;
}

/** The system prompt and the critical-action context: the system/developer messages at the start. */
function leadingSystemCount(messages: readonly ChatCompletionMessageParam[]): number {
  let i = 0;
  while (i < messages.length && (messages[i]!.role === 'system' || messages[i]!.role === 'developer')) i++;
  return i;
}

/**
 * Splits `messages[lead..]` into groups: an assistant message with tool calls spans up to the
 * last tool message answering one of its ids (before the next user or assistant message);
 * every other message is its own group.
 */
function groupMessages(messages: readonly ChatCompletionMessageParam[], lead: number): Group[] {
  const groups: Group[] = [];
  let i = lead;
  while (i < messages.length) {
    const message = messages[i]!;
    if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
      const calls = new Map(message.tool_calls.map((call) => [call.id, call] as const));
      let end = i;
      let answered = 0;
      for (let j = i + 1; j < messages.length && answered < calls.size; j++) {
        const next = messages[j]!;
        if (next.role === 'user' || next.role === 'assistant') break;
        if (next.role === 'tool' && calls.has(next.tool_call_id)) {
          answered++;
          end = j;
        }
      }
      groups.push({ start: i, end, calls });
      i = end + 1;
    } else {
      groups.push({ start: i, end: i });
      i++;
    }
  }
  return groups;
}

/** The group holding the last user message; without one, the last group. */
function tailGroupIndex(
  messages: readonly ChatCompletionMessageParam[],
  groups: readonly Group[],
  lead: number,
): number {
  let lastUser = -1;
  for (let i = messages.length - 1; i >= lead; i--) {
    if (messages[i]!.role === 'user') {
      lastUser = i;
      break;
    }
  }
  if (lastUser < 0) return Math.max(0, groups.length - 1);
  for (let g = groups.length - 1; g >= 0; g--) if (groups[g]!.start <= lastUser) return g;
  return 0;
}
