import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import type { TranscriptEntry } from '../session/transcript.js';
import { loadEvalAgent } from './eval-agent.js';
import { type CaseOutcome, expectationMisses } from './eval-expectations.js';
import { connectEvalModel } from './eval-model.js';
import {
  type EvalCase,
  type EvalSuite,
  EvalSuiteError,
  evalSuiteFiles,
  loadEvalSuite,
} from './eval-suite-file.js';
import { runLiveCase } from './live-case-run.js';
import { runReplayCase } from './replay-case-run.js';

/** Options of {@link runEvalSuite}. */
export interface RunEvalSuiteOptions {
  /**
   * Run every case this way: `replay` runs the cases that have a transcript, `live` those that have an
   * input; the others are left out (counted in `skipped`). Default: each case's own mode.
   */
  mode?: 'replay' | 'live';
  /** Runs of each live case (over the cases' `trials`). */
  trials?: number;
  /**
   * Run the cases that have an input live, once each, and write each transcript next to the suite:
   * to the case's `transcript` file, else `<suite>.recordings/<case>.jsonl`. Cases without input are
   * left out.
   */
  record?: boolean;
  /** Where model settings are read (`OPENAI_API_KEY`, ...); default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Hears each case's result as soon as it is known (the CLI prints a line). */
  onCase?: (result: EvalCaseResult) => void;
}

/** How one case went. */
export interface EvalCaseResult {
  /** The suite's name and file. */
  suite: string;
  file: string;
  case: string;
  mode: 'replay' | 'live';
  passed: boolean;
  /** Runs made, runs that met every expectation, and the share that had to. */
  trials: number;
  passedTrials: number;
  passRate: number;
  /** Every miss of the first failed run (empty when all passed); the first is the one to show. */
  misses: string[];
  /** What the last run did (absent when it could not run). */
  outcome?: CaseOutcome;
  /** The transcript file written (`record`). */
  recorded?: string;
  durationMs: number;
}

/** The whole run: every case's result, the counts CI reads. */
export interface EvalReport {
  passed: number;
  failed: number;
  /** Cases left out by `mode` or `record`. */
  skipped: number;
  cases: EvalCaseResult[];
}

/**
 * Runs an eval suite file, or every `*.eval.yaml` in a folder (docs/evals.md, "Eval suites"): each
 * case is run (replayed from its transcript, or live against the suite's model, `trials` times) and
 * its expectations checked. Bad input (a file, key, agent or model that cannot be used) throws an
 * `EvalSuiteError` naming the file and key before any case runs; what the agent does is the report.
 */
export async function runEvalSuite(target: string, options: RunEvalSuiteOptions = {}): Promise<EvalReport> {
  const files = await evalSuiteFiles(target);
  const suites: EvalSuite[] = [];
  for (const file of files) suites.push(await loadEvalSuite(file, { recording: options.record === true }));
  const outputFolder = await mkdtemp(path.join(tmpdir(), 'agentloop-eval-'));
  const report: EvalReport = { passed: 0, failed: 0, skipped: 0, cases: [] };
  try {
    const agents: AgentDefinition[] = [];
    for (const suite of suites) {
      const error = (message: string) => new EvalSuiteError(`${suite.file}: ${message}`);
      agents.push(await loadEvalAgent(suite.agent, outputFolder, error));
      checkModels(suite, options);
    }
    for (const [index, suite] of suites.entries()) {
      for (const evalCase of suite.cases) {
        const mode = modeOf(evalCase, options);
        if (!mode) {
          report.skipped++;
          continue;
        }
        const result = await runCase(suite, evalCase, mode, agents[index]!, options);
        report.cases.push(result);
        if (result.passed) report.passed++;
        else report.failed++;
        options.onCase?.(result);
      }
    }
    return report;
  } finally {
    await rm(outputFolder, { recursive: true, force: true });
  }
}

/** How a case runs under the options; undefined when it is left out. */
function modeOf(evalCase: EvalCase, options: RunEvalSuiteOptions): 'replay' | 'live' | undefined {
  const mode = options.record ? 'live' : (options.mode ?? evalCase.mode);
  if (mode === 'live') return evalCase.input === undefined ? undefined : 'live';
  return evalCase.transcript === undefined ? undefined : 'replay';
}

/** A live case without a scripted scenario needs a real model: said before anything runs. */
function checkModels(suite: EvalSuite, options: RunEvalSuiteOptions): void {
  const env = options.env ?? process.env;
  const key = suite.model.apiKeyEnv ?? 'OPENAI_API_KEY';
  const real = Boolean(env[key] || suite.model.baseUrl || env.OPENAI_BASE_URL);
  for (const [index, evalCase] of suite.cases.entries()) {
    if (modeOf(evalCase, options) !== 'live' || evalCase.scenario || real) continue;
    throw new EvalSuiteError(
      `${suite.file}: cases[${index}]: no model for the live case "${evalCase.name}": set ${key} ` +
        '(or model.baseUrl), or give model.scenario (or the case a scenario) to run on the scripted server',
    );
  }
}

async function runCase(
  suite: EvalSuite,
  evalCase: EvalCase,
  mode: 'replay' | 'live',
  definition: AgentDefinition,
  options: RunEvalSuiteOptions,
): Promise<EvalCaseResult> {
  const started = Date.now();
  const trials = mode === 'replay' || options.record ? 1 : (options.trials ?? evalCase.trials ?? 1);
  const passRate = mode === 'replay' ? 1 : (evalCase.passRate ?? 1);
  let passedTrials = 0;
  let misses: string[] = [];
  let outcome: CaseOutcome | undefined;
  let entries: TranscriptEntry[] | undefined;
  for (let trial = 0; trial < trials; trial++) {
    let trialMisses: string[];
    try {
      if (mode === 'replay') {
        const replay = await runReplayCase(definition, evalCase);
        outcome = replay.outcome;
        // A divergence is a miss of its own, before what the expectations say of the run.
        trialMisses = [
          ...(replay.divergence ? [replay.divergence] : []),
          ...expectationMisses(outcome, evalCase.expect),
        ];
      } else {
        const run = await runLive(suite, evalCase, definition, options);
        outcome = run.outcome;
        entries = run.entries;
        trialMisses = expectationMisses(outcome, evalCase.expect);
      }
    } catch (error) {
      trialMisses = [`the run failed: ${(error as Error).message.split('\n')[0]}`];
    }
    if (trialMisses.length === 0) passedTrials++;
    else if (misses.length === 0) misses = trialMisses;
  }
  const result: EvalCaseResult = {
    suite: suite.name,
    file: suite.file,
    case: evalCase.name,
    mode,
    passed: passedTrials / trials >= passRate,
    trials,
    passedTrials,
    passRate,
    misses,
    ...(outcome ? { outcome } : {}),
    durationMs: 0,
  };
  if (options.record && entries) result.recorded = await writeRecording(suite, evalCase, entries);
  result.durationMs = Date.now() - started;
  return result;
}

async function runLive(
  suite: EvalSuite,
  evalCase: EvalCase,
  definition: AgentDefinition,
  options: RunEvalSuiteOptions,
): Promise<{ outcome: CaseOutcome; entries: TranscriptEntry[] }> {
  const model = await connectEvalModel(suite.model, evalCase.scenario, options.env);
  if (!model) throw new Error('no model (checked before the run; the environment changed)');
  try {
    const inputs = typeof evalCase.input === 'string' ? [evalCase.input] : (evalCase.input ?? []);
    return await runLiveCase(definition, model, inputs, evalCase.approvals);
  } finally {
    await model.close();
  }
}

/** Writes a recorded run's transcript (JSONL, as a file store keeps it) and returns the file. */
async function writeRecording(
  suite: EvalSuite,
  evalCase: EvalCase,
  entries: TranscriptEntry[],
): Promise<string> {
  const file =
    evalCase.transcript ??
    path.join(
      path.dirname(path.resolve(suite.file)),
      `${suite.name}.recordings`,
      `${evalCase.name.replace(/[^\w.-]+/g, '-')}.jsonl`,
    );
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return file;
}
