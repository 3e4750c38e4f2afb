// A/B: agentMachine (and agent) from two dist folders, interleaved in one process. argv: distA distB kinds sessions
import { createActor, waitFor } from 'xstate';

const [A, B] = [process.argv[2], process.argv[3]];
const kindsWanted = (process.argv[4] ?? 'machine').split(',');
const sessions = Number(process.argv[5] ?? 1000);
const CALLS = 11;
const doc = 'x'.repeat(1000);
const { z } = await import('zod');
async function load(dist) {
  const m = await import(`${dist}/index.js`);
  const reply = (i) => ({
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: `call_${i}`, type: 'function', function: { name: 'lookup', arguments: `{"key":"k${i}"}` } },
    ],
  });
  const final = { role: 'assistant', content: 'done '.repeat(40) };
  const call = (i) => ({
    id: `call_${i}`,
    name: 'lookup',
    argsText: `{"key":"k${i}"}`,
    args: { key: `k${i}` },
    needsApproval: false,
  });
  const effects = {
    callLlm: async (input) => {
      const n = input.messages.filter((x) => x.role === 'assistant').length;
      return n < CALLS - 1
        ? {
            message: reply(n),
            calls: [call(n)],
            finishReason: 'tool_calls',
            usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
            at: Date.now(),
          }
        : {
            message: final,
            calls: [],
            finishReason: 'stop',
            usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
            at: Date.now(),
          };
    },
    runTools: async (input) =>
      input.calls.map((c) => ({
        toolCallId: c.id,
        name: c.name,
        content: doc,
        isError: false,
        durationMs: 0,
      })),
    hears: (t) => t === 'turn_end',
  };
  const lookup = m.defineTool({
    name: 'lookup',
    description: 'd',
    parameters: z.object({ key: z.string() }),
    execute: async () => doc,
  });
  const client = {
    apiKey: 'x',
    chat: {
      completions: {
        create: async (body) => {
          const n = body.messages.filter((x) => x.role === 'assistant').length;
          return {
            choices: [
              {
                message: n < CALLS - 1 ? reply(n) : final,
                finish_reason: n < CALLS - 1 ? 'tool_calls' : 'stop',
              },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          };
        },
      },
    },
  };
  return {
    async machine() {
      const a = createActor(m.agentMachine, { input: { messages: [{ role: 'system', content: 's' }] } });
      m.bindAgentEffects(a, effects);
      a.start();
      await waitFor(a, (s) => s.matches('AwaitingInput'));
      a.send({ type: 'USER_MESSAGE', text: 'u', at: Date.now() });
      await waitFor(a, (s) => s.matches('Completed'));
      a.stop();
    },
    async agent() {
      const agent = m.createAgent({
        client,
        tools: [lookup],
        stream: false,
        loopControlTools: false,
        contextWindow: false,
      });
      await agent.send('u');
      agent.stop();
    },
  };
}
const impl = { A: await load(A), B: await load(B) };
for (const k of kindsWanted) for (const v of ['A', 'B']) for (let i = 0; i < 200; i++) await impl[v][k]();
const res = {};
for (let r = 0; r < 7; r++)
  for (const k of kindsWanted)
    for (const v of r % 2 ? ['A', 'B'] : ['B', 'A']) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < sessions; i++) await impl[v][k]();
      (res[`${k}@${v}`] ??= []).push(Number(process.hrtime.bigint() - t0) / 1e3 / sessions / CALLS);
    }
const med = (x) => x.sort((a, b) => a - b)[Math.floor(x.length / 2)];
for (const k of kindsWanted) {
  const a = med(res[`${k}@A`]),
    b = med(res[`${k}@B`]);
  console.log(k, 'A', a.toFixed(1), 'B', b.toFixed(1), 'us/call', `B/A ${(b / a).toFixed(3)}`);
}
