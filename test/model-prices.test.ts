import { describe, expect, it } from 'vitest';
import { callCostUsd, resolveModelPrice } from '../src/prompt/model-prices.js';

describe('model prices', () => {
  it('bills cached input at its own rate, and never more cached tokens than input tokens', () => {
    const price = { inputPerMTok: 10, cachedInputPerMTok: 1, outputPerMTok: 100 };
    // 600k uncached x $10 + 400k cached x $1 + 10k output x $100 per million.
    expect(callCostUsd({ inputTokens: 1e6, cachedInputTokens: 4e5, outputTokens: 1e4 }, price)).toBeCloseTo(
      7.4,
      10,
    );
    expect(callCostUsd({ inputTokens: 100, cachedInputTokens: 500, outputTokens: 0 }, price)).toBeCloseTo(
      1e-4,
      12,
    );
    // Without a cached price, cached tokens cost what input costs (the safe side).
    const plain = { inputPerMTok: 10, outputPerMTok: 100 };
    expect(callCostUsd({ inputTokens: 1e6, cachedInputTokens: 4e5, outputTokens: 0 }, plain)).toBeCloseTo(
      10,
      10,
    );
  });

  it('finds a model by its name, a dated snapshot or a provider prefix; nothing for a new or unknown one', () => {
    expect(resolveModelPrice('gpt-4.1-mini')).toEqual({
      inputPerMTok: 0.4,
      cachedInputPerMTok: 0.1,
      outputPerMTok: 1.6,
    });
    expect(resolveModelPrice('openai/gpt-4o-2024-08-06')).toEqual(resolveModelPrice('gpt-4o'));
    // A new member of a family does not inherit a neighbour's price.
    expect(resolveModelPrice('gpt-4o-mini-search-preview')).toBeUndefined();
    expect(resolveModelPrice('llama3.1:8b')).toBeUndefined();
    // Names that are keys of every object are not prices.
    expect(resolveModelPrice('constructor')).toBeUndefined();
    expect(resolveModelPrice('toString', {})).toBeUndefined();
  });

  it('pricing adds a model and overrides a built-in row, by the name as given or as normalised', () => {
    const mine = { inputPerMTok: 1, outputPerMTok: 2 };
    expect(resolveModelPrice('my-model', { 'my-model': mine })).toBe(mine);
    expect(resolveModelPrice('gpt-4o', { 'gpt-4o': mine })).toBe(mine);
    expect(resolveModelPrice('openai/gpt-4o-2024-08-06', { 'gpt-4o': mine })).toBe(mine);
  });
});
