import { parse as parseYaml } from 'yaml';
import { BundleError } from './bundle-error.js';
import type { FileLoadReason, Sandbox } from './sandbox.js';

/** A parsed YAML mapping (config.yaml, workflow.yaml, bundle.yaml). */
export type YamlMap = Record<string, unknown>;

/** Parses YAML text that must be a mapping; a {@link BundleError} names the file otherwise. */
export function parseYamlMap(text: string, file: string): YamlMap {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new BundleError('parse', `Invalid YAML in ${file}: ${(error as Error).message.split('\n')[0]}`, {
      file,
      cause: error,
    });
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new BundleError('parse', `Expected a YAML mapping in ${file}`, { file });
  }
  return data as YamlMap;
}

/** Reads and parses a YAML mapping through the sandbox. */
export async function loadYamlFile(
  sandbox: Sandbox,
  file: string,
  reason: FileLoadReason,
): Promise<{ path: string; content: string; values: YamlMap }> {
  const { path, content } = await sandbox.readText(file, reason);
  return { path, content, values: parseYamlMap(content, file) };
}

/** The scalar entries of a mapping as strings (what `{name}` substitution can use). */
export function scalarEntries(values: YamlMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      out[key] = String(value);
  }
  return out;
}
