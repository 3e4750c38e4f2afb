import { parse as parseYaml } from 'yaml';
import { BundleError } from './bundle-error.js';
import type { FileLoadReason, Sandbox } from './sandbox/sandbox.js';

/** A parsed YAML mapping (config.yaml, workflow.yaml, bundle.yaml). */
export type YamlMap = Record<string, unknown>;

/** Parses YAML text that must be a mapping; a {@link BundleError} names the file otherwise. */
export function parseYamlMap(text: string, file: string): YamlMap {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new BundleError('parse', yamlErrorMessage(error, text, file), { file, cause: error });
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new BundleError('parse', `Expected a YAML mapping in ${file}`, { file });
  }
  return data as YamlMap;
}

/**
 * `Invalid YAML in <file> at line L, column C: <what>` and the offending line with a caret under the
 * column (the yaml package's own message ends in a code frame that a one-line report cuts off).
 */
function yamlErrorMessage(error: unknown, text: string, file: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split('\n')[0] ?? message;
  const pos = (error as { linePos?: { line: number; col: number }[] }).linePos?.[0];
  if (!pos) return `Invalid YAML in ${file}: ${first}`;
  const what = first.replace(/ at line \d+, column \d+:?\s*$/, '');
  const source = text.split(/\r?\n/)[pos.line - 1] ?? '';
  // Tabs stay tabs under the line, so the caret lines up in any terminal.
  const caret = `${source.slice(0, pos.col - 1).replace(/[^\t]/g, ' ')}^`;
  const gutter = ' '.repeat(String(pos.line).length);
  return (
    `Invalid YAML in ${file} at line ${pos.line}, column ${pos.col}: ${what}\n` +
    `  ${pos.line} | ${source}\n  ${gutter} | ${caret}`
  );
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
