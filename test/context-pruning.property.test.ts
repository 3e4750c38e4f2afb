import fc from 'fast-check';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { ContextWindow } from '../src/prompt/context-window.js';
import { TokenCounter } from '../src/prompt/token-counter.js';

type Message = ChatCompletionMessageParam;

const counter = new TokenCounter('o200k_base');

/** Text of roughly `n` tokens. */
const textOf = (n: number, tag: string) => `${tag}: ${'lorem ipsum '.repeat(n)}`.trim();
const size = fc.integer({ min: 0, max: 400 });

let ids = 0;
const arbSystem = size.map((n): Message => ({ role: 'system', content: textOf(n, 'system') }));
const arbUser = size.map((n): Message => ({ role: 'user', content: textOf(n, 'user') }));
const arbText = size.map((n): Message => ({ role: 'assistant', content: textOf(n, 'assistant') }));
/** An assistant message with 1-3 tool calls followed by one tool message per call. */
const arbToolGroup = fc
  .array(
    fc.record({ name: fc.constantFrom('read_file', 'grep', 'save_output'), argSize: size, resultSize: size }),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .map((calls): Message[] => {
    const withIds = calls.map((c) => ({ ...c, id: `call_${++ids}` }));
    return [
      {
        role: 'assistant',
        content: null,
        tool_calls: withIds.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: JSON.stringify({ q: textOf(c.argSize % 40, 'arg') }) },
        })),
      },
      ...withIds.map(
        (c): Message => ({ role: 'tool', tool_call_id: c.id, content: textOf(c.resultSize, 'result') }),
      ),
    ];
  });
/** A step after a user message: a tool round, a text answer, or an injected system note. */
const arbStep = fc.oneof(
  { weight: 4, arbitrary: arbToolGroup },
  { weight: 2, arbitrary: arbText.map((m) => [m]) },
  { weight: 1, arbitrary: arbSystem.map((m) => [m]) },
);
const arbTurn = fc
  .tuple(arbUser, fc.array(arbStep, { maxLength: 4 }))
  .map(([u, steps]) => [u, ...steps.flat()]);
const arbHistory = fc
  .tuple(
    fc.array(arbSystem, { minLength: 1, maxLength: 2 }),
    fc.array(arbTurn, { minLength: 1, maxLength: 6 }),
  )
  .map(([lead, turns]) => [...lead, ...turns.flat()]);

function leadLength(messages: readonly Message[]): number {
  let i = 0;
  while (i < messages.length && messages[i]!.role === 'system') i++;
  return i;
}

function lastUserIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return -1;
}

/** The API's pairing rule: every call answered right after its message, every answer to a call. */
function assertValidPairing(view: readonly Message[]): void {
  const pending = new Set<string>();
  const answered = new Set<string>();
  for (const m of view) {
    if (m.role === 'tool') {
      expect(pending.has(m.tool_call_id), `tool message ${m.tool_call_id} answers a preceding call`).toBe(
        true,
      );
      pending.delete(m.tool_call_id);
      answered.add(m.tool_call_id);
      continue;
    }
    expect([...pending], 'calls answered before the next non-tool message').toEqual([]);
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) pending.add(c.id);
  }
  expect([...pending]).toEqual([]);
}

describe('context pruning properties', () => {
  it.each([true, false])('keeps every invariant (pruneCurrentTurn: %s)', (pruneCurrentTurn) => {
    fc.assert(
      fc.property(
        arbHistory,
        fc.oneof(
          fc.double({ min: 0.05, max: 1.2, noNaN: true }),
          fc.double({ min: 0.6, max: 1, noNaN: true }),
        ),
        (messages, share) => {
          const snapshot = structuredClone(messages);
          const full = counter.countPrompt(messages);
          const contextWindow = Math.max(1, Math.floor(full * share));
          const window = new ContextWindow({ contextWindow, reserveTokens: 0, counter, pruneCurrentTurn });
          const prepared = window.prepareRequest(messages);
          const view = prepared.messages;

          // The transcript is untouched.
          expect(messages).toEqual(snapshot);
          // The reported count is the count of what is sent.
          expect(prepared.tokens).toBe(counter.countPrompt(view));
          expect(prepared.fits).toBe(prepared.tokens <= prepared.budget);
          if (full <= prepared.budget) expect(view).toBe(messages);

          assertValidPairing(view);

          // The leading system messages are intact, first, and the same objects.
          const lead = leadLength(messages);
          expect(view.slice(0, lead)).toEqual(messages.slice(0, lead));
          for (let i = 0; i < lead; i++) expect(view[i]).toBe(messages[i]);

          // The last user message and everything after it are kept, in order.
          const tailStart = lastUserIndex(messages);
          const tail = messages.slice(tailStart);
          const viewTail = view.slice(view.length - tail.length);
          if (!pruneCurrentTurn) {
            for (const [i, m] of viewTail.entries()) expect(m).toBe(tail[i]);
          } else {
            // Only older tool results of the turn may be placeholders; the latest call's results never.
            const lastCall = tail.findLastIndex(
              (m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0,
            );
            viewTail.forEach((m, i) => {
              if (m === tail[i]) return;
              expect(m.role).toBe('tool');
              expect(i).toBeLessThan(lastCall);
              expect(
                m.role === 'tool' && tail[i]!.role === 'tool' && m.tool_call_id === tail[i]!.tool_call_id,
              ).toBe(true);
              expect(m.content).toMatch(/^\[pruned: result of /);
            });
          }

          // It fits whenever the untouchable part fits.
          const untouchable = counter.countPrompt([...messages.slice(0, lead), ...tail]);
          if (untouchable <= prepared.budget) expect(prepared.fits).toBe(true);

          // The report adds up.
          if (prepared.pruned) {
            expect(prepared.pruned.tokensBefore).toBe(full);
            expect(prepared.pruned.tokensAfter).toBe(prepared.tokens);
            expect(prepared.pruned.removedTokens).toBe(full - prepared.tokens);
            expect(view.length).toBe(messages.length - prepared.pruned.droppedMessages);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
