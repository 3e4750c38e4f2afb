import { parse, TomlError } from 'smol-toml';
import { BundleError } from '../bundle-error.js';
import type { FileLoadReason, Sandbox } from '../sandbox/sandbox.js';

/** A parsed TOML document (BMAD 6.12's config.toml, customize.toml and their overrides). */
export type TomlTable = Record<string, unknown>;

/** The key a TOML line sets, qualified by the table it sits in (`agent.icon`), for error messages. */
function keyAtLine(text: string, line: number): string {
  const lines = text.split(/\r?\n/);
  const own = /^\s*("[^"]*"|[A-Za-z0-9_.-]+)\s*=/.exec(lines[line - 1] ?? '')?.[1]?.replace(/"/g, '');
  let table = '';
  for (let i = line - 1; i >= 0; i--) {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/.exec(lines[i] ?? '');
    if (header) {
      table = header[1]!;
      break;
    }
  }
  return [table, own].filter(Boolean).join('.');
}

/**
 * Parses TOML text. A syntax error is a {@link BundleError} naming the file, the line and column, and
 * the key being set there, with the offending line shown.
 */
export function parseToml(text: string, file: string): TomlTable {
  try {
    return parse(text) as TomlTable;
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const what = error.message.split('\n')[0]!.replace(/^Invalid TOML document:\s*/, '');
    const key = keyAtLine(text, error.line);
    const source = text.split(/\r?\n/)[error.line - 1] ?? '';
    throw new BundleError(
      'parse',
      `Invalid TOML in ${file} at line ${error.line}, column ${error.column}${key ? ` (key "${key}")` : ''}: ${what}\n` +
        `  ${error.line} | ${source}`,
      { file, key: key || undefined, cause: error },
    );
  }
}

/** Reads and parses a TOML file through the sandbox. */
export async function loadTomlFile(
  sandbox: Sandbox,
  file: string,
  reason: FileLoadReason,
): Promise<{ path: string; values: TomlTable }> {
  const { path, content } = await sandbox.readText(file, reason);
  return { path, values: parseToml(content, file) };
}
