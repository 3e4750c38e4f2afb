import { pathToFileURL } from 'node:url';
import { loadBundleAgent } from '../bundle/bundle-agent.js';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import { loadSkillsAgent } from '../skills/skills-agent.js';
import type { EvalSuiteError } from './eval-suite-file.js';
import type { EvalAgentSpec } from './eval-suite-schema.js';

/**
 * The agent a suite tests, as a definition: a bundle agent (`{ bundle, agent }`), a plain assistant
 * with Agent Skills (`{ skills }`), or an `AgentDefinition` a module exports (`{ module, export? }`:
 * the named export, else `default`, else the one export that looks like a definition). `outputFolder`
 * is where a bundle's or the skills' `save_output` writes, so an eval never writes into the project.
 * A module that does not load or exports no definition is an error naming the file and the export.
 */
export async function loadEvalAgent(
  spec: EvalAgentSpec,
  outputFolder: string,
  error: (message: string) => EvalSuiteError,
): Promise<AgentDefinition> {
  try {
    if ('bundle' in spec) {
      const agent = await loadBundleAgent({
        bundleRoot: spec.bundle,
        agent: spec.agent,
        outputFolder,
        ...(spec.project ? { projectRoot: spec.project } : {}),
      });
      return agent.definition;
    }
    if ('skills' in spec) {
      const agent = await loadSkillsAgent({
        dirs: spec.skills,
        outputFolder,
        ...(spec.project ? { projectRoot: spec.project } : {}),
      });
      return agent.definition;
    }
  } catch (cause) {
    throw error(`agent: ${(cause as Error).message.split('\n')[0]}`);
  }
  return moduleDefinition(spec.module, spec.export, error);
}

async function moduleDefinition(
  file: string,
  exportName: string | undefined,
  error: (message: string) => EvalSuiteError,
): Promise<AgentDefinition> {
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (cause) {
    throw error(`agent.module: cannot load ${file} (${(cause as Error).message.split('\n')[0]})`);
  }
  if (exportName !== undefined) {
    const value = exports[exportName];
    if (isDefinition(value)) return value;
    throw error(`agent.export: ${file} exports no AgentDefinition named "${exportName}"`);
  }
  if (isDefinition(exports.default)) return exports.default;
  const found = Object.entries(exports).filter(([, v]) => isDefinition(v));
  if (found.length === 1) return found[0]![1] as AgentDefinition;
  throw error(
    found.length === 0
      ? `agent.module: ${file} exports no AgentDefinition (an object with name and instructions)`
      : `agent.export: ${file} exports several AgentDefinitions (${found.map(([k]) => k).join(', ')}); name one`,
  );
}

function isDefinition(value: unknown): value is AgentDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.name === 'string' &&
    typeof v.instructions === 'string' &&
    (v.tools === undefined || Array.isArray(v.tools))
  );
}
