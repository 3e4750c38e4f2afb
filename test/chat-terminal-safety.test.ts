import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, cliPath, repoRoot } from './support/build-dist.js';

/**
 * Issue 15: `agentloop chat` in a real terminal (tmux) gets a reply full of control sequences: an
 * OSC 52 clipboard write, an OSC 2 title, a screen clear and a reset. tmux acts on each of them
 * (with `set-clipboard on`, OSC 52 fills a paste buffer), so the test reads what the terminal did.
 */
const SOCKET = `agentloop-chat-safety-${process.pid}`;
const BUNDLE = path.join(repoRoot, 'bundles', 'requirements-workflow');
let work: string;

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, '-f', '/dev/null', ...args], { encoding: 'utf8' });
}

async function waitFor(name: string, pattern: RegExp, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = tmux('capture-pane', '-p', '-J', '-S', '-500', '-t', name);
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in pane ${name}:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts the built CLI's chat on the scripted model in a new 120x40 tmux session. */
function start(name: string, scenario: string, env = ''): void {
  const command = [
    `env OPENAI_API_KEY=${env} OPENAI_BASE_URL=`,
    `node ${JSON.stringify(cliPath)} chat --bundle ${JSON.stringify(BUNDLE)} --agent intake-facilitator`,
    `--project ${JSON.stringify(work)} --session ${name}-1 --scenario ${JSON.stringify(scenario)}`,
    '; echo "[exit $?]"; sleep 600',
  ].join(' ');
  tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '40', '-c', work, command);
}

function type(name: string, text: string): void {
  tmux('send-keys', '-t', name, '-l', text);
  tmux('send-keys', '-t', name, 'Enter');
}

beforeAll(async () => {
  await buildDist();
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'chat-safety-'));
}, 180_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // no server left
  }
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

describe('agentloop chat in a terminal, with control sequences in the reply', () => {
  it('shows the text; the clipboard, the title and the screen are untouched', async () => {
    const scenario = path.join(work, 'escapes.yaml');
    // YAML double quotes: \e is ESC, \a is BEL.
    await writeFile(
      scenario,
      'turns:\n  - content: "Here you go.\\e]52;c;cm0gLXJmIH4=\\a\\e]2;pwned-title\\a\\e[2J\\e[H\\ec see \\e]8;;https://evil.example\\e\\\\the docs\\e]8;;\\e\\\\ now."\n',
    );
    start('esc', scenario);
    tmux('set-option', '-g', 'set-clipboard', 'on');
    await waitFor('esc', /you ›/);
    const title = tmux('display-message', '-p', '-t', 'esc', '#{pane_title}').trim();
    type('esc', 'hello');
    const text = await waitFor('esc', /the docs[\s\S]*you ›\s*$/);
    // Nothing reached the clipboard (tmux's paste buffers) or the title.
    expect(tmux('list-buffers').trim()).toBe('');
    expect(tmux('display-message', '-p', '-t', 'esc', '#{pane_title}').trim()).toBe(title);
    // The visible screen was neither cleared nor reset: the banner is still on it, and the reply whole.
    expect(tmux('capture-pane', '-p', '-t', 'esc')).toMatch(/agentloop chat · /);
    expect(text).toMatch(/Here you go\. see the docs now\./);
    type('esc', '/exit');
    await waitFor('esc', /\[exit 0\]/);
  });

  it('/history shows the conversation redacted: a key the model said is not printed', async () => {
    const key = 'sk-proj-Wm3Rt8Yq1Lz6Kd9Hb2Nf5Xc0Vg4Js7Pa';
    const scenario = path.join(work, 'key.yaml');
    await writeFile(scenario, `turns:\n  - content: "Your key is ${key}, keep it safe."\n`);
    start('hist', scenario, key);
    await waitFor('hist', /you ›/);
    type('hist', 'what is my key?');
    await waitFor('hist', /Your key is \[REDACTED\], keep it safe\.[\s\S]*you ›\s*$/);
    type('hist', '/history');
    const text = await waitFor('hist', /\/history[\s\S]*Your key is[\s\S]*you ›\s*$/);
    expect(text).not.toContain(key);
    expect(text.split('Your key is [REDACTED], keep it safe.')).toHaveLength(3);
    type('hist', '/exit');
    await waitFor('hist', /\[exit 0\]/);
  });
});
