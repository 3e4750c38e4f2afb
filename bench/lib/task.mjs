// The benchmark task, shared by the server (what the model answers) and the harnesses (the tool).
//
// One session: a system prompt and a user message, then 10 model turns each asking for one tool
// call (`lookup`, which returns 1 KB from memory), then a final answer: 11 model calls.

export const MODEL = 'bench-model';
export const TOOL_TURNS = 10;
export const CALLS_PER_SESSION = TOOL_TURNS + 1;
export const SYSTEM_PROMPT =
  'You are a research assistant. Use the lookup tool to fetch each document you need, then answer.';
export const USER_PROMPT = 'Collect documents k0 to k9 and summarise them in one sentence.';
export const TOOL_NAME = 'lookup';
export const TOOL_DESCRIPTION = 'Returns the document stored under a key.';

/** 1 KB of text, built once: the tool answers from memory. */
export const DOCUMENT = 'lorem ipsum dolor sit amet '.repeat(40).slice(0, 1024);

/** The tool body every harness runs. */
export function lookup({ key }) {
  return `${key}: ${DOCUMENT}`;
}

/** The JSON Schema of the tool's arguments, as a hand-written loop would write it. */
export const TOOL_PARAMETERS = {
  type: 'object',
  properties: { key: { type: 'string' } },
  required: ['key'],
  additionalProperties: false,
};

export const FINAL_ANSWER =
  'All ten documents (k0 to k9) say the same thing: lorem ipsum dolor sit amet, repeated; ' +
  'there is nothing further to report beyond that placeholder text, which is what was asked.';

/** Scripted server turn function for the task: turn i < 10 calls the tool, turn 10 answers. */
export function taskTurn(_request, index) {
  if (index < TOOL_TURNS) return { toolCalls: [{ name: TOOL_NAME, arguments: { key: `k${index}` } }] };
  return { content: FINAL_ANSWER };
}

/** The paced task (figure 3): one message with 3 tool calls streamed slowly, then a final answer. */
export const PACED_CALLS = 3;
export const PACED_CHUNK_DELAY_MS = 4;
export const PACED_CHUNK_SIZE = 8;
export function pacedTurn(_request, index) {
  if (index === 0) {
    return {
      toolCalls: Array.from({ length: PACED_CALLS }, (_, i) => ({
        name: TOOL_NAME,
        arguments: { key: `paced-document-${i}-of-the-streamed-batch` },
      })),
      chunkDelayMs: PACED_CHUNK_DELAY_MS,
      chunkSize: PACED_CHUNK_SIZE,
    };
  }
  return { content: 'Done.' };
}
