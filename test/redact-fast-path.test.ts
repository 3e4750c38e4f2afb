import { describe, expect, it } from 'vitest';
import { createRedactor } from '../src/index.js';

describe('redaction fast path (text shorter than every secret is not scanned)', () => {
  it('still finds secrets exactly as long as the shortest pattern match', () => {
    const r = createRedactor({ env: false });
    expect(r.redact(`sk-${'a'.repeat(20)}`)).toBe('[REDACTED]');
    expect(r.redact(`Bearer ${'b'.repeat(8)}`)).toBe('[REDACTED]');
    expect(r.redact(`sk-${'a'.repeat(19)}`)).toBe(`sk-${'a'.repeat(19)}`);
  });

  it('does not skip short text when a configured secret or pattern is short', () => {
    const r = createRedactor({ env: false, secrets: ['pw1', /\d{3}-\d{2}/] });
    expect(r.redact('a pw1 b')).toBe('a [REDACTED] b');
    expect(r.redact('id 123-45')).toBe('id [REDACTED]');
    expect(r.redactValue({ short: 'pw1' })).toEqual({ short: '[REDACTED]' });
  });
});
