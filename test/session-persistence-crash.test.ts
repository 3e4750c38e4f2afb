import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Scenario } from '../src/testing/index.js';
import { repoRoot } from './support/build-dist.js';
import { eachWire, serve, type Wire } from './support/harness.js';
import { scriptChildren } from './support/script-child.js';

/**
 * The child: an agent with counting tools on a file store. `first` starts the turn and says READY
 * once the fast calls have finished (their results are on disk) while `send_mail` still runs; the
 * test then kills it with SIGKILL. `resume` opens the session again and finishes the turn.
 * Every tool run appends a line to the counter file, synchronously, before and after its work.
 */
const CHILD = `
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { createAgent, defineTool, FileSessionStore } from ${JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', 'index.js')).href)};

const [mode, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
const count = (tool, phase) => appendFileSync(config.counter, JSON.stringify({ tool, phase, pid: process.pid }) + '\\n');
const tool = (name, { slow = false, ...flags } = {}) =>
  defineTool({
    name,
    description: name,
    parameters: z.object({ text: z.string().optional() }),
    ...flags,
    execute: async () => {
      count(name, 'start');
      if (slow) await new Promise(() => {});
      count(name, 'end');
      return name + ' ok';
    },
  });
const agent = createAgent({
  baseURL: config.baseURL,
  apiKey: 'test',
  api: config.api,
  store: new FileSessionStore({ dir: config.sessions }),
  session: config.session,
  tools: [
    tool('write_note'),
    tool('fetch_page', { idempotent: true }),
    tool('send_mail', { slow: true }),
    tool('deploy', { needsApproval: true }),
  ],
});
const say = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
await agent.ready();
if (mode === 'first') {
  const fast = new Set();
  agent.on('tool_call_end', (e) => {
    fast.add(e.name);
    if (fast.has('write_note') && fast.has('fetch_page') && (!config.approval || agent.state === 'WaitingApproval')) {
      agent.flush().then(() => say({ ready: true, state: agent.state }));
    }
  });
  agent.send('do the batch');
} else {
  say({ restored: agent.restoreReport, state: agent.state, pending: agent.pendingApprovals.map((p) => p.name) });
  const done = new Promise((resolve) => agent.on('turn_end', resolve));
  if (agent.state === 'Interrupted') agent.resume();
  for (const call of agent.pendingApprovals) agent.approve(call.toolCallId);
  await done;
  await agent.flush();
  say({ final: agent.state, response: agent.context.response, tools: agent.messages.filter((m) => m.role === 'tool').map((m) => m.content) });
  agent.stop();
}
`;

const children = scriptChildren<'first' | 'resume'>('crash-', CHILD);

async function counts(file: string): Promise<Record<string, number>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const tally: Record<string, number> = {};
  for (const line of text.split('\n').filter(Boolean)) {
    const { tool, phase } = JSON.parse(line) as { tool: string; phase: string };
    tally[`${tool}:${phase}`] = (tally[`${tool}:${phase}`] ?? 0) + 1;
  }
  return tally;
}

/** The batch of every scenario below: two calls that finish, then `send_mail`, which runs until the kill. */
const BATCH = [
  { name: 'write_note', arguments: { text: 'a' } },
  { name: 'fetch_page', arguments: { text: 'b' } },
  { name: 'send_mail', arguments: { text: 'c' } },
];

/** The counter as the killed child leaves it: write_note and fetch_page done, send_mail started. */
const KILLED_IN_SEND_MAIL = {
  'write_note:start': 1,
  'write_note:end': 1,
  'fetch_page:start': 1,
  'fetch_page:end': 1,
  'send_mail:start': 1,
};

async function crashAndResume(name: string, scenario: Scenario, approval: boolean, api: Wire) {
  const server = await serve(scenario);
  const config = {
    baseURL: server.url,
    sessions: path.join(children.work(), 'sessions'),
    session: `${name}-${api}`,
    counter: path.join(children.work(), `${name}-${api}.counter.jsonl`),
    approval,
    api,
  };
  const first = children.run('first', config, (l) => l.ready === true);
  await first.reached;
  const killed = new Promise((r) => first.child.on('exit', (_code, signal) => r(signal)));
  first.child.kill('SIGKILL');
  expect(await killed).toBe('SIGKILL');
  const before = await counts(config.counter);
  const resumed = await children.run('resume', config, (l) => 'final' in l).reached;
  return { server, first: first.lines, resumed, before, after: await counts(config.counter) };
}

eachWire((api) =>
  describe('resume after SIGKILL', () => {
    it('mid-batch between rest points: completed calls are not run again, the cut-off one is reported', async () => {
      const run = await crashAndResume(
        'kill-mid-batch',
        {
          turns: [
            { reasoning: 'Note first, then the page and the mail.', toolCalls: BATCH },
            { content: 'Wrote the note; the mail may not have gone out.' },
          ],
        },
        false,
        api,
      );
      expect(run.before).toEqual(KILLED_IN_SEND_MAIL);
      // Nothing ran in the new process: the counter is as the killed one left it.
      expect(run.after).toEqual(run.before);
      const [restored, final] = [run.resumed[0]!, run.resumed.at(-1)!];
      expect(restored).toMatchObject({
        state: 'Interrupted',
        restored: {
          savedState: 'AwaitingInput',
          calls: [
            { name: 'write_note', outcome: 'recorded' },
            { name: 'fetch_page', outcome: 'recorded' },
            { name: 'send_mail', outcome: 'interrupted' },
          ],
        },
      });
      expect(final).toMatchObject({
        final: 'Completed',
        response: 'Wrote the note; the mail may not have gone out.',
      });
      const sent = run.server.requests
        .at(-1)!
        .messages.filter((m) => m.role === 'tool')
        .map((m) => m.content);
      expect(sent).toEqual([
        'write_note ok',
        'fetch_page ok',
        expect.stringMatching(/"send_mail" was interrupted/),
      ]);
      // The reasoning the killed process got is sent back by the new one (the server checks its content).
      const assistant = run.server.requests.at(-1)!.messages.find((m) => m.role === 'assistant');
      if (api === 'responses') {
        expect(assistant).toMatchObject({
          reasoning_items: [
            {
              type: 'reasoning',
              summary: [{ text: 'Note first, then the page and the mail.' }],
              encrypted_content: expect.stringMatching(/^enc_/),
            },
          ],
        });
      }
    });

    it('in WaitingApproval with calls running: the restored batch replays results, then approve and go on', async () => {
      const run = await crashAndResume(
        'kill-waiting-approval',
        {
          turns: [
            { toolCalls: [...BATCH, { name: 'deploy', arguments: { text: 'd' } }] },
            { content: 'Deployed.' },
          ],
        },
        true,
        api,
      );
      expect(run.before).toEqual(KILLED_IN_SEND_MAIL);
      // Only the approved deploy ran in the new process.
      expect(run.after).toEqual({ ...run.before, 'deploy:start': 1, 'deploy:end': 1 });
      expect(run.resumed[0]).toMatchObject({ state: 'WaitingApproval', pending: ['deploy'] });
      expect(run.resumed.at(-1)).toMatchObject({ final: 'Completed', response: 'Deployed.' });
      const tools = run.resumed.at(-1)!.tools as string[];
      expect(tools).toEqual([
        'write_note ok',
        'fetch_page ok',
        expect.stringMatching(/"send_mail" was interrupted/),
        'deploy ok',
      ]);
    });
  }),
);
