import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startScriptedServer } from '../src/testing/index.js';
import { repoRoot } from './support/build-dist.js';
import {
  answer,
  factOf,
  isSummaryCall,
  questionMessage,
  taskMessage,
} from './support/compaction-scenario.js';
import { scriptChildren } from './support/script-child.js';

/**
 * The child: an agent on a file store whose window is small enough that the second task compacts.
 * `first` runs task 1, then task 2, and says COMPACTING once it is in the Compacting state with its
 * writes durable; the test kills it (SIGKILL) while the summary call hangs. `resume` opens the session
 * again, continues the interrupted turn (which compacts again), asks for task 1's code, and reports.
 */
const CHILD = `
import { z } from 'zod';
import { createAgent, defineTool, FileSessionStore } from ${JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', 'index.js')).href)};

const [mode, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
const say = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
const readDoc = defineTool({
  name: 'read_doc',
  description: 'reads one document',
  parameters: z.object({ n: z.number().int() }),
  execute: ({ n }) => 'document ' + n + ': ' + Array.from({ length: 260 }, (_, i) => 'word' + ((n * 31 + i) % 97)).join(' '),
});
const agent = createAgent({
  baseURL: config.baseURL,
  apiKey: 'test',
  model: 'gpt-4o-mini',
  instructions: 'Do the tasks. Read documents with read_doc.',
  tools: [readDoc],
  contextWindow: { contextWindow: 8000, compactAt: 0.6 },
  retry: { maxAttempts: 1 },
  store: new FileSessionStore({ dir: config.sessions }),
  session: config.session,
});
await agent.ready();
if (mode === 'first') {
  agent.on('state_change', (e) => {
    if (e.state === 'Compacting') agent.flush().then(() => say({ compacting: true, messages: agent.messages.length }));
  });
  await agent.send(config.task1);
  agent.send(config.task2);
} else {
  say({ restored: agent.restoreReport, state: agent.state, messages: agent.messages.length });
  const turn = await agent.resume();
  const question = await agent.send(config.question);
  await agent.flush();
  say({ final: agent.state, response: turn.response, answer: question.response, compaction: agent.context.compaction });
  agent.stop();
}
`;

const children = scriptChildren<'first' | 'resume'>('compaction-crash-', CHILD);

describe('a process killed during the summary call', () => {
  it('resumes in a new process with the conversation intact, and compacts again', async () => {
    let summaries = 0;
    const server = await startScriptedServer({
      respond: (request) => {
        if (!isSummaryCall(request)) return answer(request);
        summaries++;
        // The first summary call never answers: its process is killed while it waits.
        return summaries === 1 ? { fault: 'hang' } : answer(request);
      },
    });
    const config = {
      baseURL: server.url,
      sessions: path.join(children.work(), 'sessions'),
      session: 'killed-while-compacting',
      task1: taskMessage(1, 5),
      task2: taskMessage(2, 5),
      question: questionMessage(1),
    };
    try {
      const first = children.run('first', config, (l) => l.compacting === true);
      const lines = await first.reached;
      const messagesAtKill = lines.at(-1)!.messages as number;
      const killed = new Promise((r) => first.child.on('exit', (_code, signal) => r(signal)));
      first.child.kill('SIGKILL');
      expect(await killed).toBe('SIGKILL');
      expect(summaries).toBe(1);

      // No half compaction: the transcript has every message and no compaction entry.
      const transcript = path.join(config.sessions, config.session, 'transcript.jsonl');
      const before = (await readFile(transcript, 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(before.filter((e) => e.event === 'compaction')).toEqual([]);
      expect(before.filter((e) => e.kind === 'message')).toHaveLength(messagesAtKill);

      const resumed = await children.run('resume', config, (l) => 'final' in l).reached;
      const restored = resumed[0] as { state: string; messages: number; restored: { state: string } };
      expect(restored.state).toBe('Interrupted');
      expect(restored.messages).toBe(messagesAtKill);
      const final = resumed.at(-1) as {
        final: string;
        response: string;
        answer: string;
        compaction: unknown;
      };
      expect(final.final).toBe('Completed');
      expect(final.response).toBe('Done 2.');
      expect(final.answer).toBe(`The code of task 1 is ${factOf(1)}.`);
      expect(final.compaction).toMatchObject({ summary: expect.stringContaining(factOf(1)) });
      expect(summaries).toBe(2);

      const after = (await readFile(transcript, 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(after.filter((e) => e.event === 'compaction')).toHaveLength(1);
    } finally {
      await server.close();
    }
  }, 120_000);
});
