import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EvalSuiteError } from '../../evals/eval-suite-file.js';
import { type EvalCaseResult, runEvalSuite } from '../../evals/run-eval-suite.js';
import { parseFlags, positiveInteger, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { terminalSafe } from '../terminal/terminal-safe.js';

const USAGE = `Usage: agentloop eval <suite.eval.yaml|dir> [--mode replay|live] [--trials <n>] [--report <out.json>] [--record]
  Runs an eval suite (a folder: every *.eval.yaml in it): one line per case, pass or FAIL with the
  first miss, then "N passed, N failed". Exit 0 when every case passed, 1 when one failed, 2 on bad
  input (the line names the file and key). See docs/evals.md.
  --mode <m>       replay: only the cases with a transcript, replayed; live: only those with an input,
                   against the model (default: each case's own mode)
  --trials <n>     runs of each live case (over the cases' trials; passRate still applies)
  --report <file>  also write every case's result as JSON
  --record         run the cases that have an input live, once, and write their transcripts next to
                   the suite (the case's transcript file, else <suite>.recordings/<case>.jsonl)
  The model of live cases: the suite's model.scenario (scripted server, offline), else
  OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL (or the suite's model settings).
`;

/** `agentloop eval`: runs eval suites and prints a line per case and the closing count. */
export async function runEvalCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      mode: { type: 'string' },
      trials: { type: 'string' },
      report: { type: 'string' },
      record: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const [target, ...extra] = positionals;
  if (!target) throw new UsageError('missing the suite file or folder');
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const mode = values.mode;
  if (mode !== undefined && mode !== 'replay' && mode !== 'live') {
    throw new UsageError(`--mode must be replay or live, not "${mode}"`);
  }
  if (values.record && mode === 'replay')
    throw new UsageError('--record runs cases live; not with --mode replay');
  const trials = values.trials === undefined ? undefined : positiveInteger(values.trials, '--trials', 1);
  try {
    const report = await runEvalSuite(target, {
      ...(mode ? { mode } : {}),
      ...(trials ? { trials } : {}),
      record: values.record,
      onCase: (result) => io.stdout(`${terminalSafe(caseLine(result))}\n`),
    });
    if (report.skipped > 0) {
      const why = values.record ? 'without an input' : `that cannot run ${mode}`;
      io.stderr(`(${report.skipped} case${report.skipped === 1 ? '' : 's'} ${why} left out)\n`);
    }
    if (values.report) await writeFile(values.report, `${JSON.stringify(report, null, 2)}\n`);
    io.stdout(`${report.passed} passed, ${report.failed} failed\n`);
    return report.failed === 0 ? 0 : 1;
  } catch (error) {
    if (!(error instanceof EvalSuiteError)) throw error;
    io.stderr(`agentloop eval: ${terminalSafe(error.message)}\n`);
    return 2;
  }
}

/** `pass  suite › case (mode)`, or `FAIL  suite › case (mode): first miss`; trials and recordings noted. */
function caseLine(result: EvalCaseResult): string {
  const notes: string[] = [result.mode];
  if (result.trials > 1) notes.push(`${result.passedTrials}/${result.trials} trials`);
  if (result.recorded) notes.push(`recorded ${path.relative(process.cwd(), result.recorded)}`);
  const head = `${result.passed ? 'pass' : 'FAIL'}  ${result.suite} › ${result.case} (${notes.join(', ')})`;
  const miss = result.misses[0];
  return result.passed || miss === undefined ? head : `${head}: ${miss}`;
}
