import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message, TranscriptEntry } from '../src/index.js';
import { initialContext } from '../src/machines/agent-context.js';
import { conversationProblem } from '../src/machines/agent-context-schema.js';
import type { PersistedAgentSnapshot } from '../src/machines/agent-snapshot.js';
import { checkChatRequest } from '../src/testing/openai-wire.js';
import { planRestore } from '../src/unstable.js';

// planRestore on crafted transcripts with gaps (what a failed write used to leave, or a file edited by
// hand): the conversation it rebuilds is always one the API accepts. No tool message without the
// assistant message holding its call, every call answered once, before the next other message.

type EntryInput = TranscriptEntry extends infer E
  ? E extends unknown
    ? Omit<E, 'seq' | 'at'>
    : never
  : never;

/** Numbers entries as a store would. */
function numbered(entries: EntryInput[]): TranscriptEntry[] {
  return entries.map((e, i) => ({ ...e, seq: i + 1, at: '2025-01-01T00:00:00.000Z' }) as TranscriptEntry);
}

const sys: Message = { role: 'system', content: 'Be brief.' };
const user = (content: string): Message => ({ role: 'user', content });
const answer = (content: string): Message => ({ role: 'assistant', content });
const calls = (...ids: string[]): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: `t_${id}`, arguments: '{}' } })),
});
const tool = (id: string, content = `${id} done`): Message => ({ role: 'tool', tool_call_id: id, content });
const msg = (message: Message): EntryInput => ({ kind: 'message', message });
const started = (id: string): EntryInput => ({
  kind: 'tool_call_started',
  toolCallId: id,
  name: `t_${id}`,
  args: {},
});
const finished = (id: string, result = `${id} done`): EntryInput => ({
  kind: 'tool_call_finished',
  toolCallId: id,
  name: `t_${id}`,
  result,
  isError: false,
  durationMs: 1,
});

/** A snapshot saved at rest with `messages` (the agent saves only at rest points). */
function savedAt(messages: Message[], value = 'AwaitingInput'): PersistedAgentSnapshot {
  const context = { ...initialContext({ sessionId: 's' }), messages, initialized: true, turn: 1 };
  return { status: 'active', value, context };
}

/** The API's rules, as the scripted server checks them (it answers 400 otherwise), and unique call ids. */
function expectAccepted(messages: readonly Message[]): void {
  expect(conversationProblem(messages)).toBeUndefined();
  const check = checkChatRequest({ model: 'm', messages });
  expect(check.ok ? 'accepted' : check.problem.message).toBe('accepted');
  const ids = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
  expect(new Set(ids).size).toBe(ids.length);
}

describe('planRestore never rebuilds a conversation the API refuses', () => {
  it('gives a tool message whose assistant message was lost that message back, from its tool_call_started line', () => {
    // The assistant message with c1 and the user message before it were never written (disk full).
    const entries = numbered([msg(sys), started('c1'), finished('c1'), msg(tool('c1')), msg(answer('done'))]);
    const plan = planRestore(savedAt([sys]), entries, () => false);
    const messages = plan.snapshot.context.messages;
    expectAccepted(messages);
    expect(messages).toEqual([
      sys,
      { ...calls('c1'), tool_calls: [expect.objectContaining({ id: 'c1' })] },
      tool('c1'),
      answer('done'),
    ]);
    expect(plan.report.repaired).toEqual({
      droppedToolMessages: [],
      rebuiltCalls: ['c1'],
      answeredCalls: [],
    });
  });

  it('drops a tool message that nothing in the transcript says was called', () => {
    const entries = numbered([msg(sys), msg(user('hi')), msg(tool('ghost')), msg(answer('hello'))]);
    const plan = planRestore(savedAt([sys]), entries, () => false);
    expectAccepted(plan.snapshot.context.messages);
    expect(plan.snapshot.context.messages).toEqual([sys, user('hi'), answer('hello')]);
    expect(plan.report.repaired?.droppedToolMessages).toEqual(['ghost']);
  });

  it('answers a call whose tool message was lost before the next message, from the ledger', () => {
    const entries = numbered([
      msg(sys),
      msg(user('go')),
      msg(calls('c1', 'c2', 'c3')),
      started('c1'),
      finished('c1', 'recorded result'),
      started('c2'),
      // c1's, c2's and c3's tool messages were lost; c2 never finished, c3 never started.
      msg(answer('after the batch')),
      msg(user('next')),
    ]);
    const plan = planRestore(savedAt([sys]), entries, () => false);
    const messages = plan.snapshot.context.messages;
    expectAccepted(messages);
    expect(messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([
      ['c1', 'recorded result'],
      ['c2', expect.stringMatching(/interrupted.*may or may not have taken effect/)],
      ['c3', expect.stringMatching(/was not run/)],
    ]);
    expect(plan.report.repaired?.answeredCalls).toEqual(['c1', 'c2', 'c3']);
    // The answers the ledger lacked are recorded, so a second restore decides nothing again.
    expect(plan.append.map((e) => e.kind === 'tool_call_finished' && e.toolCallId)).toEqual(['c2', 'c3']);
  });

  it('drops a second tool message for one call', () => {
    const entries = numbered([
      msg(sys),
      msg(user('go')),
      msg(calls('c1')),
      msg(tool('c1')),
      msg(tool('c1', 'again')),
    ]);
    const plan = planRestore(savedAt([sys]), entries, () => false);
    expectAccepted(plan.snapshot.context.messages);
    expect(plan.snapshot.context.messages.filter((m) => m.role === 'tool')).toEqual([tool('c1')]);
  });

  it('does not rebuild a call the snapshot holds when the transcript is behind it', () => {
    // The snapshot was saved with c1's batch; the transcript lost those messages but kept c1's start.
    const saved = savedAt([sys, user('go'), calls('c1'), tool('c1'), answer('done')], 'Completed');
    const entries = numbered([msg(sys), msg(user('go')), started('c1')]);
    const plan = planRestore(saved, entries, () => false);
    expectAccepted(plan.snapshot.context.messages);
  });

  it('holds for any entries a failed write could have lost (property)', () => {
    const session = fc
      .array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom('answer', 'interrupt', 'crash')), {
        minLength: 1,
        maxLength: 4,
      })
      .map((turns) => {
        // A real session's transcript: per turn a user message and rounds of calls (the first call of
        // a round sometimes started early, before its assistant message was written); a turn ends
        // with an answer, with an interrupt (which answers the open calls), or, last, with a crash.
        const entries: EntryInput[] = [msg(sys)];
        const rests: number[] = [1];
        let messages = 1;
        turns.forEach(([rounds, end], n) => {
          const crash = end === 'crash' && n === turns.length - 1;
          entries.push(msg(user(`turn ${n}`)));
          messages++;
          for (let r = 0; r < rounds; r++) {
            const ids = [`c${n}_${r}_a`, `c${n}_${r}_b`];
            const early = (n + r) % 2 === 0;
            if (early) entries.push(started(ids[0]!));
            entries.push(msg(calls(...ids)));
            messages++;
            for (const id of ids) if (!early || id !== ids[0]) entries.push(started(id));
            const cut = end !== 'answer' && r === rounds - 1;
            if (cut && crash) return;
            for (const id of ids) if (!cut) entries.push(finished(id));
            for (const id of ids) entries.push(msg(tool(id, cut ? 'Error: interrupted' : `${id} done`)));
            messages += 2;
          }
          if (crash) return;
          if (end === 'answer' || rounds === 0) {
            entries.push(msg(answer(`answer ${n}`)));
            messages++;
          }
          rests.push(messages);
        });
        return { entries, rests };
      })
      .chain(({ entries, rests }) =>
        fc.record({
          entries: fc.constant(entries),
          kept: fc.array(fc.boolean(), { minLength: entries.length, maxLength: entries.length }),
          rest: fc.constantFrom(...rests),
        }),
      );
    fc.assert(
      fc.property(session, ({ entries, kept, rest }) => {
        const all = numbered(entries);
        const conversation = all.flatMap((e) => (e.kind === 'message' ? [e.message] : []));
        // The save was taken at a rest point; any entries may be missing from the transcript.
        const saved = savedAt(conversation.slice(0, rest), rest === 1 ? 'AwaitingInput' : 'Completed');
        const transcript = numbered(entries.filter((_, i) => kept[i]));
        const plan = planRestore(saved, transcript, () => false);
        expectAccepted(plan.snapshot.context.messages);
      }),
      { numRuns: 500 },
    );
  });
});

describe('planRestore after a crash between rest points', () => {
  const planCall = (id: string, steps: { step: string; status: string }[]): Message => ({
    role: 'assistant',
    content: null,
    tool_calls: [
      { id, type: 'function', function: { name: 'update_plan', arguments: JSON.stringify({ steps }) } },
    ],
  });
  const planResult = (id: string, isError: boolean): EntryInput => ({
    kind: 'tool_call_finished',
    toolCallId: id,
    name: 'update_plan',
    result: isError ? 'Error: invalid arguments' : 'Plan updated',
    isError,
    durationMs: 1,
  });

  it('sets the plan the replayed update_plan calls made; one that failed sets nothing', () => {
    const first = [{ step: 'Read the notes', status: 'in_progress' }];
    const second = [
      { step: 'Read the notes', status: 'completed' },
      { step: 'Write the summary', status: 'in_progress' },
    ];
    const bad = [{ step: 'Bad', status: 'done?' }];
    const entries = numbered([
      msg(sys),
      msg(user('go')),
      msg(planCall('p1', first)),
      planResult('p1', false),
      msg(tool('p1', 'Plan updated')),
      msg(planCall('p2', second)),
      planResult('p2', false),
      msg(tool('p2', 'Plan updated')),
      msg(planCall('p3', bad)),
      planResult('p3', true),
      msg(tool('p3', 'Error: invalid arguments')),
    ]);
    // Saved before the turn: the transcript is ahead of the snapshot, whose plan is still none.
    const plan = planRestore(savedAt([sys]), entries, () => false);
    expect(plan.report.state).toBe('Interrupted');
    expect(plan.snapshot.context.plan).toEqual({ steps: second });
  });

  it('keeps the saved plan when the replayed messages set none', () => {
    const saved = savedAt([sys, user('go'), answer('ok')]);
    saved.context.plan = { steps: [{ step: 'Saved step', status: 'pending' }] };
    const entries = numbered([
      msg(sys),
      msg(user('go')),
      msg(answer('ok')),
      msg(user('more')),
      msg(calls('c1')),
    ]);
    const plan = planRestore(saved, entries, () => false);
    expect(plan.snapshot.context.plan).toEqual({ steps: [{ step: 'Saved step', status: 'pending' }] });
  });
});
