import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { BundleAgent } from '../../bundle/bundle-agent-types.js';
import { parseScenario, type Scenario, ScenarioError } from '../../testing/scenario.js';
import { intakeChatScenario } from './chat-intake-script.js';

/**
 * Scripts written in code that a scenario file may name (`script: <name>`) instead of listing turns:
 * they read the whole conversation on every request, so they follow a free chat (answers, declined
 * calls, interrupts, restored sessions), which a list of turns cannot.
 */
const BUILT_IN_SCRIPTS: Record<string, Scenario> = {
  'intake-facilitator': intakeChatScenario,
};

/** A scripted model for the CLI: the scenario, and one line saying where it came from. */
export interface ScriptedModel {
  scenario: Scenario;
  /** For the user, e.g. `the bundle's scripted demo (scenarios/intake-facilitator.yaml)`. */
  source: string;
}

/**
 * Reads a scenario file (`.yaml`, `.yml` or `.json`): the scripted server's format (docs/scripted-server.md),
 * or `script: <name>` naming one of the CLI's built-in conversation-following scripts.
 */
export async function loadScenarioFile(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new Error(
      code === 'ENOENT' ? `scenario file not found: ${file}` : `cannot read ${file}: ${String(error)}`,
    );
  }
  return parseScenarioText(text, file);
}

function parseScenarioText(text: string, file: string): Scenario {
  let value: unknown;
  try {
    value = path.extname(file).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ScenarioError(file, [(error as Error).message.split('\n')[0] ?? String(error)]);
  }
  const script = (value as { script?: unknown } | null)?.script;
  if (script === undefined) return parseScenario(value, file);
  const scenario = typeof script === 'string' ? BUILT_IN_SCRIPTS[script] : undefined;
  if (!scenario) {
    throw new ScenarioError(file, [
      `script: no built-in script "${String(script)}" (there is: ${Object.keys(BUILT_IN_SCRIPTS).join(', ')})`,
    ]);
  }
  return scenario;
}

/** Where a bundle keeps an agent's scripted demo: `scenarios/<agent file stem>.yaml` (or .yml, .json). */
export function bundleScenarioFiles(agent: Pick<BundleAgent, 'bundleRoot' | 'file'>): string[] {
  const stem = path.basename(agent.file).replace(/\.md$/i, '');
  return ['.yaml', '.yml', '.json'].map((ext) => path.join(agent.bundleRoot, 'scenarios', `${stem}${ext}`));
}

/**
 * The scripted demo a bundle ships for this agent (see {@link bundleScenarioFiles}), read through the
 * agent's sandbox; undefined when it ships none. A file that is there but broken is an error.
 */
export async function bundleScenario(agent: BundleAgent): Promise<ScriptedModel | undefined> {
  for (const file of bundleScenarioFiles(agent)) {
    if ((await agent.sandbox.status(file)) !== 'exists') continue;
    const { content } = await agent.sandbox.readText(file, 'discovery');
    return {
      scenario: parseScenarioText(content, file),
      source: `the bundle's scripted demo (${path.relative(agent.bundleRoot, file)})`,
    };
  }
  return undefined;
}
