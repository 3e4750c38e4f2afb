import { createRequire } from 'node:module';
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { AssistantMessage, ReasoningItem } from '../llm/message.js';
import type { EncodingName } from './model-windows.js';

/** Tokens every message costs besides its content (`<|start|>role<|message|>...<|end|>`). */
export const TOKENS_PER_MESSAGE = 3;
/** Extra token for a `name` field. */
export const TOKENS_PER_NAME = 1;
/** Every reply is primed with `<|start|>assistant<|message|>`. */
export const REPLY_PRIMING_TOKENS = 3;
/** Framing of one tool call in an assistant message (`functions.name`, JSON wrapper); an estimate. */
export const TOKENS_PER_TOOL_CALL = 8;
/** An image part: OpenAI bills 85 tokens for `low` detail, up to ~765 for a 1024px `high`/`auto` image. */
const IMAGE_TOKENS_LOW = 85;
const IMAGE_TOKENS_HIGH = 765;
/** Audio and file parts: no way to know offline, a flat guess so they are not free. */
const OPAQUE_PART_TOKENS = 256;
/** Encrypted reasoning is base64 of encrypted tokens: about this many characters per reasoning token. */
const ENCRYPTED_CHARS_PER_TOKEN = 5;
/**
 * Tool definitions are rendered by OpenAI as a TypeScript-like namespace in the system message.
 * These constants follow the OpenAI cookbook's measurements for the o200k/cl100k chat models.
 */
const TOOL_FUNC_INIT = 7;
const TOOL_PROP_INIT = 3;
const TOOL_PROP_KEY = 3;
const TOOL_ENUM_INIT = -3;
const TOOL_ENUM_ITEM = 3;
const TOOL_FUNC_END = 12;

/** Special tokens in user text are counted as ordinary text, never rejected. */
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

interface Encoder {
  countTokens(text: string, options?: typeof AS_PLAIN_TEXT): number;
}

/**
 * The BPE tables are large (o200k takes ~150 ms to load): they load on the first count of an
 * encoding, not when this module is imported. `require` keeps counting synchronous.
 */
const require = createRequire(import.meta.url);
const encoders = new Map<EncodingName, Encoder>();
function encoderFor(encoding: EncodingName): Encoder {
  let encoder = encoders.get(encoding);
  if (!encoder) {
    encoder = require(`gpt-tokenizer/encoding/${encoding}`) as Encoder;
    encoders.set(encoding, encoder);
  }
  return encoder;
}

/**
 * Counts the tokens of chat messages and tool definitions the way OpenAI bills a Chat
 * Completions prompt: content tokens plus a fixed overhead per message and per name; tool-call
 * names and arguments; tool definitions in their rendered form. The result is an estimate within a
 * few percent of the API's `prompt_tokens` (the exact rendering of tool calls and nested schemas is
 * not public), rounded to the safe side.
 *
 * Each message is counted once: counts are cached by object identity (a WeakMap), which is sound
 * because agentloop's messages are append-only and never mutated after they join the transcript.
 * Do not count a message you are still filling in.
 */
export class TokenCounter {
  readonly encoding: EncodingName;
  readonly #messageCounts = new WeakMap<object, number>();
  readonly #toolCounts = new WeakMap<object, number>();

  constructor(encoding: EncodingName = 'o200k_base') {
    this.encoding = encoding;
  }

  /** Tokens of a plain string. */
  countText(text: string): number {
    if (text.length === 0) return 0;
    return encoderFor(this.encoding).countTokens(text, AS_PLAIN_TEXT);
  }

  /** Tokens one message adds to a prompt, overhead included; cached by identity. */
  countMessage(message: ChatCompletionMessageParam): number {
    const cached = this.#messageCounts.get(message);
    if (cached !== undefined) return cached;
    const count = this.#count(message);
    this.#messageCounts.set(message, count);
    return count;
  }

  /** Whether `message` is already in the cache (for tests and diagnostics). */
  isCached(message: ChatCompletionMessageParam): boolean {
    return this.#messageCounts.has(message);
  }

  /** Tokens of a whole prompt: every message, the reply priming, and the tool definitions if given. */
  countPrompt(
    messages: readonly ChatCompletionMessageParam[],
    tools?: readonly ChatCompletionTool[],
  ): number {
    let total = REPLY_PRIMING_TOKENS + this.countTools(tools);
    for (const message of messages) total += this.countMessage(message);
    return total;
  }

  /** Tokens the tool definitions add to a prompt (0 for none); cached per tool object. */
  countTools(tools: readonly ChatCompletionTool[] | undefined): number {
    if (!tools || tools.length === 0) return 0;
    let total = TOOL_FUNC_END;
    for (const tool of tools) {
      let count = this.#toolCounts.get(tool);
      if (count === undefined) {
        count = this.#countTool(tool);
        this.#toolCounts.set(tool, count);
      }
      total += count;
    }
    return total;
  }

  #count(message: ChatCompletionMessageParam): number {
    let total = TOKENS_PER_MESSAGE + this.countText(message.role);
    total += this.#content(message.content);
    if ('name' in message && typeof message.name === 'string') {
      total += TOKENS_PER_NAME + this.countText(message.name);
    }
    if (message.role === 'assistant') {
      if (typeof message.refusal === 'string') total += this.countText(message.refusal);
      for (const call of message.tool_calls ?? []) {
        total += TOKENS_PER_TOOL_CALL;
        total +=
          call.type === 'function'
            ? this.countText(call.function.name) + this.countText(call.function.arguments)
            : this.countText(call.custom.name) + this.countText(call.custom.input);
      }
      total += this.#reasoningItems((message as AssistantMessage).reasoning_items);
      if (message.function_call) {
        total +=
          TOKENS_PER_TOOL_CALL +
          this.countText(message.function_call.name) +
          this.countText(message.function_call.arguments);
      }
    }
    return total;
  }

  /**
   * Reasoning items sent back on the Responses wire: their summary and reasoning text, and the
   * reasoning their opaque `encrypted_content` stands for (an estimate: a token per 5 characters of it).
   */
  #reasoningItems(items: readonly ReasoningItem[] | undefined): number {
    if (items === undefined) return 0;
    let total = 0;
    for (const item of items) {
      total += TOKENS_PER_MESSAGE;
      for (const part of item.summary) total += this.countText(part.text);
      for (const part of item.content ?? []) total += this.countText(part.text);
      if (item.encrypted_content)
        total += Math.ceil(item.encrypted_content.length / ENCRYPTED_CHARS_PER_TOKEN);
    }
    return total;
  }

  #content(content: ChatCompletionMessageParam['content']): number {
    if (content === null || content === undefined) return 0;
    if (typeof content === 'string') return this.countText(content);
    let total = 0;
    for (const part of content as readonly (
      | ChatCompletionContentPart
      | { type: 'refusal'; refusal: string }
    )[]) {
      switch (part.type) {
        case 'text':
          total += this.countText(part.text);
          break;
        case 'refusal':
          total += this.countText(part.refusal);
          break;
        case 'image_url':
          total += part.image_url.detail === 'low' ? IMAGE_TOKENS_LOW : IMAGE_TOKENS_HIGH;
          break;
        default:
          total += OPAQUE_PART_TOKENS;
      }
    }
    return total;
  }

  #countTool(tool: ChatCompletionTool): number {
    if (tool.type !== 'function') {
      const { name, description = '' } = tool.custom;
      return (
        TOOL_FUNC_INIT + this.countText(`${name}:${trimPeriod(description)}`) + this.#json(tool.custom.format)
      );
    }
    const fn = tool.function;
    let total = TOOL_FUNC_INIT + this.countText(`${fn.name}:${trimPeriod(fn.description ?? '')}`);
    total += this.#schema(fn.parameters);
    return total;
  }

  /**
   * The flat part of a JSON schema as the cookbook counts it (`key:type:description`, enum
   * items); anything nested (objects, arrays of objects, unions, `$defs`) is counted as its JSON
   * text, which over-counts a little: the safe side for a budget.
   */
  #schema(schema: Record<string, unknown> | undefined): number {
    if (!schema) return 0;
    const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
    let total = 0;
    if (properties && Object.keys(properties).length > 0) {
      total += TOOL_PROP_INIT;
      for (const [key, prop] of Object.entries(properties)) {
        const { type, description, enum: values, ...rest } = prop;
        total += TOOL_PROP_KEY;
        total += this.countText(`${key}:${typeName(type)}:${trimPeriod(String(description ?? ''))}`);
        if (Array.isArray(values)) {
          total += TOOL_ENUM_INIT;
          for (const value of values) total += TOOL_ENUM_ITEM + this.countText(String(value));
        }
        total += this.#json(nestedPart(rest));
      }
    }
    for (const key of ['$defs', 'definitions', 'anyOf', 'oneOf', 'allOf'] as const) {
      if (schema[key] !== undefined) total += this.#json(schema[key]);
    }
    return total;
  }

  #json(value: unknown): number {
    return value === undefined ? 0 : this.countText(JSON.stringify(value));
  }
}

/** Keys of a property schema that describe nested structure (counted as JSON). */
function nestedPart(rest: Record<string, unknown>): Record<string, unknown> | undefined {
  let nested: Record<string, unknown> | undefined;
  for (const key of ['properties', 'items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties', '$ref']) {
    if (rest[key] !== undefined && rest[key] !== false) {
      nested ??= {};
      nested[key] = rest[key];
    }
  }
  return nested;
}

function typeName(type: unknown): string {
  if (Array.isArray(type)) return type.join(' | ');
  return typeof type === 'string' ? type : 'any';
}

function trimPeriod(text: string): string {
  return text.endsWith('.') ? text.slice(0, -1) : text;
}

const shared = new Map<EncodingName, TokenCounter>();

/** One counter per encoding, shared so that every user of a message hits the same cache. */
export function tokenCounterFor(encoding: EncodingName = 'o200k_base'): TokenCounter {
  let counter = shared.get(encoding);
  if (!counter) {
    counter = new TokenCounter(encoding);
    shared.set(encoding, counter);
  }
  return counter;
}
