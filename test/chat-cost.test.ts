import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { Tmux } from './support/tmux.js';

// Issue 26: chat prints what the session has cost after each turn, for a model with a price. The
// scripted server answers under a priced model's name (gpt-4o-mini: $0.15 per million input tokens,
// $0.60 per million output tokens) and reports the usage the scenario scripts.

const tmux = new Tmux('chat-cost');
const BUNDLE = path.join(repoRoot, 'bundles', 'requirements-workflow');
let work: string;

beforeAll(async () => {
  await buildDist();
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'chat-cost-'));
}, 180_000);

afterAll(async () => {
  tmux.killServer();
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

describe('agentloop chat on a model with a price', () => {
  it("shows the session's cost after each turn, and /usage the turn's and the session's", async () => {
    const scenario = path.join(work, 'priced.yaml');
    // Each turn: 100,000 input tokens ($0.015) and 10,000 output tokens ($0.006).
    const turn = '  - content: "Noted."\n    usage: { prompt_tokens: 100000, completion_tokens: 10000 }\n';
    await writeFile(scenario, `turns:\n${turn}${turn}`);
    const args = ['chat', '--bundle', BUNDLE, '--agent', 'intake-facilitator', '--project', work];
    args.push('--session', 'priced-1', '--scenario', scenario, '--model', 'gpt-4o-mini');
    tmux.start('cost', args, { cwd: work });
    await tmux.waitFor('cost', /you ›/);
    tmux.type('cost', 'first');
    await tmux.waitFor('cost', /· session cost \$0\.0210/);
    tmux.type('cost', 'second');
    await tmux.waitFor('cost', /· session cost \$0\.0420/);
    tmux.type('cost', '/usage');
    const text = await tmux.waitFor('cost', /Cost: last turn \$0\.0210, session \$0\.0420\./);
    expect(text.match(/session cost/g)).toHaveLength(2);
    tmux.type('cost', '/exit');
    await tmux.waitFor('cost', /\[exit 0\]/);
  });
});
