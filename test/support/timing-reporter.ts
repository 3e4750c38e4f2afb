import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** Where one test file's time went, in milliseconds. */
export interface FileTiming {
  file: string;
  project: string;
  /** Importing the file and all it imports (transform included), and running its describe callbacks. */
  importMs: number;
  /** Importing the setup files. */
  setupMs: number;
  /** The test bodies. */
  testsMs: number;
  /** Hooks (beforeAll builds, servers, clusters, browsers) and the rest of the file's run. */
  hooksMs: number;
  tests: number;
}

/**
 * A vitest reporter that writes each test file's import, set-up, hook and test time to
 * `test-artifacts/timings.json` (or `$TEST_TIMINGS`) and prints the totals and the slowest files:
 * `npx vitest run --reporter=default --reporter=./test/support/timing-reporter.ts`.
 */
export default class TimingReporter implements Reporter {
  private readonly files: FileTiming[] = [];

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    let testsMs = 0;
    let tests = 0;
    for (const test of module.children.allTests()) {
      testsMs += test.diagnostic()?.duration ?? 0;
      tests += 1;
    }
    this.files.push({
      file: path.relative(process.cwd(), module.moduleId),
      project: module.project.name,
      importMs: Math.round(d.collectDuration),
      setupMs: Math.round(d.setupDuration),
      testsMs: Math.round(testsMs),
      hooksMs: Math.round(Math.max(0, d.duration - testsMs)),
      tests,
    });
  }

  onTestRunEnd(): void {
    const out = process.env.TEST_TIMINGS ?? path.join('test-artifacts', 'timings.json');
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(this.files, null, 1)}\n`);
    const sum = (key: 'importMs' | 'setupMs' | 'testsMs' | 'hooksMs') =>
      Math.round(this.files.reduce((n, f) => n + f[key], 0) / 1000);
    const total = (f: FileTiming) => f.importMs + f.setupMs + f.testsMs + f.hooksMs;
    const lines = [...this.files]
      .sort((a, b) => total(b) - total(a))
      .slice(0, 20)
      .map(
        (f) =>
          `  ${(total(f) / 1000).toFixed(1).padStart(6)} s  import ${(f.importMs / 1000).toFixed(1)} hooks ${(f.hooksMs / 1000).toFixed(1)} tests ${(f.testsMs / 1000).toFixed(1)}  ${f.file}${f.project ? ` [${f.project}]` : ''}`,
      );
    process.stdout.write(
      `\ntimings (${this.files.length} files, summed over workers): import ${sum('importMs')} s, setup files ${sum('setupMs')} s, hooks ${sum('hooksMs')} s, tests ${sum('testsMs')} s; written to ${out}\nslowest files:\n${lines.join('\n')}\n`,
    );
  }
}
