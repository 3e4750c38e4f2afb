import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../src/index.js';
import { a2aServer, drain, sdkClient, textMessage } from './support/a2a-server.js';

// Where a task's entries go in the transcript's durable appends (issue 35's bench: an A2A turn should
// cost no more writes than the same turn through agent.send()). A send that waits for the end writes
// the task's start with the agent's first append, and every task's end with the agent's rest point.

/** A file store that notes what each transcript append carries (entry names, in order). */
class NotingStore extends FileSessionStore {
  readonly appends: string[][] = [];
  override appendTranscript(...args: Parameters<FileSessionStore['appendTranscript']>) {
    const [, entries] = args;
    this.appends.push(
      entries.map((e) =>
        e.kind === 'event' ? e.event : e.kind === 'message' ? `message:${e.message.role}` : e.kind,
      ),
    );
    return super.appendTranscript(...args);
  }
}

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

async function notingServer() {
  const dir = await mkdtemp(path.join(tmpdir(), 'a2a-writes-'));
  dirs.push(dir);
  const store = new NotingStore({ dir });
  const { url } = await a2aServer({ turns: [{ content: 'Four.' }, { content: 'Five.' }] }, { store, dir });
  return { url, store };
}

const isTaskEntry = (name: string) => name.startsWith('a2a_');

describe('A2A task entries in the transcript appends', () => {
  it('a send that waits: the start rides the first append, the end the rest point; no append of task entries alone', async () => {
    const { url, store } = await notingServer();
    const client = await sdkClient(url, '1.0');
    const task = await client.sendMessage(textMessage('What is 2+2?'));
    if (!('status' in task)) throw new Error('expected a task');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const withTask = store.appends.filter((names) => names.some(isTaskEntry));
    expect(withTask.length).toBeGreaterThan(0);
    for (const names of withTask) expect(names.some((n) => !isTaskEntry(n))).toBe(true);
    const all = store.appends.flat();
    // The task's start before the user's message; its end after the answer.
    expect(all.indexOf('a2a_task')).toBeLessThan(all.indexOf('message:user'));
    expect(all.lastIndexOf('a2a_status')).toBeGreaterThan(all.indexOf('message:assistant'));
    expect(all.indexOf('a2a_artifact')).toBeGreaterThan(all.indexOf('message:assistant'));
    // The task as a reader on the store sees it: whole, completed.
    const read = await client.getTask({ tenant: '', id: task.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(read.artifacts.length).toBe(1);
  });

  it('a stream: the start is durable on its own before the turn, the end still rides the rest point', async () => {
    const { url, store } = await notingServer();
    const client = await sdkClient(url, '1.0');
    await drain(client.sendMessageStream(textMessage('What is 2+2?')));
    const start = store.appends.find((names) => names.includes('a2a_task'));
    expect(start).toEqual(['a2a_task', 'a2a_status']);
    const end = store.appends.find((names) => names.includes('a2a_artifact'));
    expect(end?.indexOf('message:assistant')).toBeGreaterThanOrEqual(0);
    expect(end?.at(-1)).toBe('a2a_status');
  });
});
