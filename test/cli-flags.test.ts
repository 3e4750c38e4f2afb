import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as cliMain } from '../src/cli/main.js';
import { buildDist, repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';

/**
 * Issue 16, the CLI's first hour: every usage mistake is one line naming the flag and what is missing,
 * with `see agentloop <cmd> --help`, and exit 2; every error path closes what it opened and exits.
 * The built CLI runs as users run it.
 */
const BUNDLE = path.join(repoRoot, 'bundles', 'requirements-workflow');
const SCENARIO = path.join(BUNDLE, 'scenarios', 'intake-first-step.yaml');
const COMMANDS = ['demo', 'run', 'chat', 'sessions', 'validate', 'inspect'];
let work: string;

beforeAll(async () => {
  await buildDist();
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'cli-flags-'));
}, 180_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

const cli = (args: string[], timeoutMs?: number) =>
  runCli(args, { cwd: work, ...(timeoutMs ? { timeoutMs } : {}) });

/** `main` in this process (what the built CLI runs), for what ends before anything opens. */
async function main(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await cliMain(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

describe('a bad --inspector-port closes what the command opened and exits', () => {
  const bundleArgs = ['--bundle', BUNDLE, '--agent', 'intake-facilitator', '--project', '.'];

  it.each([
    ['run', 'abc'],
    ['run', '99999'],
    ['chat', 'abc'],
    ['chat', '99999'],
  ])(
    '%s --scenario f.yaml --inspector-port %s: one line, exit 2, and exits (killed and failed at 25 s if it hangs)',
    async (command, port) => {
      const args = [command, ...bundleArgs, '--scenario', SCENARIO, '--inspector-port', port];
      const result = await cli(command === 'run' ? [...args, 'hi'] : args, 25_000);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `agentloop ${command}: --inspector-port needs a port number from 0 to 65535, got "${port}"; see agentloop ${command} --help\n`,
      );
    },
  );

  describe('a port already in use', () => {
    let taken: Server;
    let port: number;
    beforeAll(async () => {
      taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      port = (taken.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

    it.each(['run', 'chat'])(
      '%s: the scripted server it started is closed and the process exits',
      async (command) => {
        const args = [command, ...bundleArgs, '--scenario', SCENARIO, '--inspector-port', String(port)];
        const result = await cli(command === 'run' ? [...args, 'hi'] : args, 25_000);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`--inspector-port ${port}: 127.0.0.1:${port} is in use`);
      },
    );
  });
});

describe('usage mistakes name the flag and point at --help', () => {
  it.each([
    [['run', '--bogus'], 'agentloop run: unknown flag --bogus; see agentloop run --help'],
    [
      ['validate', BUNDLE, '--bogus'],
      'agentloop validate: unknown flag --bogus; see agentloop validate --help',
    ],
    [['chat', '--bogus'], 'agentloop chat: unknown flag --bogus; see agentloop chat --help'],
    [['sessions', '--bogus'], 'agentloop sessions: unknown flag --bogus; see agentloop sessions --help'],
    [['inspect', '--bogus'], 'agentloop inspect: unknown flag --bogus; see agentloop inspect --help'],
    [['demo', '--bogus'], 'agentloop demo: unknown flag --bogus; see agentloop demo --help'],
    [['run', '--bundle'], 'agentloop run: --bundle needs a value; see agentloop run --help'],
    [['run', '--json=yes'], 'agentloop run: --json takes no value; see agentloop run --help'],
    [
      ['run', '--bundle', BUNDLE, 'hi'],
      'agentloop run: missing --agent <id> (the agent to run); see agentloop run --help',
    ],
    [
      ['run', '--bundle', BUNDLE, '--agent', 'intake-facilitator'],
      'agentloop run: missing the message to send (the last argument, e.g. "*help"); see agentloop run --help',
    ],
    [
      ['chat', '--bundle', BUNDLE],
      'agentloop chat: missing --agent <id> (the agent to talk with); see agentloop chat --help',
    ],
    [
      ['validate', BUNDLE, '--project', BUNDLE],
      'agentloop validate: give <root> or --project <dir>, not both; see agentloop validate --help',
    ],
    [
      ['validate', BUNDLE, 'extra'],
      'agentloop validate: one <root> only; also got "extra"; see agentloop validate --help',
    ],
    [
      ['nonsense'],
      'agentloop: unknown command "nonsense" (commands: demo, run, chat, sessions, validate, inspect, worker, serve, send, mcp, replay, eval, a2a, fork); see agentloop --help',
    ],
  ])('%j', async (args, line) => {
    const result = await main(args);
    expect(result.stderr).toBe(`${line}\n`);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(2);
  });
});

describe('--version and --help', () => {
  it('--version prints the version in package.json', async () => {
    const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    const result = await cli(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it.each(COMMANDS)('%s --help (and `help <command>`) prints its usage and exits 0', async (command) => {
    const result = await main([command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: agentloop ${command}`));
    expect(result.stderr).toBe('');
    expect((await main(['help', command])).stdout).toBe(result.stdout);
  });

  it('the top-level help names the inspector flags of every command that has them', async () => {
    const help = (await main(['--help'])).stdout;
    for (const flag of ['--inspector-port', '--inspect']) {
      const line = help.split('\n').find((l) => l.trimStart().startsWith(`${flag} `));
      expect(line, `a line for ${flag} in:\n${help}`).toBeDefined();
      // `--inspector-port <port>  (demo, run, chat, inspect) serve ...`
      const named = /\(([^)]*)\)/.exec(line!)?.[1]?.split(/,\s*/) ?? [];
      for (const command of COMMANDS) {
        const own = (await main([command, '--help'])).stdout;
        const has = new RegExp(`${flag}(?![-\\w])`).test(own);
        expect(named.includes(command), `${command} ${has ? 'has' : 'has no'} ${flag}`).toBe(has);
      }
    }
  });
});
