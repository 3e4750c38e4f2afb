import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { Tmux } from './support/tmux.js';

// Issue 26: `/compact [focus]` in chat summarizes the older conversation after a turn and prints one
// line saying what it did. The scripted model answers every request (the summary call too) from the
// scenario (the summary call holds no assistant message: it gets the first turn's answer); the first
// message is long, so that its summary is shorter than what it replaces.

const tmux = new Tmux('chat-compact');
const BUNDLE = path.join(repoRoot, 'bundles', 'requirements-workflow');
let work: string;

beforeAll(async () => {
  await buildDist();
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'chat-compact-'));
}, 180_000);

afterAll(async () => {
  tmux.killServer();
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

describe('/compact in chat', () => {
  it('compacts after a turn and prints one line; says why when there is nothing to compact', async () => {
    const scenario = path.join(work, 'compact.yaml');
    await writeFile(
      scenario,
      'turns:\n  - content: "Noted."\n  - content: "Noted again."\n  - content: "Still here."\n',
    );
    const args = ['chat', '--bundle', BUNDLE, '--agent', 'intake-facilitator', '--project', work];
    args.push('--session', 'compact-1', '--scenario', scenario, '--model', 'gpt-4o-mini');
    tmux.start('compact', args, { cwd: work });
    await tmux.waitFor('compact', /you ›/);
    tmux.type('compact', '/compact');
    await tmux.waitFor('compact', /Nothing to compact yet: compact after a turn\./);
    tmux.type(
      'compact',
      `The product is a call-back tracker for support agents. ${'It must be simple. '.repeat(20)}`,
    );
    await tmux.waitFor('compact', /Noted\./);
    tmux.type('compact', 'And it must run on phones.');
    await tmux.waitFor('compact', /Noted again\./);
    tmux.type('compact', '/compact keep the platform decisions');
    const text = await tmux.waitFor(
      'compact',
      /· compacted: \d+ earlier messages summarized \(\d+ → \d+ tokens\)/,
    );
    expect(text).toContain('Compacting...');
    // The scenario answers by the assistant messages a request holds: the summary stands for the
    // first answer, so the next request holds one and gets the second turn's answer again.
    tmux.type('compact', 'What next?');
    await tmux.waitFor('compact', /What next\?\s*\n\S+ Iris › Noted again\./u);
    tmux.type('compact', '/exit');
    await tmux.waitFor('compact', /\[exit 0\]/);
  });
});
