import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looksLikeSecret } from '../src/events/secret-shape.js';
import { createRedactor, REDACTED } from '../src/index.js';

/**
 * Issue 15: known keys (the API key, OPENAI_API_KEY) are redacted only when they look like keys, so a
 * placeholder such as the scripted server's `scripted` does not eat the word. See docs/security.md.
 */

describe('only what looks like a secret is redacted', () => {
  it('placeholder and wordy known keys are not secrets: "the scripted server" stays readable', () => {
    for (const word of [
      'scripted',
      'test-key',
      'password',
      'not-needed',
      'lm-studio',
      'my-local-test-key-please',
    ]) {
      expect(looksLikeSecret(word), word).toBe(false);
      const redactor = createRedactor({ knownSecrets: [word], env: { OPENAI_API_KEY: word } });
      const text = `the ${word} server answered`;
      expect(redactor.redact(text)).toBe(text);
    }
    // Long but repetitive, or one case and no digit.
    for (const filler of [
      'sk-xxxxxxxxxxxxxxxxxxxxxxxx1',
      'aaaaaaaaaaaaaaaaaaaaaaaa1',
      'passwordpasswordpassword',
    ]) {
      expect(looksLikeSecret(filler), filler).toBe(false);
    }
  });

  it('real key formats are redacted, from the options and from OPENAI_API_KEY (property)', () => {
    const chars = (alphabet: string, min: number, max: number) =>
      fc.string({ unit: fc.constantFrom(...alphabet), minLength: min, maxLength: max });
    const base62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const keys = fc.oneof(
      chars(base62, 48, 48).map((s) => `sk-${s}`),
      chars(`${base62}-_`, 120, 160).map((s) => `sk-proj-${s}`),
      chars('0123456789abcdef', 32, 64),
      chars(base62, 20, 64),
    );
    fc.assert(
      fc.property(keys, fc.boolean(), (key, fromEnv) => {
        expect(looksLikeSecret(key)).toBe(true);
        const redactor = createRedactor(
          fromEnv
            ? { env: { OPENAI_API_KEY: key }, defaultPatterns: false }
            : { knownSecrets: [key], env: false, defaultPatterns: false },
        );
        expect(redactor.redact(`key=${key};`)).toBe(`key=${REDACTED};`);
      }),
      { numRuns: 500 },
    );
  });

  it('secrets configured explicitly are redacted as given, however short or wordy', () => {
    const redactor = createRedactor({ secrets: ['scripted', 'pw'], env: false });
    expect(redactor.redact('the scripted pw')).toBe(`the ${REDACTED} ${REDACTED}`);
  });
});
