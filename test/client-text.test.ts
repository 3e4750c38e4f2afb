import { describe, expect, it } from 'vitest';
import { scrubForClient } from '../src/server/client-text.js';

describe('scrubForClient (text for a web or MCP client)', () => {
  it('replaces absolute paths, POSIX and Windows, wherever they stand', () => {
    expect(scrubForClient('could not read /home/ann/notes/a.md: gone')).toBe('could not read <path>: gone');
    expect(scrubForClient('/srv/app/x.json')).toBe('<path>');
    expect(scrubForClient('file="/tmp/x/y"')).toBe('file="<path>"');
    expect(scrubForClient('open C:\\Users\\ann\\a.txt failed')).toBe('open <path> failed');
    expect(scrubForClient('both /a/b and D:\\x\\y.md')).toBe('both <path> and <path>');
  });

  it('leaves text without a path as it is (relative paths, fractions, URLs keep their words)', () => {
    for (const text of ['The answer is 42.', 'see notes/a.md', '3/4 done', 'a: b', 'C: drive', '']) {
      expect(scrubForClient(text)).toBe(text);
    }
  });

  it('redacts first, then scrubs what the redactor left', () => {
    const redact = (text: string) => text.replace('sk-secret', '[REDACTED]');
    expect(scrubForClient('key sk-secret at /etc/app/key', redact)).toBe('key [REDACTED] at <path>');
    // A redactor that brings a separator in: its output is what is scrubbed.
    expect(scrubForClient('where?', () => 'at /var/lib/x')).toBe('at <path>');
  });
});
