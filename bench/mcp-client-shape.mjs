// What the MCP SDK's client does with an `ask_<agent>` answer, by the answer's shape: its stdio
// transport's JSON.parse and JSONRPCMessageSchema, the Protocol's response guards, and Client.callTool's
// CallToolResultSchema (the ajv check of structuredContent, which a client that listed the tools adds,
// is not counted). Hot, in one process: µs a response, median of the rounds.
//   node bench/mcp-client-shape.mjs [--rounds=7] [--responses=2000]
import { randomUUID } from 'node:crypto';
import { flagArgs } from './lib/flags.mjs';
import { mcpSdk } from './lib/root-deps.mjs';
import { FINAL_ANSWER } from './lib/task.mjs';

const args = flagArgs();
const ROUNDS = Number(args.rounds ?? 7);
const RESPONSES = Number(args.responses ?? 2000);
const { CallToolResultSchema, JSONRPCMessageSchema, isJSONRPCErrorResponse, isJSONRPCResultResponse } =
  await import(mcpSdk('types.js'));

/** The structured content of the bench's text turn (askOutput's fields). */
const output = () => ({
  session: randomUUID(),
  state: 'Completed',
  success: true,
  terminateReason: 'completed',
  response: FINAL_ANSWER,
  iterations: 1,
  toolCalls: [],
  usage: { inputTokens: 120, outputTokens: 60, totalTokens: 180 },
});
const shapes = {
  // What askCallResult sends: the answer, the session line, the structured content.
  'as sent': () => {
    const o = output();
    const session = `session: ${o.session} (pass it as "session" to continue this conversation)`;
    return {
      content: [
        { type: 'text', text: o.response },
        { type: 'text', text: session },
      ],
      structuredContent: o,
    };
  },
  'no session line': () => {
    const o = output();
    return { content: [{ type: 'text', text: o.response }], structuredContent: o };
  },
  'text only': () => ({ content: [{ type: 'text', text: FINAL_ANSWER }] }),
};
const line = (result) => JSON.stringify({ jsonrpc: '2.0', id: 7, result });
const receive = (text) => {
  const message = JSONRPCMessageSchema.parse(JSON.parse(text));
  if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message))
    throw new Error('not a response');
  return CallToolResultSchema.safeParse(message.result);
};
for (const make of Object.values(shapes)) for (let i = 0; i < 3000; i++) receive(line(make()));
const rounds = Object.fromEntries(Object.keys(shapes).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, make] of Object.entries(shapes)) {
    const lines = Array.from({ length: RESPONSES }, () => line(make()));
    const start = process.hrtime.bigint();
    for (const text of lines) receive(text);
    rounds[name].push(Number(process.hrtime.bigint() - start) / RESPONSES / 1e3);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const [name, make] of Object.entries(shapes)) {
  const xs = rounds[name];
  console.log(
    `${name}: ${line(make()).length} bytes, ${median(xs).toFixed(1)} µs a response (rounds ${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`,
  );
}
