import { spawn } from 'node:child_process';
import { cliPath } from './build-dist.js';

/** What one run of the built CLI did. */
export interface CliResult {
  /** The exit code; null when the process was killed at `timeoutMs` (it hung). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from start to exit (or to the kill). */
  ms: number;
}

/**
 * Runs `node dist/cli/main.js ...args` as users do: no OpenAI variables unless `env` sets them, no
 * colours, stdin from `input` (closed at once without it). A process still running after `timeoutMs`
 * is killed and reported with `code: null`, so a hang fails the test instead of stalling it.
 */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: options.cwd,
      env: {
        ...process.env,
        OPENAI_API_KEY: '',
        OPENAI_BASE_URL: '',
        OPENAI_MODEL: '',
        NO_COLOR: '1',
        FORCE_COLOR: '',
        ...options.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: killed ? null : code, stdout, stderr, ms: Date.now() - started });
    });
    child.stdin.end(options.input ?? '');
  });
}
