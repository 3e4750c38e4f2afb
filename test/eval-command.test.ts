/**
 * `agentloop eval` as users run it (`node dist/cli/main.js`, no OpenAI variables): the example suite
 * in examples/evals passes on the scripted model; a copy with a failing expectation exits 1 naming the
 * case and the miss; bad input exits 2 with one line naming the file and key; --record and --report
 * write their files.
 */
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';

const EXAMPLE = path.join(repoRoot, 'examples', 'evals');
const SUITE = 'support-desk.eval.yaml';
let work: string;

beforeAll(async () => {
  await buildDist();
  // Inside the repository: the example agent imports `agentloop` (the package itself) and zod.
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'eval-command-'));
}, 180_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

/** A copy of the example suite folder with one of its files (the suite by default) changed by `edit`. */
async function editedCopy(name: string, edit: (text: string) => string, file = SUITE): Promise<string> {
  const dir = path.join(work, name);
  await cp(EXAMPLE, dir, { recursive: true });
  const target = path.join(dir, file);
  const text = await readFile(target, 'utf8');
  const edited = edit(text);
  expect(edited).not.toBe(text);
  await writeFile(target, edited);
  return dir;
}

describe('agentloop eval', () => {
  it('runs the example suite on the scripted model: a line per case, then the closing line', async () => {
    const { code, stdout, stderr } = await runCli(['eval', 'examples/evals'], {
      cwd: repoRoot,
      timeoutMs: 60_000,
    });
    expect(stderr).toBe('');
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      'pass  support-desk › refunds a damaged order (live)',
      'pass  support-desk › the recorded refund replays (replay)',
      'pass  support-desk › order status as JSON (live, 3/3 trials)',
      '3 passed, 0 failed',
    ]);
    expect(code).toBe(0);
  });

  it('a failing expectation exits 1 naming the case and the miss', async () => {
    const dir = await editedCopy('failing', (text) => text.replace('contains: A-1001', 'contains: A-9999'));
    const { code, stdout } = await runCli(['eval', dir], { timeoutMs: 60_000 });
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'FAIL  support-desk › refunds a damaged order (live): output does not contain "A-9999": ' +
        '"I refunded 42.50 EUR for order A-1001. Sorry it arrived damaged."',
    );
    expect(lines.at(-1)).toBe('2 passed, 1 failed');
    expect(code).toBe(1);
  });

  it('a changed tool schema makes the replay cases fail at the first model call, naming the path', async () => {
    const dir = await editedCopy(
      'changed-tool',
      (text) =>
        text.replace(
          'z.object({ orderId: z.string() })',
          "z.object({ orderId: z.string().describe('the id') })",
        ),
      'support-agent.mjs',
    );
    const { code, stdout } = await runCli(['eval', dir, '--mode', 'replay'], { timeoutMs: 60_000 });
    const miss =
      'replay diverged: model call 1 (turn 1, iteration 1): the request differs at ' +
      'tools[0].function.parameters.properties.orderId.description: recorded (absent), now "the id"';
    expect(stdout.trimEnd().split('\n')).toEqual([
      `FAIL  support-desk › refunds a damaged order (replay): ${miss}`,
      `FAIL  support-desk › the recorded refund replays (replay): ${miss}`,
      '0 passed, 2 failed',
    ]);
    expect(code).toBe(1);
  });

  it('bad input exits 2 with one line naming the file and the key', async () => {
    const dir = await editedCopy('bad', (text) => text.replace('match: strict', 'match: exactly'));
    const { code, stdout, stderr } = await runCli(['eval', dir], { timeoutMs: 60_000 });
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `agentloop eval: ${path.join(dir, SUITE)}: cases[0].expect.trajectory.match: Invalid option: ` +
        'expected one of "strict"|"unordered"|"subset"|"superset"\n',
    );
    expect(code).toBe(2);
    const missing = await runCli(['eval', path.join(work, 'nowhere')]);
    expect(missing.stderr).toMatch(/^agentloop eval: .*nowhere: cannot read \(ENOENT/);
    expect(missing.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(missing.code).toBe(2);
    const usage = await runCli(['eval', dir, '--mode', 'sideways']);
    expect(usage.stderr).toBe(
      'agentloop eval: --mode must be replay or live, not "sideways"; see agentloop eval --help\n',
    );
    expect(usage.code).toBe(2);
  });

  it('--record writes the live cases transcripts next to the suite; --report writes every result', async () => {
    const dir = await editedCopy('record', (text) => text.replace('name: support-desk', 'name: desk'));
    await rm(path.join(dir, 'recordings'), { recursive: true });
    const report = path.join(work, 'report.json');
    const { code, stdout, stderr } = await runCli(['eval', dir, '--record', '--report', report], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    expect(stdout.trimEnd().split('\n')).toEqual([
      'pass  desk › refunds a damaged order (live, recorded recordings/refund.jsonl)',
      'pass  desk › order status as JSON (live, recorded desk.recordings/order-status-as-JSON.jsonl)',
      '2 passed, 0 failed',
    ]);
    expect(stderr).toBe('(1 case without an input left out)\n');
    expect(code).toBe(0);
    const recorded = await readFile(path.join(dir, 'recordings', 'refund.jsonl'), 'utf8');
    expect(recorded).toContain('"event":"model_call"');
    expect(await stat(path.join(dir, 'desk.recordings', 'order-status-as-JSON.jsonl'))).toBeTruthy();
    const json = JSON.parse(await readFile(report, 'utf8'));
    expect(json).toMatchObject({ passed: 2, failed: 0, skipped: 1 });
    expect(json.cases[0]).toMatchObject({ case: 'refunds a damaged order', passed: true, misses: [] });
    // The fresh recording replays.
    const replay = await runCli(['eval', dir, '--mode', 'replay'], { timeoutMs: 60_000 });
    expect(replay.stdout.trimEnd().split('\n').at(-1)).toBe('2 passed, 0 failed');
    expect(replay.code).toBe(0);
  });
});
