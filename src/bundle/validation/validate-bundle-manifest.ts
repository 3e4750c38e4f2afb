import path from 'node:path';
import { errorMessage } from '../bundle-error.js';
import { parseYamlMap } from '../config-loader.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { ValidationProblem } from './validation-report.js';

/**
 * Reads and checks a spec-layout bundle's `bundle.yaml`: it parses to a mapping, `name` is text, and
 * every file `agents:` and `workflows:` list exists under the bundle root. Each finding is a problem
 * naming the file and key; nothing throws.
 */
export async function checkBundleManifest(
  sandbox: Sandbox,
  bundleRoot: string,
  rel: (p: string) => string,
  problems: ValidationProblem[],
): Promise<void> {
  const file = path.join(bundleRoot, 'bundle.yaml');
  if ((await sandbox.status(file)) !== 'exists') return;
  const problem = (key: string, value: string, status: ValidationProblem['status'], message: string) =>
    problems.push({ file: rel(file), key, value, status, message });
  let manifest: Record<string, unknown>;
  try {
    manifest = parseYamlMap((await sandbox.readText(file, 'validate')).content, file);
  } catch (error) {
    problem('', '', 'parse-error', errorMessage(error));
    return;
  }
  if (typeof manifest.name !== 'string' || manifest.name.trim() === '') {
    problem('name', String(manifest.name ?? ''), 'parse-error', 'bundle.yaml needs a name (text)');
  }
  for (const key of ['agents', 'workflows'] as const) {
    const list = manifest[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      problem(key, String(list), 'parse-error', `${key} must be a list of paths relative to the bundle`);
      continue;
    }
    for (const [i, entry] of list.entries()) {
      if (typeof entry !== 'string') {
        problem(`${key}[${i}]`, String(entry), 'parse-error', `${key}[${i}] must be a path`);
        continue;
      }
      const target = path.resolve(bundleRoot, entry);
      const status = await sandbox.status(target);
      if (status !== 'exists') {
        problem(
          `${key}[${i}]`,
          entry,
          status,
          `${key}[${i}] names ${target}, which ${status === 'missing' ? 'does not exist' : 'is outside the bundle'}`,
        );
      }
    }
  }
}
