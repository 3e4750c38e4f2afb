// Child process: figures (5) request building, (6) start-up / validate and (7) long streamed
// arguments, agentloop only.
//   node --expose-gc bench/micro.mjs requests|startup|arguments '<json params>'
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { summary } from './lib/stats.mjs';

const [figure, rawParams] = process.argv.slice(2);
const params = JSON.parse(rawParams ?? '{}');
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const time = async (fn) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

/** A conversation of `n` messages shaped like the task: system, user, then tool-call rounds. */
function history(n, resultChars) {
  const body = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(resultChars / 27)).slice(0, resultChars);
  const messages = [
    { role: 'system', content: 'You are a research assistant.' },
    { role: 'user', content: 'Collect the documents.' },
  ];
  for (let i = 0; messages.length < n; i++) messages.push(...round(i, body));
  return messages.slice(0, n);
}
function round(i, body) {
  const id = `call_${i}`;
  return [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'lookup', arguments: `{"key":"k${i}"}` } }],
    },
    { role: 'tool', tool_call_id: id, content: `k${i}: ${body}` },
  ];
}

async function requests() {
  const { defineTool } = await import('../dist/index.js');
  const { createContextGuard, ContextWindow, resolveModelWindow, tokenCounterFor } = await import(
    '../dist/unstable.js'
  );
  const { z } = await import('./lib/root-deps.mjs');
  const tool = defineTool({
    name: 'lookup',
    description: 'Returns the document stored under a key.',
    parameters: z.object({ key: z.string() }),
    execute: () => '',
  });
  const tools = [tool.json];
  const out = {};
  // The o200k tables load on the first count in a process (once; reported apart).
  const { encoding } = resolveModelWindow('gpt-4o-mini');
  out.tokenizerLoadMs = await time(() =>
    tokenCounterFor(encoding).countMessage({ role: 'user', content: 'hi' }),
  );
  // Histories: short results (stay under the window: the byte bound decides, no tokenizer) and 1 KB
  // results (about 270k tokens for 1,000 messages: above gpt-4o-mini's 128k window, so every request is pruned).
  for (const [label, chars] of [
    ['short', 64],
    ['1kb', 1024],
  ]) {
    const base = history(params.messages, chars);
    // createContextGuard: what an agent runs before every model call.
    const guard = createContextGuard('gpt-4o-mini', tools);
    let messages = base;
    const first = await time(() => guard(messages));
    const steady = [];
    let pruned = false;
    for (let i = 0; i < params.steps; i++) {
      // The loop appends an assistant message and its tool result, then builds the next request.
      messages = [...messages, ...round(100_000 + i, 'x'.repeat(chars))];
      steady.push(
        await time(() => {
          pruned = guard(messages).pruned !== undefined || pruned;
        }),
      );
    }
    out[`guard_${label}`] = { firstMs: first, steadyMs: summary(steady), pruned };
    // ContextWindow.prepareRequest directly (always counts tokens, cached per message).
    // Fresh message objects: token counts are cached per message object, and the guard counted `base`.
    const { contextWindow } = resolveModelWindow('gpt-4o-mini');
    const window = new ContextWindow({ contextWindow, tools, counter: tokenCounterFor(encoding) });
    messages = structuredClone(base);
    const wFirst = await time(() => window.prepareRequest(messages));
    const wSteady = [];
    for (let i = 0; i < params.steps; i++) {
      messages = [...messages, ...round(200_000 + i, 'y'.repeat(chars))];
      wSteady.push(await time(() => window.prepareRequest(messages)));
    }
    out[`window_${label}`] = { firstMs: wFirst, steadyMs: summary(wSteady) };
  }
  return out;
}

async function startup() {
  const { loadBundleAgent, createAgent, toAgentOptions, validateTree } = await import('../dist/index.js');
  const out = {};
  const bundleRoot = path.join(repo, 'bundles/requirements-workflow');
  const start = async () => {
    const bundle = await loadBundleAgent({
      bundleRoot,
      agent: 'intake-facilitator',
      projectRoot: params.projectRoot,
    });
    const agent = createAgent(
      toAgentOptions(bundle.definition, {}, { baseURL: 'http://127.0.0.1:9/v1', apiKey: 'bench' }),
    );
    await agent.ready();
    if (agent.state !== 'AwaitingInput') throw new Error(`agent did not start: ${agent.state}`);
    agent.stop();
  };
  const first = await time(start);
  const warm = [];
  for (let i = 0; i < params.repeats; i++) warm.push(await time(start));
  out.bundleStartup = { firstMs: first, warmMs: summary(warm) };

  const corpus = path.resolve(repo, '..', 'shared', 'corpus', 'bmad');
  out.validate = {};
  if (!existsSync(corpus)) {
    out.validateNote = `corpus not found at ${corpus}: validate skipped`;
    return out;
  }
  for (const name of readdirSync(corpus).sort()) {
    const tree = path.join(corpus, name);
    if (!statSync(tree).isDirectory()) continue;
    let report;
    const vFirst = await time(async () => {
      report = await validateTree(tree);
    });
    const vWarm = [];
    for (let i = 0; i < params.validateRepeats; i++) vWarm.push(await time(() => validateTree(tree)));
    out.validate[name] = {
      firstMs: vFirst,
      warmMs: summary(vWarm),
      agents: report.agents?.length,
      workflows: report.workflows?.length,
    };
  }
  return out;
}

/** JSON arguments of `chars` characters (a multiple of 8) whose every 8-character piece ends in `}`. */
function bracedArguments(chars) {
  return `{"t":"x}${'xxxxxxx}'.repeat((chars - 16) / 8)}xxxxxx"}`;
}

/**
 * (7) A message whose first call has 106 KiB of arguments in 8-character fragments, each ending in `}`
 * (a completeness check that re-parses the text so far on such fragments is quadratic), then a small
 * second call. `assemblyMs`: the stream assembler alone, fed the ~13,600 chunks as objects.
 * `sessionMs`: `agent.send` through the SDK and an in-process scripted server (its encoding counts).
 */
async function argumentsFigure() {
  const { createAgent, defineTool } = await import('../dist/index.js');
  const { startScriptedServer } = await import('../dist/testing/index.js');
  const { CompletionAssembler } = await import('../dist/llm/completion-assembler.js');
  const { z } = await import('./lib/root-deps.mjs');
  const args = bracedArguments(params.kib * 1024);
  const chunk = (delta, finish = null) => ({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const begin = (index, id) =>
    chunk({ tool_calls: [{ index, id, type: 'function', function: { name: 'keep', arguments: '' } }] });
  const chunks = [begin(0, 'a')];
  for (let i = 0; i < args.length; i += 8)
    chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 8) } }] }));
  chunks.push(begin(1, 'b'), chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }));
  chunks.push(chunk({}, 'tool_calls'));
  const assembly = [];
  for (let r = 0; r < params.repeats; r++) {
    let assembled;
    assembly.push(
      await time(() => {
        // The same calls for the assembler before and after the llm/ split (its constructor changed).
        const assembler = new CompletionAssembler({ usedCallIds: new Set(), callIdStem: 'call_m1' });
        for (const c of chunks) assembler.push(c);
        assembled = assembler.toCompletion ? assembler.toCompletion().calls : assembler.toolCalls;
      }),
    );
    if (assembled[0].argsText !== args) throw new Error('arguments: the assembled text differs');
  }

  const server = await startScriptedServer({
    scenario: {
      turns: [
        {
          chunkSize: 8,
          toolCalls: [
            { name: 'keep', arguments: args },
            { name: 'keep', arguments: { t: 'small' } },
          ],
        },
        { content: 'done' },
      ],
    },
  });
  const keep = defineTool({
    name: 'keep',
    description: 'keeps its text',
    parameters: z.object({ t: z.string() }),
    execute: ({ t }) => `kept ${t.length}`,
  });
  const session = [];
  try {
    for (let r = 0; r < params.repeats; r++) {
      const agent = createAgent({
        baseURL: server.url,
        apiKey: 'bench',
        tools: [keep],
        contextWindow: false,
      });
      let result;
      session.push(
        await time(async () => {
          result = await agent.send('go');
        }),
      );
      agent.stop();
      if (result.response !== 'done') throw new Error(`arguments: the session ended with ${result.state}`);
    }
  } finally {
    await server.close();
  }
  return {
    argsChars: args.length,
    fragments: chunks.length - 4,
    assemblyMs: summary(assembly),
    sessionMs: summary(session),
  };
}

const figures = { requests, startup, arguments: argumentsFigure };
const result = await figures[figure]();
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
