import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenario, parseScenario, ScenarioError, startScriptedServer } from '../src/testing/index.js';
import { checkChatRequest } from '../src/testing/openai-wire.js';
import { splitText } from '../src/testing/split-text.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentloop-scenario-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const yamlScenario = `
model: scripted-demo
latencyMs: 5
turns:
  - content: Let me read that file.
    toolCalls:
      - name: read_file
        arguments: { path: README.md }
  - error: { status: 429, headers: { retry-after-ms: 10 } }
    times: 1
    content: Done.
`;

describe('loadScenario', () => {
  it('loads a YAML file and the server plays it', async () => {
    const file = join(dir, 'demo.yaml');
    await writeFile(file, yamlScenario);
    const scenario = await loadScenario(file);
    expect(scenario.model).toBe('scripted-demo');
    expect(scenario.latencyMs).toBe(5);
    expect(scenario.turns).toHaveLength(2);
    expect(scenario.turns[0]).toEqual({
      content: 'Let me read that file.',
      toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }],
    });
    // A YAML number header value is normalised to a string.
    expect(scenario.turns[1]).toMatchObject({ error: { headers: { 'retry-after-ms': '10' } } });

    const server = await startScriptedServer({ scenario: file });
    try {
      const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 1 });
      const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'read_file' } }];
      const first = await client.chat.completions.create({
        model: 'x',
        tools,
        messages: [{ role: 'user', content: 'read it' }],
      });
      expect(first.model).toBe('scripted-demo');
      const call = first.choices[0]!.message.tool_calls![0]!;
      expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ path: 'README.md' });
      const second = await client.chat.completions.create({
        model: 'x',
        tools,
        messages: [
          { role: 'user', content: 'read it' },
          first.choices[0]!.message,
          { role: 'tool', tool_call_id: call.id, content: '# README' },
        ],
      });
      expect(second.choices[0]!.message.content).toBe('Done.');
      expect(server.requestCount).toBe(3); // One 429, retried.
    } finally {
      await server.close();
    }
  });

  it('loads JSON and accepts a bare list of turns', async () => {
    const file = join(dir, 'list.json');
    await writeFile(file, JSON.stringify([{ content: 'a' }, { content: 'b', finishReason: 'length' }]));
    expect(await loadScenario(file)).toEqual({
      turns: [{ content: 'a' }, { content: 'b', finishReason: 'length' }],
    });
  });

  it('names the file, the turn index and the key of each problem', async () => {
    const file = join(dir, 'bad.yml');
    await writeFile(
      file,
      'turns:\n  - content: ok\n  - toolcalls: []\n  - toolCalls:\n      - arguments: {}\n    fault: explode\n',
    );
    const error = await loadScenario(file).catch((e) => e);
    expect(error).toBeInstanceOf(ScenarioError);
    expect(error.source).toBe(file);
    expect(error.message).toContain(file);
    expect(error.problems).toContain('turns[1]: unknown key "toolcalls"');
    expect(error.problems.some((p: string) => p.startsWith('turns[2].toolCalls[0].name:'))).toBe(true);
    expect(error.problems.some((p: string) => p.startsWith('turns[2].fault:'))).toBe(true);
    expect(error.problems.some((p: string) => p.startsWith('turns[0]'))).toBe(false);
  });

  it('reports unparsable YAML, a missing file and an unknown extension with the path', async () => {
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'turns: [\n  - content: "x\n');
    await expect(loadScenario(broken)).rejects.toThrow(
      /broken\.yaml: invalid scenario:\n {2}cannot parse YAML/,
    );
    await expect(loadScenario(join(dir, 'missing.json'))).rejects.toThrow(/missing\.json.*cannot read file/s);
    await expect(loadScenario(join(dir, 'scenario.txt'))).rejects.toThrow(
      /scenario\.txt.*unsupported file type/s,
    );
  });

  it('loads the example in docs/scripted-server.md', async () => {
    const doc = await readFile(new URL('../docs/scripted-server.md', import.meta.url), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    const file = join(dir, 'doc-example.yaml');
    await writeFile(file, example!);
    const scenario = await loadScenario(file);
    expect(scenario.turns).toHaveLength(3);
    expect(scenario.turns[2]).toMatchObject({ fault: 'cut-mid-tool-call', times: 1, chunkSize: 4 });
  });

  it('checks in-memory scenarios too, and rules out times without an error or fault', () => {
    expect(() => parseScenario({ turns: [{ content: 'x', times: 1 }] })).toThrow(
      'turns[0].times: times needs an error or a fault to limit',
    );
    expect(() => parseScenario({ turn: [] })).toThrow(/unknown key "turn"/);
    const fn = () => ({ content: 'dynamic' });
    expect(parseScenario({ turns: [fn] }).turns[0]).toBe(fn);
  });
});

describe('wire helpers', () => {
  it('splitText pieces always reassemble and respect the size and surrogate pairs', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.option(fc.integer({ min: 1, max: 20 })),
        (text, size) => {
          const pieces = splitText(text, size ?? undefined);
          expect(pieces.join('')).toBe(text);
          for (const piece of pieces) {
            expect(piece.length).toBeLessThanOrEqual(Math.max(size ?? 8, 2));
            expect(/^[\udc00-\udfff]/.test(piece)).toBe(false);
          }
          if (size === null && [...text].length >= 2) expect(pieces.length).toBeGreaterThanOrEqual(2);
        },
      ),
    );
  });

  it('splitText keeps an emoji whole even when the default size would cut it', () => {
    expect(splitText('a😀', undefined)).toEqual(['a', '😀']);
    expect(splitText('😀😀😀', 1)).toEqual(['😀', '😀', '😀']);
  });

  it('checkChatRequest counts assistant messages and accepts answered tool calls in any order', () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } });
    const result = checkChatRequest({
      model: 'm',
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
        { role: 'tool', tool_call_id: 'b', content: '1' },
        { role: 'tool', tool_call_id: 'a', content: '2' },
        { role: 'assistant', content: 'done' },
        { role: 'user', content: 'again' },
      ],
    });
    expect(result).toEqual({ ok: true, assistantCount: 2 });
    const badRole = checkChatRequest({ model: 'm', messages: [{ role: 'robot', content: 'x' }] });
    expect(badRole).toMatchObject({ ok: false, problem: { status: 400, param: 'messages[0].role' } });
  });
});
