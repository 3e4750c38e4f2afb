import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const srcRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/**
 * The file session store's modules as plain JS for a child `node` (type-stripping only, no bundler):
 * `session/file-store/file-session-store` and the relative imports it reaches, found by following them, laid out
 * as in `src/`. Returns the folder holding `file-session-store.js`.
 */
export async function buildStoreForNode(root: string): Promise<string> {
  const outRoot = path.join(root, 'build');
  await mkdir(outRoot, { recursive: true });
  await writeFile(path.join(outRoot, 'package.json'), '{"type":"module"}');
  const pending = ['session/file-store/file-session-store'];
  const done = new Set<string>();
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (done.has(name)) continue;
    done.add(name);
    const source = await readFile(path.join(srcRoot, `${name}.ts`), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    await mkdir(path.dirname(path.join(outRoot, name)), { recursive: true });
    await writeFile(path.join(outRoot, `${name}.js`), outputText);
    for (const { fileName } of ts.preProcessFile(outputText, true, false).importedFiles) {
      const local = /^((?:\.\.?\/)+[\w/-]+)\.js$/.exec(fileName);
      if (local) pending.push(path.posix.join(path.posix.dirname(name), local[1]!));
    }
  }
  return path.join(outRoot, 'session', 'file-store');
}
