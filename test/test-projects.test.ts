import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedFiles } from '../vitest.config.js';
import { repoRoot } from './support/build-dist.js';
import { processWideChanges } from './support/process-wide.js';

// This file is left out: it holds the patterns' samples as text, and changes nothing.
const testFiles = readdirSync(path.join(repoRoot, 'test'))
  .filter((name) => name.endsWith('.test.ts') && name !== 'test-projects.test.ts')
  .map((name) => `test/${name}`);

describe('the two vitest projects', () => {
  it('no file of the shared project changes process-wide state', () => {
    const offenders = testFiles
      .filter((file) => !(file in isolatedFiles))
      .flatMap((file) => {
        const why = processWideChanges(readFileSync(path.join(repoRoot, file), 'utf8'));
        return why.length > 0 ? [`${file}: ${why.join('; ')} (list it in isolatedFiles)`] : [];
      });
    expect(offenders).toEqual([]);
  });

  it('every isolated file exists and says why it is isolated', () => {
    for (const [file, why] of Object.entries(isolatedFiles)) {
      expect(existsSync(path.join(repoRoot, file)), file).toBe(true);
      expect(why.trim(), file).not.toBe('');
    }
  });

  it('finds each kind of process-wide change', () => {
    const samples = [
      "process.env.OPENAI_API_KEY = 'k';",
      "process.env['X'] ??= '1';",
      'delete process.env.X;',
      "vi.stubEnv('A', 'b');",
      "vi.spyOn(JSON, 'parse');",
      'vi.useFakeTimers();',
      "process.chdir('/tmp');",
      "process.on('unhandledRejection', f);",
      'context.setGlobalContextManager(m);',
      'console.info = console.error;',
      'const crashes = watchCrashes();',
      'const { made } = await countingAbortControllers(run);',
      'await DBOS.launch();',
      'const before = workSnapshot();',
    ];
    for (const sample of samples) expect(processWideChanges(sample), sample).not.toEqual([]);
    for (const fine of [
      'const key = process.env.OPENAI_API_KEY;',
      "if (process.env.X === '1') go();",
      'env: { ...process.env, NO_COLOR: "1" }',
      'server.on("close", f);',
    ])
      expect(processWideChanges(fine), fine).toEqual([]);
  });
});
