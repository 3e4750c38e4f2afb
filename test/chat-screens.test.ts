import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../src/cli/terminal/terminal-layout.js';
import { buildDist, cliPath, repoRoot } from './support/build-dist.js';

/**
 * Issue 16: `agentloop chat` at 60 and 200 columns, in a real terminal (tmux). The screen is captured
 * at fixed points of a scripted session and compared with the captures in test/fixtures/chat-screens/,
 * after normalizing what varies (elapsed times, spinner frames, dates, ports, the project folder's number).
 * `AGENTLOOP_UPDATE_SCREENS=1 npx vitest run test/chat-screens.test.ts` writes the captures anew
 * (look at the diff before committing them).
 */
const SOCKET = `agentloop-screens-${process.pid}`;
const BUNDLE = path.join(repoRoot, 'bundles', 'requirements-workflow');
const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'chat-screens');
const UPDATE = process.env.AGENTLOOP_UPDATE_SCREENS === '1';
/**
 * The project folder: in /tmp with a name of fixed length and no `-`, `_` or `.` in its varying part,
 * so replies that print its paths wrap at the same places in every run (wrapping breaks long paths
 * after `/`, `-` or `_`).
 */
const PROJECT_ROOT = `/tmp/alscreens${String(process.pid).padStart(7, '0')}`;
const ROWS = 40;

const ANSWERS = [
  'Support agents lose track of promises made to customers on calls',
  'Support agents and their team leads',
  'Fewer than 2 percent of call-backs missed',
  'Reminders first, reports later',
  'Must use the current CRM',
];

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, '-f', '/dev/null', ...args], { encoding: 'utf8' });
}

/** Starts the built CLI in a new tmux session `columns` wide; the pane stays after the process ends. */
function start(name: string, columns: number, cwd: string, cliArgs: string[]): void {
  const command = [
    'env OPENAI_API_KEY= OPENAI_BASE_URL=',
    `node ${JSON.stringify(cliPath)} ${cliArgs.map((a) => JSON.stringify(a)).join(' ')}`,
    '; echo "[exit $?]"; sleep 600',
  ].join(' ');
  tmux('new-session', '-d', '-s', name, '-x', String(columns), '-y', String(ROWS), '-c', cwd, command);
}

/** The visible screen (`all`: with the scrollback), rows as the terminal shows them (not joined). */
function capture(name: string, all = false): string {
  return tmux('capture-pane', '-p', '-t', name, ...(all ? ['-S', '-'] : []))
    .replace(/\s+$/, '')
    .concat('\n');
}

async function waitFor(name: string, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = capture(name, true);
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in pane ${name}:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until the chat prompts for the next line (the prompt is the last row). */
const prompted = (name: string) => waitFor(name, /you ›\s*$/);

function type(name: string, text: string): void {
  tmux('send-keys', '-t', name, '-l', text);
  tmux('send-keys', '-t', name, 'Enter');
}

/** What varies between runs, made constant. */
function normalize(text: string): string {
  return (
    text
      .replaceAll(PROJECT_ROOT, '/tmp/alscreens0000000')
      // The scripted server's port: Linux picks ephemeral ports of five digits, so rows keep their length.
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:00000')
      .replace(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/g, '⠿')
      .replace(/\b\d+\.\ds\b/g, '0.0s')
      .replace(/\b\d+m\d\ds\b/g, '0m00s')
      .replace(/\b\d{4}-\d\d-\d\d\b/g, 'YYYY-MM-DD')
      // A shortened file name may keep part of its date.
      .replace(/\S*…\S*/g, (word) => word.replace(/\d/g, '0'))
  );
}

/** Several captures of one session under `==== point ====` headings, as the fixture holds them. */
async function compare(file: string, points: Record<string, string>): Promise<void> {
  const actual = Object.entries(points)
    .map(([point, text]) => `==== ${point} ====\n${normalize(text)}`)
    .join('\n');
  const fixture = path.join(FIXTURES, file);
  if (UPDATE || !existsSync(fixture)) {
    await mkdir(FIXTURES, { recursive: true });
    await writeFile(fixture, actual);
    if (!UPDATE) throw new Error(`wrote ${fixture}: it did not exist; check it and commit it`);
  }
  const expected = await readFile(fixture, 'utf8');
  if (actual !== expected) {
    await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
    await writeFile(path.join(repoRoot, 'test-artifacts', file), actual);
  }
  expect(actual).toBe(expected);
}

const rowsOf = (text: string) => text.replace(/\n$/, '').split('\n');

/** Rows the terminal wrapped by itself: they fill every column, and what they cut goes on below. */
function overfull(text: string, columns: number): string[] {
  return rowsOf(text).filter((row) => displayWidth(row) >= columns);
}

beforeAll(async () => {
  await buildDist();
  await rm(PROJECT_ROOT, { recursive: true, force: true });
  await mkdir(PROJECT_ROOT);
  // The tools modules written below import zod: outside the repository, through a link to its modules.
  await symlink(path.join(repoRoot, 'node_modules'), path.join(PROJECT_ROOT, 'node_modules'));
}, 180_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // no server left
  }
  await rm(PROJECT_ROOT, { recursive: true, force: true, maxRetries: 5 });
});

describe.each([60, 200])('agentloop chat at %i columns', (columns) => {
  it('runs the intake to its saved document; the screens match the expected captures', async () => {
    const name = `intake-${columns}`;
    const cwd = path.join(PROJECT_ROOT, name);
    await mkdir(cwd);
    start(name, columns, cwd, [
      'chat',
      '--bundle',
      BUNDLE,
      '--agent',
      'intake-facilitator',
      '--session',
      name,
    ]);
    const greeting = await prompted(name);
    type(name, '*intake-workflow');
    await waitFor(name, /Step 1 of 5[\s\S]*you ›\s*$/);
    // Each answer is followed by the next step (wrapped at 60 columns), not by a prompt alone: right after
    // send-keys the screen may still end in the prompt the answer was typed at, taken as the next one.
    for (const [i, answer] of ANSWERS.slice(0, -1).entries()) {
      type(name, answer);
      await waitFor(name, new RegExp(`Step\\s+${i + 2}\\s+of\\s+5[\\s\\S]*you ›\\s*$`));
    }
    type(name, ANSWERS.at(-1)!);
    await waitFor(name, /wants to run[\s\S]*Allow\?[\s\S]*›\s*$/);
    const approval = capture(name);
    type(name, 'y');
    await waitFor(name, /Saved the intake document[\s\S]*you ›\s*$/);
    const saved = capture(name);
    type(name, '/exit');
    const whole = await waitFor(name, /\[exit 0\]/);

    // Each bug of the issue, on its own.
    // 1. After an approval the reply's last row stayed on screen (readline used to erase it).
    expect(saved).toMatch(/A good next step\s+is\s+\*stakeholder-map,\s+with\s+a\s+real\s+model\.\n+you ›/);
    // 2. Nothing wrapped mid-word: no row fills the terminal (the terminal's own wrap), in the
    //    header and the menu, the approval prompt and its answer, or anywhere else.
    expect(overfull(greeting, columns)).toEqual([]);
    expect(overfull(approval, columns)).toEqual([]);
    expect(overfull(whole, columns)).toEqual([]);
    // The menu's continuation rows start under its text, the approval's under the value.
    if (columns === 60) {
      expect(greeting).toMatch(
        /^2\. \*intake-workflow - Run a requirements intake and save\n {3}the intake document$/m,
      );
      expect(approval).toMatch(/^ {4}file_path: docs\/requirements\/\S+\n {15}\S+\.md$/m);
      expect(saved).toMatch(
        /^ {2}Allow\? \[y\]es \/ \[n\]o \(reason\) \/ \[a\]lways for\n {2}save_output › y$/m,
      );
    }
    // 3. Tool lines and the approval show the path a call writes, its variables filled, relative to
    // the project: what is approved is the real target.
    expect(whole).not.toMatch(/…\/\{output_folder\}/);
    expect(approval).not.toContain('{output_folder}');
    expect(whole).toMatch(/^✓ save_output \S*intake-sup\S*\.md \d+\.\ds → saved \(\d+ bytes\)$/m);
    // 4. A preview ends in one ellipsis: none twice in a row (`… …`) or within one word (`…/x/y…`).
    expect(rowsOf(whole).filter((row) => /…\s*…|…\S*…/.test(row))).toEqual([]);
    expect(approval).toMatch(
      /content: # Requirements intake: Support agents[^\n…]*…[\s\S]*?\(447 chars, 25 lines\)/,
    );

    await compare(`intake-${columns}.txt`, { greeting, approval, saved, whole });
  }, 90_000);

  it('shows the resolved path of a running tool in the spinner, then the interrupted call', async () => {
    const name = `spinner-${columns}`;
    const cwd = path.join(PROJECT_ROOT, name);
    await mkdir(cwd);
    const tools = path.join(cwd, '..', `slow-tools-${columns}.mjs`);
    await writeFile(
      tools,
      `import { z } from 'zod';
import { defineTool } from ${JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', 'index.js')).href)};
export const tools = [defineTool({
  name: 'export_report',
  description: 'slow',
  parameters: z.object({ file_path: z.string() }),
  execute: (_args, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
})];
`,
    );
    const scenario = path.join(cwd, '..', `slow-${columns}.yaml`);
    await writeFile(
      scenario,
      `turns:
  - toolCalls: [{ name: export_report, arguments: { file_path: "{output_folder}/reports/support-callbacks-summary-{date}.md" } }]
  - content: Stopped the export as you asked.
`,
    );
    start(name, columns, cwd, [
      'chat',
      '--bundle',
      BUNDLE,
      '--agent',
      'intake-facilitator',
      '--session',
      name,
      '--scenario',
      scenario,
      '--tools',
      tools,
    ]);
    await prompted(name);
    type(name, 'export the support call-back report');
    await waitFor(name, /export_report \S+ \d+\.\ds/);
    const spinner = capture(name);
    tmux('send-keys', '-t', name, 'C-c');
    await waitFor(name, /Stopped\. The session is saved[\s\S]*you ›\s*$/);
    const stopped = capture(name);
    type(name, '/exit');
    await waitFor(name, /\[exit 0\]/);

    const spinnerRow = rowsOf(spinner).find((row) => row.includes('export_report'))!;
    // The path with {output_folder} and {date} filled, relative to the project, shortened to fit.
    expect(spinnerRow).not.toContain('{');
    expect(displayWidth(spinnerRow)).toBeLessThan(columns);
    if (columns === 200) {
      expect(spinnerRow).toMatch(
        /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] export_report docs\/requirements\/reports\/support-callbacks-summary-\d{4}-\d\d-\d\d\.md \d+\.\ds {2}\(Ctrl\+C to stop\)$/,
      );
    } else {
      expect(spinnerRow).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] export_report support-callbacks\S*…\S*\.md \d+\.\ds$/);
    }
    expect(stopped).toMatch(/^✗ export_report \S+\.md \d+\.\ds interrupted$/m);
    expect(overfull(stopped, columns)).toEqual([]);
    await compare(`spinner-${columns}.txt`, { spinner, stopped });
  }, 60_000);
});
