import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

const bundle = path.resolve(import.meta.dirname, '..', 'bundles', 'requirements-workflow');

async function cli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

describe('agentloop run', () => {
  it('prints the ExecutionResult as JSON with --json, events on stderr', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-run-'));
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(
      scenario,
      [
        'turns:',
        '  - toolCalls:',
        '      - name: save_output',
        '        arguments: { file_path: "{output_folder}/note.md", content: "# Note" }',
        '  - content: Saved the note.',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await cli([
      'run',
      '--bundle',
      bundle,
      '--agent',
      'intake-facilitator',
      '--project',
      dir,
      '--scenario',
      scenario,
      '--json',
      'save a note',
    ]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({
      success: true,
      response: 'Saved the note.',
      terminateReason: 'completed',
      iterations: 2,
    });
    expect(stderr).toMatch(/save_output/);
    expect(await readdir(path.join(dir, 'docs', 'requirements'))).toEqual(['note.md']);
  });

  it('names the unknown agent and exits non-zero', async () => {
    const { code, stderr } = await cli([
      'run',
      '--bundle',
      bundle,
      '--agent',
      'nobody',
      '--scenario',
      'x.yaml',
      'hi',
    ]);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/nobody/);
  });

  it('explains usage', async () => {
    const { code, stderr } = await cli(['run']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/Usage: agentloop run/);
  });
});
