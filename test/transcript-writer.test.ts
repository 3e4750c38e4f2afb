/**
 * The ordered transcript writer's held entries (issue 37): entries given with `hold` make no store
 * call of their own; they go out first, in one call, with the next `write`, a `release` or a `drain`.
 * And through the agent: a tool round's result message rides with the model's next reply, so a turn
 * with one tool call makes four durable appends, not five, in the same order as before.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, MemorySessionStore, type TranscriptEntryInput } from '../src/index.js';
import { OrderedTranscriptWriter } from '../src/session/transcript-writer.js';
import { agentAt, serve } from './support/harness.js';

const event = (name: string): TranscriptEntryInput => ({ kind: 'event', event: name, data: {} });
const names = (entries: readonly TranscriptEntryInput[]) =>
  entries.map((e) => (e.kind === 'event' ? e.event : e.kind === 'message' ? `${e.message.role}` : e.kind));

/** A writer whose store calls are recorded; `fail` makes the next call reject. */
function recordingWriter() {
  const calls: string[][] = [];
  const state = { fail: false };
  const writer = new OrderedTranscriptWriter(
    async (entries) => {
      if (state.fail) {
        state.fail = false;
        throw new Error('disk full');
      }
      calls.push(names(entries));
    },
    () => {},
  );
  return { writer, calls, state };
}

describe('OrderedTranscriptWriter.hold', () => {
  it('makes no store call; the next write carries the held entries first, in one call', async () => {
    const { writer, calls } = recordingWriter();
    const held = writer.hold([event('a'), event('b')]);
    await new Promise((r) => setTimeout(r, 5));
    expect(calls).toEqual([]);
    await writer.write([event('c')]);
    await held;
    expect(calls).toEqual([['a', 'b', 'c']]);
  });

  it('release and drain send held entries at once', async () => {
    const { writer, calls } = recordingWriter();
    const first = writer.hold([event('a')]);
    writer.release();
    await first;
    const second = writer.hold([event('b')]);
    await writer.drain();
    await second;
    expect(calls).toEqual([['a'], ['b']]);
  });

  it('a failed call keeps held entries for the next one, still first', async () => {
    const { writer, calls, state } = recordingWriter();
    const held = writer.hold([event('a')]);
    state.fail = true;
    await expect(writer.write([event('b')])).rejects.toThrow('disk full');
    await expect(held).rejects.toThrow('disk full');
    await writer.write([event('c')]);
    expect(calls).toEqual([['a', 'b', 'c']]);
  });
});

describe('a saved session: the durable appends of a tool round', () => {
  it('a tool result message goes out with the next reply: four appends a turn, entries in order', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'echoes',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => `echo: ${text}`,
    });
    const appends: string[][] = [];
    const store = new (class extends MemorySessionStore {
      override appendTranscript(...args: Parameters<MemorySessionStore['appendTranscript']>) {
        appends.push(names(args[1]));
        return super.appendTranscript(...args);
      }
    })();
    const server = await serve({
      turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] }, { content: 'done' }],
    });
    const agent = agentAt(server, { tools: [echo], store, session: 'held', stream: false });
    await agent.ready();
    appends.length = 0;
    expect((await agent.send('go')).success).toBe(true);
    await agent.flush();
    expect(appends).toEqual([
      ['user'],
      // The session's first call records its request settings once.
      ['tool_call_started', 'request_settings', 'model_call', 'assistant'],
      ['tool_call_finished'],
      ['tool', 'model_call', 'assistant'],
    ]);
    const entries = (await store.readTranscript('held')).entries;
    expect(entries.filter((e) => e.kind === 'message').map((e) => e.message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });
});
