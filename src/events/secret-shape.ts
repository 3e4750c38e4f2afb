/**
 * Whether a value the program knows as a key (the API key, `OPENAI_API_KEY`) looks like a secret, so
 * that redacting it cannot eat ordinary words: a local server's placeholder key such as `scripted`,
 * `test-key` or `lm-studio` would otherwise be replaced in every sentence that uses the word.
 * Secrets the user configures (`secrets`) are not judged: they are redacted as given.
 * See docs/security.md (Redaction and terminal output).
 */

/**
 * Shorter known keys are not treated as secrets. Real keys are longer: OpenAI's `sk-` + 48 (51),
 * `sk-proj-...` (about 164), hex keys of 32, other providers' random tokens of 32 to 64 characters.
 */
export const MIN_SECRET_LENGTH = 16;

/**
 * The least Shannon entropy of a key's characters, in bits per character. Random keys are far above
 * it (over 500,000 random keys each, the lowest seen: 32 hex characters 2.79, 20 base62 characters
 * 3.17, `sk-` + 48 base62 4.33, `sk-proj-` + 156 5.41); a repeated filler (`sk-xxxxxxxx...`,
 * `aaaa...1`) is below it.
 */
export const MIN_BITS_PER_CHAR = 2.5;

/** The key the CLI gives the client for its built-in scripted server (src/cli/model/model-connection.ts). */
export const SCRIPTED_SERVER_API_KEY = 'scripted';

/**
 * Placeholder keys agentloop itself gives the OpenAI client when the server needs none (the client
 * refuses an empty key): never secrets, whatever the rules above say of them. `not-needed` is
 * `createOpenAIClient`'s (src/llm/openai-client.ts).
 */
export const PLACEHOLDER_API_KEYS: ReadonlySet<string> = new Set(['not-needed', SCRIPTED_SERVER_API_KEY]);

/**
 * Whether `value` looks like a key: at least `MIN_SECRET_LENGTH` characters, no whitespace, letters
 * mixed with digits or upper with lower case (a word or a hyphenated phrase such as
 * `my-local-test-key` is neither), and at least `MIN_BITS_PER_CHAR` bits of entropy per character.
 */
export function looksLikeSecret(value: string): boolean {
  if (value.length < MIN_SECRET_LENGTH || PLACEHOLDER_API_KEYS.has(value)) return false;
  if (/\s/.test(value)) return false;
  const letters = /[A-Za-z]/.test(value);
  const digits = /[0-9]/.test(value);
  const mixedCase = /[a-z]/.test(value) && /[A-Z]/.test(value);
  if (!((letters && digits) || mixedCase)) return false;
  return bitsPerChar(value) >= MIN_BITS_PER_CHAR;
}

/** Shannon entropy of the characters of `text`, in bits per character. */
export function bitsPerChar(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  const total = Array.from(text).length;
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / total;
    bits -= p * Math.log2(p);
  }
  return bits;
}
