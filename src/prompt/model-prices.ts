/** A model's price in US dollars per million tokens. */
export interface ModelPrice {
  /** Input tokens the server did not serve from its prompt cache. */
  inputPerMTok: number;
  /** Input tokens served from the prompt cache (default: the input price, the safe side). */
  cachedInputPerMTok?: number;
  outputPerMTok: number;
}

/** Prices by model name (`pricing` option): they override the built-in table or add models it lacks. */
export type ModelPricing = Record<string, ModelPrice>;

/**
 * The token counts a call is billed on, as either wire reports them: all input tokens (cached ones
 * included, as Chat Completions' `prompt_tokens` and the Responses API's `input_tokens` count them),
 * the cached part of them, and output tokens (reasoning tokens included).
 */
export interface BilledTokens {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

/** The date the built-in table was taken. */
export const PRICES_TAKEN = '2026-11-26';

/**
 * Standard-tier prices of OpenAI's common text models, USD per million tokens: input, cached input,
 * output. Source: OpenAI's pricing page (https://developers.openai.com/api/docs/pricing, standard
 * processing) as public pages reproduced it, taken on PRICES_TAKEN. Prices change: `pricing`
 * overrides a row. Only exact names (and their dated snapshots) are priced: a new model never
 * inherits a neighbour's price; it has an unknown cost until `pricing` names it.
 */
const BUILT_IN: Readonly<Record<string, readonly [number, number, number]>> = {
  'gpt-5.5': [5, 0.5, 30],
  'gpt-5.4': [2.5, 0.25, 15],
  'gpt-5.4-mini': [0.75, 0.075, 4.5],
  'gpt-5.4-nano': [0.2, 0.02, 1.25],
  'gpt-5.2': [1.75, 0.175, 14],
  'gpt-5.1': [1.25, 0.125, 10],
  'gpt-5': [1.25, 0.125, 10],
  'gpt-5-mini': [0.25, 0.025, 2],
  'gpt-5-nano': [0.05, 0.005, 0.4],
  'gpt-4.1': [2, 0.5, 8],
  'gpt-4.1-mini': [0.4, 0.1, 1.6],
  'gpt-4.1-nano': [0.1, 0.025, 0.4],
  'gpt-4o': [2.5, 1.25, 10],
  'gpt-4o-mini': [0.15, 0.075, 0.6],
  o3: [2, 0.5, 8],
  'o3-mini': [1.1, 0.55, 4.4],
  'o4-mini': [1.1, 0.275, 4.4],
};

/**
 * A model's price: `pricing`'s entry for the name as given, else the built-in row for the name
 * without a provider prefix (`openai/gpt-4o`) or a date suffix (`gpt-4o-2024-08-06`). `undefined`
 * when neither knows it: its cost is unknown, never 0.
 */
export function resolveModelPrice(model: string, pricing: ModelPricing = {}): ModelPrice | undefined {
  const name = model
    .slice(model.lastIndexOf('/') + 1)
    .toLowerCase()
    .replace(/-\d{4}-\d{2}-\d{2}$/, '');
  const row = entry(BUILT_IN, name);
  return (
    entry(pricing, model) ??
    entry(pricing, name) ??
    (row ? { inputPerMTok: row[0], cachedInputPerMTok: row[1], outputPerMTok: row[2] } : undefined)
  );
}

/** A table's own entry (never one inherited from `Object.prototype`, as `constructor` would be). */
function entry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** What a call with these counts costs at `price`, in USD. Cached input is billed at its own rate. */
export function callCostUsd(tokens: BilledTokens, price: ModelPrice): number {
  const cached = Math.min(Math.max(tokens.cachedInputTokens, 0), tokens.inputTokens);
  const uncached = tokens.inputTokens - cached;
  const cachedRate = price.cachedInputPerMTok ?? price.inputPerMTok;
  return (
    (uncached * price.inputPerMTok + cached * cachedRate + tokens.outputTokens * price.outputPerMTok) / 1e6
  );
}

/**
 * Checks a `pricing` option: every entry has finite, non-negative prices. Throws naming the model and
 * the field, so a typo (`outputPerMtok`) is not a free model.
 */
export function checkPricing(pricing: unknown): asserts pricing is ModelPricing | undefined {
  if (pricing === undefined) return;
  if (typeof pricing !== 'object' || pricing === null || Array.isArray(pricing))
    throw new Error('createAgent: `pricing` must be an object of prices by model name');
  for (const [model, price] of Object.entries(pricing)) {
    const p = price as Record<string, unknown> | null;
    for (const key of ['inputPerMTok', 'outputPerMTok', 'cachedInputPerMTok'] as const) {
      const value = p?.[key];
      if (key === 'cachedInputPerMTok' && value === undefined) continue;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw new Error(
          `createAgent: \`pricing["${model}"].${key}\` must be a non-negative number of USD per million tokens`,
        );
    }
  }
}
