import { DEFAULTS } from '../defaults.js';

/** The BPE encodings agentloop counts with. */
export type EncodingName = 'o200k_base' | 'cl100k_base';

/** What the context window needs to know about a model. */
export interface ModelWindow {
  /** Input plus output tokens the model accepts. */
  contextWindow: number;
  encoding: EncodingName;
  /** Whether the model was found in the table (false: the defaults were used). */
  known: boolean;
}

/** A row of the table: a model name pattern and its window. */
interface ModelFamily {
  pattern: RegExp;
  contextWindow: number;
  encoding: EncodingName;
}

/**
 * Known families, first match wins (specific rows before general ones). Dated snapshots
 * (`gpt-4o-2024-08-06`) fall under their family. A new member of a family (`gpt-5.9`) gets the
 * family's window; an unknown `gpt-4.x` falls to gpt-4's small window, the safe side.
 */
const FAMILIES: readonly ModelFamily[] = [
  { pattern: /^gpt-5(\.\d+)?-chat/, contextWindow: 128_000, encoding: 'o200k_base' },
  { pattern: /^gpt-5/, contextWindow: 400_000, encoding: 'o200k_base' },
  { pattern: /^gpt-4\.1/, contextWindow: 1_047_576, encoding: 'o200k_base' },
  { pattern: /^gpt-4\.5/, contextWindow: 128_000, encoding: 'o200k_base' },
  { pattern: /^(chatgpt-4o|gpt-4o)/, contextWindow: 128_000, encoding: 'o200k_base' },
  { pattern: /^gpt-oss/, contextWindow: 131_072, encoding: 'o200k_base' },
  { pattern: /^o1-(mini|preview)/, contextWindow: 128_000, encoding: 'o200k_base' },
  { pattern: /^o\d+(-|$)/, contextWindow: 200_000, encoding: 'o200k_base' },
  { pattern: /^gpt-4-32k/, contextWindow: 32_768, encoding: 'cl100k_base' },
  { pattern: /^gpt-4-(turbo|1106|0125|vision)/, contextWindow: 128_000, encoding: 'cl100k_base' },
  { pattern: /^gpt-4(-|\.|$)/, contextWindow: 8_192, encoding: 'cl100k_base' },
  { pattern: /^gpt-3\.5-turbo-instruct/, contextWindow: 4_096, encoding: 'cl100k_base' },
  { pattern: /^gpt-3\.5/, contextWindow: 16_385, encoding: 'cl100k_base' },
];

/** Overrides: a window for a model the table does not know, or a different one for one it does. */
export interface ModelWindowOverrides {
  contextWindow?: number;
  encoding?: EncodingName;
}

/**
 * Looks up a model's context window and encoding. A provider prefix (`openai/gpt-4o`) is ignored.
 * An unknown model (a local or third-party one) gets o200k_base and a 128k window
 * (`DEFAULTS.unknownModelContextWindow`); pass `overrides` when you know better.
 */
export function resolveModelWindow(model: string, overrides: ModelWindowOverrides = {}): ModelWindow {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  const family = FAMILIES.find((f) => f.pattern.test(name));
  return {
    contextWindow: overrides.contextWindow ?? family?.contextWindow ?? DEFAULTS.unknownModelContextWindow,
    encoding: overrides.encoding ?? family?.encoding ?? 'o200k_base',
    known: family !== undefined,
  };
}
