import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, FileSessionStore, type Message } from '../../src/index.js';
import { SUMMARY_HEADING, SUMMARY_INSTRUCTIONS } from '../../src/prompt/compaction.js';
import type { ScriptedRequest, ScriptedTurn } from '../../src/testing/index.js';
import { tokenCounterFor } from '../../src/unstable.js';

/**
 * A scripted model for compaction tests that answers from what each request contains, so that a fact
 * lost by a compaction fails the test:
 * - a summary call (its system prompt is the summary instructions) answers with every `FACT-...` its
 *   request holds (the conversation and the earlier summary), as a real summarizer would keep them;
 * - `Task k: ... read N documents` calls `read_doc` until the turn holds N results, then answers
 *   `Done k`;
 * - `What is the code of task k?` answers the `FACT-k-...` the request holds, or `UNKNOWN`.
 */

/** The code the user gives in task `k`. */
export const factOf = (k: number) => `FACT-${k}-${(k * 7919).toString(36)}`;

/** The user message of task `k`, which gives its code and asks for `reads` documents. */
export const taskMessage = (k: number, reads: number) =>
  `Task ${k}: remember that the code of task ${k} is ${factOf(k)}. Then read ${reads} documents.`;

/** The question whose answer needs task `k`'s code. */
export const questionMessage = (k: number) => `What is the code of task ${k}?`;

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

/** About `chars` characters of deterministic filler: one document. */
export function documentText(n: number, chars = 2_000): string {
  const words: string[] = [];
  let size = 0;
  for (let i = 0; size < chars; i++) {
    const word = `${WORDS[(n * 7 + i * 3) % WORDS.length]}${(n * 31 + i) % 97}`;
    words.push(word);
    size += word.length + 1;
  }
  return `document ${n}: ${words.join(' ')}`;
}

/** The `read_doc` tool the scripted model calls. */
export const readDoc = defineTool({
  name: 'read_doc',
  description: 'reads one document',
  parameters: z.object({ n: z.number().int() }),
  execute: ({ n }) => documentText(n),
});

const text = (m: unknown): string => {
  const content = (m as Message).content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
};

/** Whether a request is a compaction's summary call. */
export const isSummaryCall = (request: ScriptedRequest) =>
  text(request.messages[0]).startsWith(SUMMARY_INSTRUCTIONS.slice(0, 40));

/** Whether a request sends a summary in place of older messages. */
export const sendsSummary = (request: ScriptedRequest) =>
  request.messages.some((m) => m.role === 'system' && text(m).startsWith(SUMMARY_HEADING));

/** The scripted model's answer to a request (see the file comment). */
export function answer(request: ScriptedRequest): ScriptedTurn {
  const all = request.messages.map(text).join('\n');
  if (isSummaryCall(request)) {
    const facts = [...new Set(all.match(/FACT-\d+-[a-z0-9]+/g) ?? [])];
    return { content: `Goal: finish the tasks. Facts learned: ${facts.join(', ') || 'none'}.` };
  }
  const messages = request.messages;
  let lastUser = messages.length - 1;
  while (lastUser >= 0 && messages[lastUser]!.role !== 'user') lastUser--;
  const said = text(messages[lastUser]);
  const question = /What is the code of task (\d+)\?/.exec(said);
  if (question) {
    const k = question[1]!;
    const fact = new RegExp(`FACT-${k}-[a-z0-9]+`).exec(all)?.[0];
    return { content: fact ? `The code of task ${k} is ${fact}.` : 'UNKNOWN' };
  }
  const task = /Task (\d+):.*read (\d+) documents/.exec(said);
  if (!task) return { content: 'I do not know what to do.' };
  const k = Number(task[1]);
  const reads = Number(task[2]);
  const done = messages.slice(lastUser + 1).filter((m) => m.role === 'tool').length;
  if (done < reads) return { toolCalls: [{ name: 'read_doc', arguments: { n: k * 100 + done } }] };
  return { content: `Done ${k}.` };
}

/** The window of the agents below: small, so that a few tasks cross it. */
export const WINDOW = 8_000;
/** The prompt budget: the window less the completion reserve (a quarter of a small window). */
export const BUDGET = WINDOW - WINDOW / 4;

const counter = tokenCounterFor('o200k_base');
/** Estimated prompt tokens of a request the server received (the agent's own counting). */
export const requestTokens = (request: ScriptedRequest) =>
  counter.countPrompt(request.messages as Message[], request.tools ?? []);

/** The options of the agents below, without a server (a replay points them at its own). */
export const compactingOptions = {
  model: 'gpt-4o-mini',
  instructions: 'Do the tasks. Read documents with read_doc.',
  tools: [readDoc],
  contextWindow: { contextWindow: WINDOW, compactAt: 0.6 },
  retry: { maxAttempts: 1 },
} satisfies Partial<Parameters<typeof createAgent>[0]>;

/** An agent with `read_doc` on the scripted server at `url`, compacting at 0.6 of an 8,000-token window. */
export function compactingAgent(url: string, extra: Partial<Parameters<typeof createAgent>[0]> = {}) {
  return createAgent({ baseURL: url, apiKey: 'test-key', ...compactingOptions, ...extra });
}

/** File stores in temp dirs for the file's tests, removed after each test. */
export function tempStores(): () => Promise<FileSessionStore> {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  return async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-compaction-'));
    dirs.push(dir);
    return new FileSessionStore({ dir });
  };
}
