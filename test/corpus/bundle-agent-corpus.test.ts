import { realpathSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadBundleAgent } from '../../src/bundle/bundle-agent.js';
import type { BundleAgent } from '../../src/bundle/bundle-agent-types.js';
import type { FileLoadEvent } from '../../src/bundle/sandbox/sandbox.js';

// Tests of loadBundleAgent against the shared corpus (../shared/corpus/bmad): `npm run test:corpus`.
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The real path: file-load events report real paths, and shared/ may be reached through a symlink.
const CORPUS_A = realpathSync(path.resolve(REPO, '../shared/corpus/bmad/v6-alpha0-e7fcc56'));

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-bundle-')));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const call = (agent: BundleAgent, name: string, args: Record<string, unknown>) =>
  agent.definition.tools.find((t) => t.name === name)!.execute(args, {} as never) as Promise<
    Record<string, unknown>
  >;

describe('corpus agents through loadBundleAgent', () => {
  test('a corpus agent found by file stem reads only its file and its module config', async () => {
    const events: FileLoadEvent[] = [];
    await loadBundleAgent({
      bundleRoot: path.join(CORPUS_A, 'bmad', 'bmm'),
      agent: 'analyst',
      outputFolder: path.join(dir, 'out'),
      onFileLoad: (e) => events.push(e),
    });
    expect(events.map((e) => path.relative(CORPUS_A, e.path))).toEqual([
      'bmad/bmm/agents/analyst.md',
      'bmad/bmm/config.yaml',
    ]);
  });

  test('a project folder holding bmad/ finds an agent by name in any module, core included', async () => {
    const out = path.join(dir, 'out');
    const bob = await loadBundleAgent({ bundleRoot: CORPUS_A, agent: 'Bob', outputFolder: out });
    expect([bob.file, bob.bundleRoot, bob.projectRoot]).toEqual([
      path.join(CORPUS_A, 'bmad/bmm/agents/sm.md'),
      path.join(CORPUS_A, 'bmad/bmm'),
      CORPUS_A,
    ]);
    const master = await loadBundleAgent({
      bundleRoot: path.join(CORPUS_A, 'bmad'),
      agent: 'bmad-master',
      outputFolder: out,
    });
    expect(master.coreRoot).toBe(path.join(CORPUS_A, 'bmad/core'));
  });

  test('loads a corpus workflow whose installed_path is wrong, from next to its workflow.yaml', async () => {
    const agent = await loadBundleAgent({
      bundleRoot: path.join(CORPUS_A, 'bmad', 'bmm'),
      agent: 'sm',
      outputFolder: path.join(dir, 'out'),
    });
    const result = await call(agent, 'execute_workflow', {
      workflow_path: '{project-root}/bmad/bmm/workflows/4-implementation/create-story/workflow.yaml',
    });
    expect(result.instructions_path).toBe(
      path.join(CORPUS_A, 'bmad/bmm/workflows/4-implementation/create-story/instructions.md'),
    );
    expect(result.warnings).toHaveLength(2);
    expect((result.config as Record<string, unknown>).default_output_file).toBe(
      `${path.join(CORPUS_A, 'docs/stories')}/story-{{epic_num}}.{{story_num}}.md`,
    );
  });
});
