import { describe, expect, it } from 'vitest';
import {
  displayWidth,
  ellipsize,
  preview,
  shortenPath,
  wrapLine,
} from '../src/cli/terminal/terminal-layout.js';

describe('terminal layout', () => {
  it('measures wide characters and emoji as two columns, colour codes as none', () => {
    expect(displayWidth('🧭 Iris')).toBe(7);
    expect(displayWidth('\x1b[1mIris\x1b[22m')).toBe(4);
    expect(displayWidth('日本')).toBe(4);
  });

  it('wraps at word boundaries, continuation rows under the text of a list item', () => {
    const rows = wrapLine('2. *intake-workflow - Run a requirements intake and save the intake document', 59);
    expect(rows).toEqual([
      '2. *intake-workflow - Run a requirements intake and save',
      '   the intake document',
    ]);
    for (const row of rows) expect(displayWidth(row)).toBeLessThanOrEqual(59);
  });

  it('breaks a word longer than a row after a slash or dash, and closes colours at each break', () => {
    const rows = wrapLine(
      `see ${'/tmp/project/docs/requirements/intake-support-agents-lose-2026-11-23.md'}`,
      30,
    );
    expect(rows.every((r) => displayWidth(r) <= 30)).toBe(true);
    expect(rows.join('')).toBe('see /tmp/project/docs/requirements/intake-support-agents-lose-2026-11-23.md');
    const coloured = wrapLine(`\x1b[2m${'word '.repeat(12).trim()}\x1b[22m`, 20);
    expect(coloured.length).toBeGreaterThan(1);
    for (const row of coloured.slice(0, -1)) expect(row.endsWith('\x1b[0m')).toBe(true);
    for (const row of coloured.slice(1)) expect(row.startsWith('\x1b[2m')).toBe(true);
  });

  it('ends a preview in one ellipsis, never two', () => {
    expect(ellipsize('made to customers on …', 18)).toBe('made to customers…');
    expect(preview('# Requirements intake: Support agents lose track', 30, true)).toMatch(/^[^…]*…$/);
    expect(preview('short', 30, true)).toBe('short…');
    expect(ellipsize('fits', 10)).toBe('fits');
  });

  it('shortens a path from the left, then a file name in its middle', () => {
    expect(shortenPath('docs/requirements/reports/summary.md', 24)).toBe('…/reports/summary.md');
    const name = shortenPath('docs/reports/support-callbacks-summary-2026-11-23.md', 30);
    expect(displayWidth(name)).toBeLessThanOrEqual(30);
    expect(name).toMatch(/^support-callbacks\S*…\S*\.md$/);
  });
});
