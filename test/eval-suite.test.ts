/**
 * Eval suites (issue 24): the YAML format's errors name the file and the key; `runEvalSuite` runs
 * cases live on the scripted server (through the real SDK) and replayed from transcripts, and every
 * kind of expectation passes when met and names the miss when not.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { EvalSuiteError, loadEvalSuite, runEvalSuite } from '../src/evals/index.js';

const repoRoot = path.resolve(import.meta.dirname, '..');
let work: string;

// The agent under test: a module exporting a definition. `flaky_check` asks for approval on every
// other call (a counter in the module), so trials of one case can differ.
const AGENT = `
import { z } from 'zod';
import { defineAgent, defineTool } from ${JSON.stringify(path.join(repoRoot, 'src', 'index.js'))};
let calls = 0;
export const helper = defineAgent({
  name: 'helper',
  description: 'test agent',
  instructions: 'Help.',
  tools: [
    defineTool({ name: 'search', description: 'searches', parameters: z.object({ q: z.string(), limit: z.number().optional() }), execute: ({ q }) => 'found ' + q }),
    defineTool({ name: 'delete_all', description: 'deletes', parameters: z.object({}), needsApproval: true, execute: () => 'deleted' }),
    defineTool({ name: 'flaky_check', description: 'checks', parameters: z.object({}), needsApproval: () => calls++ % 2 === 0, execute: () => 'ok' }),
  ],
});
`;

const SEARCH_THEN_ANSWER = {
  turns: [
    { toolCalls: [{ name: 'search', arguments: { q: 'cats', limit: 3 } }] },
    { content: 'Cats: 3 found.' },
  ],
};

beforeAll(async () => {
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'eval-suite-'));
  await writeFile(path.join(work, 'agent.ts'), AGENT);
  await writeFile(
    path.join(work, 'changed-agent.ts'),
    AGENT.replace("instructions: 'Help.'", "instructions: 'Help more.'"),
  );
  await writeFile(path.join(work, 'search.yaml'), stringify(SEARCH_THEN_ANSWER));
  await writeFile(
    path.join(work, 'delete.yaml'),
    stringify({ turns: [{ toolCalls: [{ name: 'delete_all', arguments: {} }] }, { content: 'Done.' }] }),
  );
  await writeFile(
    path.join(work, 'flaky.yaml'),
    stringify({ turns: [{ toolCalls: [{ name: 'flaky_check', arguments: {} }] }, { content: 'ok' }] }),
  );
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

let count = 0;
/** Writes a suite (the agent and search scenario given unless `suite` says otherwise) and returns its file. */
async function suiteFile(suite: Record<string, unknown>, name = `s${++count}.eval.yaml`): Promise<string> {
  const file = path.join(work, name);
  await writeFile(
    file,
    stringify({ agent: { module: './agent.ts' }, model: { scenario: './search.yaml' }, ...suite }),
  );
  return file;
}

async function loadError(suite: Record<string, unknown>): Promise<string> {
  const file = await suiteFile(suite);
  const error = await loadEvalSuite(file).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(EvalSuiteError);
  const message = (error as Error).message;
  expect(message.startsWith(`${file}: `)).toBe(true);
  expect(message).not.toContain('\n');
  return message.slice(file.length + 2);
}

describe('eval suite files', () => {
  it('names the key of each kind of bad input', async () => {
    const live = { name: 'a', input: 'hi' };
    expect(await loadError({ cases: [] })).toBe('cases: expected at least one case');
    expect(await loadError({ cases: [{ ...live, inptu: 'x' }] })).toBe('cases[0]: unknown key "inptu"');
    expect(await loadError({ cases: [{ name: 'a' }] })).toBe(
      'cases[0].input: a live case needs an input message',
    );
    expect(await loadError({ cases: [{ name: 'a', mode: 'replay', input: 'x' }] })).toBe(
      'cases[0].transcript: a replay case needs a transcript file',
    );
    expect(await loadError({ cases: [{ ...live, expect: { output: { regex: '(' } } }] })).toBe(
      'cases[0].expect.output.regex: not a valid regular expression',
    );
    expect(
      await loadError({ cases: [{ ...live, expect: { trajectory: { steps: [], match: 'loose' } } }] }),
    ).toBe(
      'cases[0].expect.trajectory.match: Invalid option: expected one of "strict"|"unordered"|"subset"|"superset"',
    );
    expect(await loadError({ cases: [{ ...live, expect: { trajectory: [{ nam: 'a' }] } }] })).toBe(
      'cases[0].expect.trajectory.steps[0]: expected a tool name or { name, args? }',
    );
    expect(
      await loadError({ cases: [{ ...live, expect: { output: { schema: { type: 'frog' } } } }] }),
    ).toMatch(/^cases\[0\]\.expect\.output\.schema: not a usable JSON Schema \(.*frog/);
    expect(await loadError({ cases: [live, live] })).toBe(
      'cases[1].name: "a" is the name of an earlier case',
    );
    expect(await loadError({ agent: { bundle: 'x' }, cases: [live] })).toMatch(
      /^agent: expected \{ bundle, agent \}/,
    );
    expect(await loadError({ cases: [{ name: 'r', transcript: 'nope.jsonl' }] })).toMatch(
      /^cases\[0\]\.transcript: .*nope\.jsonl does not exist \(record it/,
    );
    expect(await loadError({ model: { scenario: './missing.yaml' }, cases: [live] })).toMatch(
      /^model\.scenario: .*missing\.yaml: cannot read file/,
    );
    expect(await loadError({ cases: [{ ...live, trials: 0 }] })).toMatch(/^cases\[0\]\.trials: /);
    await writeFile(
      path.join(work, 'broken.jsonl'),
      '{"seq":1,"at":"x","kind":"message","message":{"role":"user","content":"hi"}}\n{"seq":\n',
    );
    expect(await loadError({ cases: [{ name: 'r', transcript: 'broken.jsonl' }] })).toMatch(
      /^cases\[0\]\.transcript: .*broken\.jsonl line 2: not valid JSON/,
    );
  });

  it('a file that is not YAML, a folder without suites and an agent module without a definition are named', async () => {
    const bad = path.join(work, 'bad.eval.yaml');
    await writeFile(bad, 'cases: [\n');
    await expect(loadEvalSuite(bad)).rejects.toThrow(`${bad}: not a readable YAML file`);
    const empty = await mkdtemp(path.join(work, 'empty-'));
    await expect(runEvalSuite(empty)).rejects.toThrow(`${empty}: no eval suites in it (*.eval.yaml)`);
    await writeFile(path.join(work, 'nothing.mjs'), 'export const x = 1;\n');
    const file = await suiteFile({ agent: { module: './nothing.mjs' }, cases: [{ name: 'a', input: 'hi' }] });
    await expect(runEvalSuite(file)).rejects.toThrow(
      `${file}: agent.module: ${path.join(work, 'nothing.mjs')} exports no AgentDefinition`,
    );
  });

  it('a live case without a scenario and without a key is refused before anything runs', async () => {
    const file = await suiteFile({ model: undefined, cases: [{ name: 'a', input: 'hi' }] });
    await expect(runEvalSuite(file, { env: {} })).rejects.toThrow(
      `${file}: cases[0]: no model for the live case "a": set OPENAI_API_KEY`,
    );
  });
});

describe('runEvalSuite', () => {
  it('checks every kind of expectation, and names the first miss', async () => {
    const met = {
      trajectory: { match: 'strict', args: 'subset', steps: [{ name: 'search', args: { q: 'cats' } }] },
      notCalled: ['delete_all'],
      output: { contains: ['Cats', '3'], regex: '^Cats: \\d', equals: 'Cats: 3 found.' },
      terminateReason: 'completed',
      budget: { modelCalls: 2, tokens: 100000 },
    };
    const missed: [Record<string, unknown>, string][] = [
      [
        { trajectory: [{ name: 'search', args: { q: 'cats' } }] },
        'trajectory (strict): step 1: expected search({"q":"cats"}), got search({"q":"cats","limit":3})',
      ],
      [
        { trajectory: { match: 'superset', steps: ['search', 'delete_all'] } },
        'trajectory (superset): expected delete_all was not called (1 missing)',
      ],
      [{ notCalled: ['search'] }, 'search was called (notCalled)'],
      [{ approvalsAsked: ['search'] }, 'no approval was asked for search'],
      [{ output: { contains: 'Dogs' } }, 'output does not contain "Dogs": "Cats: 3 found."'],
      [{ output: { regex: '^Dogs' } }, 'output does not match /^Dogs/: "Cats: 3 found."'],
      [{ output: { equals: 'Cats.' } }, 'output: expected "Cats.", got "Cats: 3 found."'],
      [{ output: { schema: { type: 'object' } } }, 'output schema: the output is not JSON: "Cats: 3 found."'],
      [{ terminateReason: 'question' }, 'terminateReason: expected question, got completed'],
      [{ budget: { modelCalls: 1 } }, 'budget: 2 model calls, at most 1 allowed'],
      [{ budget: { tokens: 10 } }, 'budget: '],
    ];
    const file = await suiteFile({
      cases: [
        { name: 'met', input: 'find cats', expect: met },
        ...missed.map(([expectation], i) => ({ name: `miss ${i}`, input: 'find cats', expect: expectation })),
      ],
    });
    const lines: string[] = [];
    const report = await runEvalSuite(file, { onCase: (r) => lines.push(r.case) });
    expect(lines).toEqual(report.cases.map((c) => c.case));
    expect(report.cases[0]).toMatchObject({ case: 'met', passed: true, misses: [], mode: 'live' });
    expect(report.cases[0]!.outcome).toMatchObject({ modelCalls: 2, terminateReason: 'completed' });
    for (const [i, [, miss]] of missed.entries()) {
      const result = report.cases[i + 1]!;
      expect(result.passed, result.case).toBe(false);
      expect(result.misses[0], result.case).toContain(miss);
    }
    expect(report).toMatchObject({ passed: 1, failed: missed.length, skipped: 0 });
  });

  it('a run that ended in error fails the case unless it expects terminateReason: error', async () => {
    await writeFile(
      path.join(work, 'broken-model.yaml'),
      stringify({ turns: [{ error: { status: 400, message: 'model says no' } }] }),
    );
    const cases = [{}, { terminateReason: 'error' }].map((expectation, i) => ({
      name: `error ${i}`,
      input: 'hi',
      scenario: './broken-model.yaml',
      expect: { notCalled: ['delete_all'], ...expectation },
    }));
    const report = await runEvalSuite(await suiteFile({ cases }));
    expect(report.cases[0]!.passed).toBe(false);
    expect(report.cases[0]!.misses[0]).toMatch(/^the run ended in error: .*model says no/);
    expect(report.cases[1]!.passed).toBe(true);
  });

  it('an input list is one turn each; expectations see the whole case and the last answer', async () => {
    await writeFile(
      path.join(work, 'two-turns.yaml'),
      stringify({
        turns: [
          { toolCalls: [{ name: 'search', arguments: { q: 'a' } }] },
          { content: 'first' },
          { toolCalls: [{ name: 'search', arguments: { q: 'b' } }] },
          { content: 'second' },
        ],
      }),
    );
    const file = await suiteFile({
      cases: [
        {
          name: 'two turns',
          input: ['one', 'two'],
          scenario: './two-turns.yaml',
          expect: {
            trajectory: [
              { name: 'search', args: { q: 'a' } },
              { name: 'search', args: { q: 'b' } },
            ],
            output: { equals: 'second' },
            budget: { modelCalls: 4 },
          },
        },
      ],
    });
    const [result] = (await runEvalSuite(file)).cases;
    expect(result).toMatchObject({ passed: true, misses: [] });
    expect(result!.outcome).toMatchObject({ modelCalls: 4, response: 'second' });
    expect(result!.outcome!.tokens).toBeGreaterThan(0);
  });

  it('answers approvals as the case says and sees which were asked', async () => {
    const cases = ['approve', 'reject'].map((answer) => ({
      name: answer,
      input: 'wipe it',
      scenario: './delete.yaml',
      approvals: { delete_all: answer },
      expect: { approvalsAsked: ['delete_all'], trajectory: ['delete_all'] },
    }));
    const report = await runEvalSuite(await suiteFile({ cases }), { record: true });
    expect(report.cases.map((c) => c.passed)).toEqual([true, true]);
    // The recorded transcripts say whether the tool ran: approved, it did; rejected, the model got the reason.
    const [approved, rejected] = await Promise.all(report.cases.map((c) => readFile(c.recorded!, 'utf8')));
    expect(approved).toContain('"result":"deleted"');
    expect(rejected).not.toContain('"result":"deleted"');
    expect(rejected).toContain('rejected by the eval case');
  });

  it('a live case passes when the share of its trials that pass reaches passRate', async () => {
    const flaky = (passRate: number) => ({
      name: `rate ${passRate}`,
      input: 'check',
      scenario: './flaky.yaml',
      trials: 3,
      passRate,
      expect: { approvalsAsked: ['flaky_check'] },
    });
    const report = await runEvalSuite(await suiteFile({ cases: [flaky(0.6), flaky(1)] }));
    expect(report.cases.map((c) => [c.passed, c.passedTrials, c.trials])).toEqual([
      [true, 2, 3],
      [false, 1, 3],
    ]);
    expect(report.cases[1]!.misses).toEqual(['no approval was asked for flaky_check']);
  });

  it('records a live case to its transcript and replays it; --mode picks the cases', async () => {
    const transcript = path.join(work, 'rec', 'search.jsonl');
    const file = await suiteFile({
      cases: [
        {
          name: 'live',
          input: 'find cats',
          transcript: './rec/search.jsonl',
          mode: 'live',
          expect: { trajectory: ['search'] },
        },
        { name: 'other', input: 'find cats', expect: { output: { contains: 'Cats' } } },
        {
          name: 'replayed',
          transcript: './rec/search.jsonl',
          expect: { trajectory: ['search'], output: { contains: 'Cats' } },
        },
      ],
    });
    const recorded = await runEvalSuite(file, { record: true });
    expect(recorded.cases.map((c) => [c.case, c.recorded])).toEqual([
      ['live', transcript],
      ['other', path.join(work, `${path.basename(file, '.eval.yaml')}.recordings`, 'other.jsonl')],
    ]);
    expect(recorded.skipped).toBe(1);
    expect(await readFile(transcript, 'utf8')).toContain('"event":"model_call"');
    const replayed = await runEvalSuite(file, { mode: 'replay' });
    expect(replayed.cases.map((c) => [c.case, c.mode, c.passed])).toEqual([
      ['live', 'replay', true],
      ['replayed', 'replay', true],
    ]);
    const all = await runEvalSuite(file, { trials: 2 });
    expect(all.cases.map((c) => [c.case, c.mode, c.trials])).toEqual([
      ['live', 'live', 2],
      ['other', 'live', 2],
      ['replayed', 'replay', 1],
    ]);
  });

  it('a replay of a changed agent diverges under strict matching, and goes through with warnings under sequential', async () => {
    const recorder = await suiteFile({
      cases: [{ name: 'rec', input: 'find cats', transcript: './rec/changed.jsonl', mode: 'live' }],
    });
    await runEvalSuite(recorder, { record: true });
    const replayed = (replay: Record<string, unknown>) => ({
      name: `replay ${JSON.stringify(replay)}`,
      transcript: './rec/changed.jsonl',
      replay,
      expect: { trajectory: ['search'], output: { contains: 'Cats' } },
    });
    const file = await suiteFile({
      agent: { module: './changed-agent.ts' },
      cases: [replayed({}), replayed({ match: 'sequential' })],
    });
    const report = await runEvalSuite(file);
    const [strict, sequential] = report.cases;
    expect(strict!.passed).toBe(false);
    expect(strict!.misses[0]).toBe(
      'replay diverged: model call 1 (turn 1, iteration 1): the request differs at messages[0].content: recorded "Help.", now "Help more."',
    );
    expect(sequential!.passed).toBe(true);
    expect(sequential!.outcome?.warnings?.[0]).toContain('messages[0].content');
  });

  it('tests a bundle agent and a skills assistant; their save_output writes to a folder of its own', async () => {
    const skills = path.join(work, 'skills', 'greeting');
    await mkdir(skills, { recursive: true });
    await writeFile(
      path.join(skills, 'SKILL.md'),
      '---\nname: greeting\ndescription: Greets people warmly\n---\n\nSay hello.\n',
    );
    await writeFile(
      path.join(work, 'save.yaml'),
      stringify({
        turns: [
          {
            toolCalls: [
              {
                name: 'save_output',
                arguments: { file_path: '{output_folder}/eval-note.md', content: 'note' },
              },
            ],
          },
          { content: 'Saved.' },
        ],
      }),
    );
    await writeFile(
      path.join(work, 'activate.yaml'),
      stringify({
        turns: [
          { toolCalls: [{ name: 'activate_skill', arguments: { name: 'greeting' } }] },
          { content: 'Hello!' },
        ],
      }),
    );
    const bundle = path.join(repoRoot, 'bundles', 'requirements-workflow');
    const save = {
      name: 'saves',
      input: 'save a note',
      scenario: './save.yaml',
      expect: { trajectory: ['save_output'], output: { equals: 'Saved.' } },
    };
    const bundleSuite = await suiteFile({
      agent: { bundle, agent: 'intake-facilitator', project: '.' },
      cases: [save],
    });
    const skillsSuite = await suiteFile({
      agent: { skills: ['./skills'], project: '.' },
      cases: [
        save,
        {
          name: 'activates',
          input: 'hi',
          scenario: './activate.yaml',
          expect: { trajectory: ['activate_skill'] },
        },
      ],
    });
    for (const file of [bundleSuite, skillsSuite]) {
      const result = await runEvalSuite(file);
      expect(result.cases.map((c) => [c.case, c.passed, c.misses])).toEqual(
        result.cases.map((c) => [c.case, true, []]),
      );
    }
    // Neither the bundle's output folder ({project-root}/docs/requirements) nor <project>/output got it.
    for (const dir of [path.join(work, 'docs'), path.join(work, 'output'), path.join(bundle, 'docs')]) {
      await expect(readFile(path.join(dir, 'requirements', 'eval-note.md'))).rejects.toThrow(/ENOENT/);
      await expect(readFile(path.join(dir, 'eval-note.md'))).rejects.toThrow(/ENOENT/);
    }
    const missing = await suiteFile({ agent: { bundle, agent: 'nobody' }, cases: [save] });
    await expect(runEvalSuite(missing)).rejects.toThrow(`${missing}: agent: `);
  });
});
