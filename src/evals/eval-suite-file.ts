import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describeIssues, loadScenario, type Scenario, ScenarioError } from '../testing/scenario.js';
import { Cassette } from './cassette.js';
import {
  type EvalAgentSpec,
  type EvalCaseSpec,
  type EvalModelSpec,
  evalSuiteSchema,
} from './eval-suite-schema.js';

/** One case of a loaded suite: its paths absolute, its mode and scenario settled. */
export interface EvalCase extends Omit<EvalCaseSpec, 'mode' | 'scenario'> {
  mode: 'replay' | 'live';
  /** The scripted model's scenario for live runs (the case's, else the suite's), read and checked. */
  scenario?: Scenario;
  /** The transcript, read and checked (absent when recording: it is about to be written). */
  cassette?: Cassette;
}

/** An eval suite read from its file: paths resolved against the file's folder. */
export interface EvalSuite {
  file: string;
  /** `name` from the file, else the file name without `.eval.yaml`. */
  name: string;
  agent: EvalAgentSpec;
  model: Omit<EvalModelSpec, 'scenario'>;
  cases: EvalCase[];
}

/** A suite file (or folder) that cannot be used; the message is one line naming the file and key. */
export class EvalSuiteError extends Error {
  override name = 'EvalSuiteError';
}

/** Files a folder holds that are suites: `*.eval.yaml` / `*.eval.yml`. */
const SUITE_FILE = /\.eval\.ya?ml$/i;

/**
 * The suite files `target` names: itself when it is a file, else the `*.eval.yaml` (`.yml`) files in
 * the folder, in name order. A folder without any is an error naming it.
 */
export async function evalSuiteFiles(target: string): Promise<string[]> {
  const info = await stat(target).catch((error: Error) => {
    throw new EvalSuiteError(`${target}: cannot read (${error.message})`);
  });
  if (!info.isDirectory()) return [target];
  const names = (await readdir(target)).filter((n) => SUITE_FILE.test(n)).sort();
  if (names.length === 0) throw new EvalSuiteError(`${target}: no eval suites in it (*.eval.yaml)`);
  return names.map((n) => path.join(target, n));
}

/**
 * Reads and checks a suite file. Every problem is an `EvalSuiteError` naming the file and the key
 * (`suite.eval.yaml: cases[1].expect.output.regex: not a valid regular expression`). Transcripts of
 * replay cases must exist unless `recording` (then they are about to be written).
 */
export async function loadEvalSuite(file: string, options: { recording?: boolean } = {}): Promise<EvalSuite> {
  const fail = (problems: string[]): never => {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    throw new EvalSuiteError(`${file}: ${problems[0]}${more}`);
  };
  let value: unknown;
  try {
    value = parseYaml(await readFile(file, 'utf8'));
  } catch (error) {
    fail([`not a readable YAML file (${(error as Error).message.split('\n')[0]})`]);
  }
  const parsed = evalSuiteSchema.safeParse(value);
  if (!parsed.success) return fail(describeIssues(parsed.error.issues, []));
  const spec = parsed.data;
  const dir = path.dirname(path.resolve(file));
  const at = (p: string) => path.resolve(dir, p);
  const seen = new Set<string>();
  for (const [index, c] of spec.cases.entries()) {
    if (seen.has(c.name)) fail([`cases[${index}].name: "${c.name}" is the name of an earlier case`]);
    seen.add(c.name);
  }
  const scenarios = new Map<string, Scenario>();
  const scenarioAt = async (p: string | undefined, key: string): Promise<Scenario | undefined> => {
    if (p === undefined) return undefined;
    const full = at(p);
    if (!scenarios.has(full)) {
      try {
        scenarios.set(full, await loadScenario(full));
      } catch (error) {
        const text = error instanceof ScenarioError ? error.problems.join('; ') : (error as Error).message;
        fail([`${key}: ${full}: ${text}`]);
      }
    }
    return scenarios.get(full);
  };
  const suiteScenario = await scenarioAt(spec.model?.scenario, 'model.scenario');
  const cases: EvalCase[] = [];
  for (const [index, { mode, scenario, ...c }] of spec.cases.entries()) {
    const transcript = c.transcript === undefined ? undefined : at(c.transcript);
    let cassette: Cassette | undefined;
    if (transcript && !options.recording) {
      if (!(await stat(transcript).catch(() => undefined))) {
        fail([
          `cases[${index}].transcript: ${transcript} does not exist (record it: agentloop eval --record)`,
        ]);
      }
      cassette = await Cassette.fromFile(transcript).catch((error: Error) =>
        fail([`cases[${index}].transcript: ${error.message}`]),
      );
    }
    const caseScenario = (await scenarioAt(scenario, `cases[${index}].scenario`)) ?? suiteScenario;
    cases.push({
      ...c,
      ...(transcript ? { transcript } : {}),
      ...(cassette ? { cassette } : {}),
      mode: mode ?? (transcript ? 'replay' : 'live'),
      ...(caseScenario ? { scenario: caseScenario } : {}),
    });
  }
  const { scenario: _, ...model } = spec.model ?? {};
  return {
    file,
    name: spec.name ?? path.basename(file).replace(/(\.eval)?\.ya?ml$/i, ''),
    agent: resolvedAgent(spec.agent, at),
    model,
    cases,
  };
}

function resolvedAgent(agent: EvalAgentSpec, at: (p: string) => string): EvalAgentSpec {
  const project = 'project' in agent && agent.project ? { project: at(agent.project) } : {};
  if ('bundle' in agent) return { ...agent, bundle: at(agent.bundle), ...project };
  if ('skills' in agent) return { ...agent, skills: agent.skills.map(at), ...project };
  return { ...agent, module: at(agent.module) };
}
