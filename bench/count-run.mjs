// Runs `sessions` sessions of one kind (see ab.mjs) from one dist folder, for instruction counting:
// valgrind --tool=callgrind --callgrind-out-file=/dev/null node bench/count-run.mjs <dist> <kind> <sessions>
import { createActor, waitFor } from 'xstate';

const [dist, kind = 'machine', n = '300'] = process.argv.slice(2);
const CALLS = 11;
const doc = 'x'.repeat(1000);
const { z } = await import('zod');
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
const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
const effects = {
  callLlm: async (input) => {
    const k = input.messages.filter((x) => x.role === 'assistant').length;
    return k < CALLS - 1
      ? { message: reply(k), calls: [call(k)], finishReason: 'tool_calls', usage, at: 1 }
      : { message: final, calls: [], finishReason: 'stop', usage, at: 1 };
  },
  runTools: async (input) =>
    input.calls.map((c) => ({ toolCallId: c.id, name: c.name, content: doc, isError: false, durationMs: 0 })),
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
        const k = body.messages.filter((x) => x.role === 'assistant').length;
        return {
          choices: [
            {
              message: k < CALLS - 1 ? reply(k) : final,
              finish_reason: k < CALLS - 1 ? 'tool_calls' : 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        };
      },
    },
  },
};
const kinds = {
  async machine() {
    const a = createActor(m.agentMachine, { input: { messages: [{ role: 'system', content: 's' }] } });
    m.bindAgentEffects(a, effects);
    a.start();
    await waitFor(a, (s) => s.matches('AwaitingInput'));
    a.send({ type: 'USER_MESSAGE', text: 'u', at: 1 });
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
for (let i = 0; i < Number(n); i++) await kinds[kind]();
