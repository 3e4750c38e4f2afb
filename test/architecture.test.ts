import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The layering rule of docs/architecture.md, checked on the source: a folder imports only folders
// below it. Type-only imports count: a type is a dependency too.

/** Folders of src/, top to bottom. A folder may import the folders after it in this list. */
const LAYERS: readonly (readonly string[])[] = [
  ['cli'],
  ['inspector'],
  ['server'],
  ['workers', 'engines'],
  ['evals'],
  ['agent'],
  ['postgres', 'store-conformance'],
  ['session'],
  ['otel'],
  ['events'],
  ['machines'],
  ['mcp', 'skills'],
  ['bundle'],
  ['prompt'],
  ['tools'],
  ['testing'],
  ['llm'],
  ['telemetry'],
];

/** Folders that may import only the folders named here (beside the shared root files). */
const ONLY: Readonly<Record<string, readonly string[]>> = { otel: ['telemetry', 'events'], telemetry: [] };

const src = path.resolve(__dirname, '../src');
/** Files at the root of src/ that are package entry points. */
const ENTRY_FILES = ['index.ts', 'unstable.ts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The relative module specifiers a file imports or re-exports, static and dynamic. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) found.push(m[1]!);
  return found;
}

/** The layer index of a file (its top folder under src/); root files (defaults.ts, index.ts) have none. */
function layerOf(file: string): { folder: string; rank: number } | undefined {
  const rel = path.relative(src, file).split(path.sep);
  if (rel.length < 2) return undefined;
  const folder = rel[0]!;
  const rank = LAYERS.findIndex((layer) => layer.includes(folder));
  return { folder, rank };
}

/** Most files a folder of src/ may hold side by side (its sub-folders not counted). */
const FILES_PER_FOLDER = 25;

/** The source file a relative specifier names: `./x.js` is `x.ts`, a folder is its `index.ts`. */
function resolveImport(from: string, spec: string): string | undefined {
  const target = path.resolve(path.dirname(from), spec);
  const candidates = [target.replace(/\.js$/, '.ts'), `${target}.ts`, path.join(target, 'index.ts')];
  return candidates.find((file) => file.endsWith('.ts') && existsSync(file));
}

/**
 * The import circles among `files`: each strongly connected group of two or more files (or a file that
 * imports itself), found with Tarjan's algorithm, as paths relative to src/.
 */
function importCircles(files: readonly string[], importsOfFile: (file: string) => string[]): string[][] {
  const known = new Set(files);
  const edges = new Map(files.map((file) => [file, importsOfFile(file).filter((to) => known.has(to))]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const to of edges.get(file)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || edges.get(file)!.includes(file))
      circles.push(group.map((f) => path.relative(src, f)).sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return circles.sort((x, y) => x[0]!.localeCompare(y[0]!));
}

const files = sourceFiles(src);

describe('architecture', () => {
  it('every folder of src/ has a layer', () => {
    const folders = new Set(files.map(layerOf).flatMap((l) => (l ? [l.folder] : [])));
    const unknown = [...folders].filter((f) => !LAYERS.some((layer) => layer.includes(f)));
    expect(unknown).toEqual([]);
  });

  it('imports point down: a folder imports only folders below it', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      for (const spec of importsOf(file)) {
        const target = path.resolve(path.dirname(file), spec);
        const to = layerOf(target);
        const rel = path.relative(src, file);
        if (!from) {
          // Root files: the entry points (index.ts, unstable.ts) may import anything; the shared base
          // (defaults.ts, limits.ts) imports none of the folders.
          if (!ENTRY_FILES.includes(rel) && to) upward.push(`${rel} -> ${path.relative(src, target)}`);
          continue;
        }
        if (!to || to.folder === from.folder) continue;
        if (to.rank <= from.rank) upward.push(`${rel} -> ${path.relative(src, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('otel/ imports only telemetry/ and events/; telemetry/ imports no folder', () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      const allowed = from && ONLY[from.folder];
      if (!allowed) continue;
      for (const spec of importsOf(file)) {
        const to = layerOf(path.resolve(path.dirname(file), spec));
        if (to && to.folder !== from.folder && !allowed.includes(to.folder))
          wrong.push(`${path.relative(src, file)} -> ${spec}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("nothing outside machines/ reads XState's private fields", () => {
    const offenders = files.filter(
      (file) => layerOf(file)?.folder !== 'machines' && /\._parent\b/.test(readFileSync(file, 'utf8')),
    );
    expect(offenders.map((f) => path.relative(src, f))).toEqual([]);
  });

  it('no import circle anywhere in src/, inside a folder too (type-only imports count)', () => {
    const circles = importCircles(files, (file) =>
      importsOf(file).flatMap((spec) => resolveImport(file, spec) ?? []),
    );
    expect(circles).toEqual([]);
  });

  it('finds a circle: two files importing each other, and one importing itself', () => {
    const [a, b, c] = ['a.ts', 'b.ts', 'c.ts'].map((f) => path.join(src, f)) as [string, string, string];
    const graph: Record<string, string[]> = { [a]: [b], [b]: [a, c], [c]: [c] };
    expect(importCircles([a, b, c], (file) => graph[file]!)).toEqual([['a.ts', 'b.ts'], ['c.ts']]);
    expect(importCircles([a, b], (file) => (file === a ? [b] : []))).toEqual([]);
  });

  it(`no folder of src/ holds more than ${FILES_PER_FOLDER} files side by side`, () => {
    const perFolder = new Map<string, number>();
    for (const file of files) {
      const folder = path.relative(src, path.dirname(file)) || '.';
      perFolder.set(folder, (perFolder.get(folder) ?? 0) + 1);
    }
    const crowded = [...perFolder].filter(([, n]) => n > FILES_PER_FOLDER).map(([f, n]) => `${f}: ${n}`);
    expect(crowded).toEqual([]);
  });

  it('no source file is over 400 lines', () => {
    const long = files
      .map((file) => ({
        file: path.relative(src, file),
        lines: readFileSync(file, 'utf8').split('\n').length,
      }))
      .filter((f) => f.lines > 400);
    expect(long).toEqual([]);
  });

  it('the main entry exports at most 80 names (values and types, export * included)', () => {
    const entry = path.join(src, 'index.ts');
    const program = ts.createProgram([entry], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    const names = checker.getExportsOfModule(module).map((s) => s.name);
    expect(names.length, names.join(', ')).toBeLessThanOrEqual(80);
  });
});
