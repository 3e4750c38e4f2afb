/**
 * `agentloop replay` as a real process: a session recorded by `agentloop chat` (stdin piped, the
 * example bundle copied into a temp project, a scenario with a tool call) replays with exit 0; after
 * the bundle's agent changes, strict replay exits 1 with the diff, sequential 0 with warnings; an
 * unknown session or an unreadable file exits 2 with one line naming it.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';
import { serve } from './support/harness.js';

let work: string;
let bundle: string;

beforeAll(async () => {
  await buildDist();
  work = await mkdtemp(path.join(tmpdir(), 'replay-cli-'));
  bundle = path.join(work, 'bundle');
  await cp(path.join(repoRoot, 'bundles', 'requirements-workflow'), bundle, { recursive: true });
  const scenario = path.join(work, 'scenario.yaml');
  await writeFile(
    scenario,
    [
      'turns:',
      '  - toolCalls:',
      '      - name: read_file',
      '        arguments: { file_path: "{bundle-root}/templates/stakeholder-map.md" }',
      '  - content: I read the stakeholder map template.',
    ].join('\n'),
  );
  const chat = ['chat', '--bundle', bundle, '--agent', 'intake-facilitator', '--project', work];
  const recorded = await runCli([...chat, '--session', 'rec', '--scenario', scenario], {
    cwd: work,
    input: 'read the template\n/exit\n',
  });
  expect(recorded.code, recorded.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

const replay = (...args: string[]) => runCli(['replay', ...args, '--project', work], { cwd: work });

describe('agentloop replay', () => {
  it('exit 0: prints the replayed turns, from the session id or its transcript file, tools recorded or live', async () => {
    const bySession = await replay('rec');
    expect(bySession.stderr).toBe('');
    expect(bySession.code).toBe(0);
    expect(bySession.stdout).toContain(
      'replaying session "rec": 2 model calls (match strict, tools recorded)',
    );
    expect(bySession.stdout).toContain('turn 1 > read the template');
    expect(bySession.stdout).toMatch(/ {2}tool read_file \{"file_path":".*stakeholder-map\.md"\}/);
    expect(bySession.stdout).toContain('  < I read the stakeholder map template.');
    expect(bySession.stdout).toMatch(/ok: the replay matches the recording \(2 model calls\)\n$/);

    const file = path.join(work, '.agentloop', 'sessions', 'rec', 'transcript.jsonl');
    const byFile = await replay(file, '--tools', 'live');
    expect(byFile.code, byFile.stdout).toBe(0);
    expect(byFile.stdout).toContain('tools live');
  }, 60_000);

  it('exit 2 on bad input: an unknown session, an unreadable file, a wrong flag value (one line each)', async () => {
    const unknown = await replay('no-such-session');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^agentloop replay: no session "no-such-session" in .*\n$/);
    const missing = await replay('missing/transcript.jsonl');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^agentloop replay: missing\/transcript\.jsonl: cannot read the transcript \(ENOENT[^\n]*\n$/,
    );
    const flag = await replay('rec', '--tools', 'some');
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe(
      'agentloop replay: --tools must be recorded or live (got "some"); see agentloop replay --help\n',
    );
  }, 60_000);

  it('tools: recorded replays a changed file as recorded (exit 0); live reads it again and diverges (exit 1)', async () => {
    const template = path.join(bundle, 'templates', 'stakeholder-map.md');
    const original = await readFile(template, 'utf8');
    await writeFile(template, '# A different map\n');
    try {
      const recorded = await replay('rec');
      expect(recorded.code, recorded.stdout).toBe(0);
      const live = await replay('rec', '--tools', 'live');
      expect(live.code, live.stdout + live.stderr).toBe(1);
      expect(live.stdout).toMatch(
        /diverged after model call 1: tool call \S+ \(read_file\) returned another result/,
      );
      expect(live.stdout).toMatch(/ {2}- recorded: ".*stakeholder-map\.md/);
      expect(live.stdout).toMatch(/ {2}\+ replay: {3}".*# A different map.*"\n/);
    } finally {
      await writeFile(template, original);
    }
  }, 60_000);

  it('--then-live: a fork with a new message replays to its cut, then the live model answers it', async () => {
    const transcript = path.join(work, '.agentloop', 'sessions', 'rec', 'transcript.jsonl');
    const entries = (await readFile(transcript, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { seq: number; kind: string; message?: { role: string } });
    const answer = entries.filter((e) => e.kind === 'message' && e.message?.role === 'assistant').at(-1)!;
    const sessions = path.join(work, '.agentloop', 'sessions');
    const forked = await runCli(
      ['fork', 'rec', '--at', String(answer.seq), '--message', 'and now?', '--sessions-dir', sessions],
      { cwd: work },
    );
    expect(forked.code, forked.stderr).toBe(0);
    const fork = forked.stdout.trim();

    // The live model answers by the assistant messages in the request: the two recorded ones come first.
    const live = await serve({
      turns: [{ content: 'not asked' }, { content: 'not asked' }, { content: 'Live now.' }],
    });
    const env = { OPENAI_BASE_URL: live.url, OPENAI_API_KEY: 'live-key' };
    const run = await runCli(['replay', fork, '--then-live', '--model', 'live-model', '--project', work], {
      cwd: work,
      env,
    });
    expect(run.stderr).toBe('');
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain('turn 2 > and now?\n  < Live now.\n');
    expect(run.stdout).toMatch(
      /ok: the replay matches the recording \(2 model calls\), then went on live at model call 3 \(turn 2; 1 live model call\)\n$/,
    );
    expect(live.requests.map((r) => r.model)).toEqual(['live-model']);

    // Without --then-live the same fork diverges past the recording; without a live model it is bad input.
    const plain = await replay(fork);
    expect(plain.code, plain.stdout).toBe(1);
    const keyless = await replay(fork, '--then-live');
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toBe(
      'agentloop replay: --then-live needs a live model: set OPENAI_API_KEY (or OPENAI_BASE_URL)\n',
    );
    const modelOnly = await replay(fork, '--model', 'live-model');
    expect([modelOnly.code, modelOnly.stderr]).toEqual([
      2,
      'agentloop replay: --model names the live model: use it with --then-live; see agentloop replay --help\n',
    ]);
    expect(live.requestCount).toBe(1);
  }, 60_000);

  it('exit 1 with a readable diff when the agent changed; sequential goes through with warnings', async () => {
    const agentFile = path.join(bundle, 'agents', 'intake-facilitator.md');
    const text = await readFile(agentFile, 'utf8');
    await writeFile(agentFile, text.replace('for small product teams', 'for large product teams'));
    // The other tests replay the recording against this copy of the bundle: put the agent back.
    try {
      const strict = await replay('rec');
      expect(strict.code, strict.stdout + strict.stderr).toBe(1);
      expect(strict.stdout).toContain(
        'diverged at model call 1 (turn 1, iteration 1): the request is not the recorded one',
      );
      expect(strict.stdout).toContain('  at messages[0].content');
      expect(strict.stdout).toMatch(/ {2}- recorded: ".*for small product teams.*/);
      expect(strict.stdout).toMatch(/ {2}\+ replay: {3}".*for large product teams.*/);

      const sequential = await replay('rec', '--match', 'sequential');
      expect(sequential.code, sequential.stdout).toBe(0);
      expect(sequential.stdout).toMatch(
        /warning: model call 1 \(turn 1, iteration 1\): the request differs at messages\[0\]\.content/,
      );
      expect(sequential.stdout).toContain('ok: the replay matches the recording');
    } finally {
      await writeFile(agentFile, text);
    }
  }, 60_000);
});
