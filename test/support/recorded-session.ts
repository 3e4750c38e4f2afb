import { z } from 'zod';
import { defineTool, type SessionStore } from '../../src/index.js';
import type { TranscriptEntry } from '../../src/session/transcript.js';
import { agentAt, serve } from './harness.js';

/** The `echo` tool and how many times it really ran. */
export function countingEcho() {
  const runs: string[] = [];
  const tool = defineTool({
    name: 'echo',
    description: 'echoes',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      runs.push(text);
      return `echo: ${text}`;
    },
  });
  return { tool, runs };
}

/**
 * Session `id` on `store`, recorded through the real SDK against the scripted server: turn 1 ("go")
 * asks for two echo calls then answers "done", turn 2 ("again") answers "second". Returns the
 * transcript, the echo runs, and the seq of each entry by a short name.
 */
export async function recordSession(store: SessionStore, id = 'orig') {
  const server = await serve({
    turns: [
      {
        toolCalls: [
          { name: 'echo', arguments: { text: 'a' } },
          { name: 'echo', arguments: { text: 'b' } },
        ],
      },
      { content: 'done' },
      { content: 'second' },
    ],
  });
  const echo = countingEcho();
  const agent = agentAt(server, { tools: [echo.tool], store, session: id, instructions: 'be nice' });
  await agent.send('go');
  await agent.send('again');
  await agent.flush();
  agent.stop();
  const { entries } = await store.readTranscript(id);
  const seqOf = (test: (e: TranscriptEntry) => boolean) => entries.find(test)!.seq;
  const message = (role: string, content?: string) => (e: TranscriptEntry) =>
    e.kind === 'message' &&
    e.message.role === role &&
    (content === undefined || e.message.content === content);
  return {
    entries,
    runs: echo.runs,
    seq: {
      go: seqOf(message('user', 'go')),
      started: seqOf((e) => e.kind === 'tool_call_started'),
      modelCall: seqOf((e) => e.kind === 'event' && e.event === 'model_call'),
      batch: seqOf(message('assistant', undefined)),
      firstResult: seqOf(message('tool')),
      lastResult: entries.filter(message('tool')).at(-1)!.seq,
      done: seqOf(message('assistant', 'done')),
      again: seqOf(message('user', 'again')),
    },
  };
}
