/**
 * `composeToolHooks`: several `ToolRunHooks` (persistence, the audit log, an embedder's own) as one.
 * The order they run in, which `beforeRun` result wins, that every `afterRun` runs, and which error
 * comes out.
 */
import { describe, expect, it } from 'vitest';
import type { ToolRunHooks } from '../src/index.js';
import { composeToolHooks } from '../src/unstable.js';

const call = { id: 'c1', name: 't', argsText: '{}', args: {}, needsApproval: false };
const input = { sessionId: 's', turn: 1, iteration: 1, calls: [call], deadline: null };
const result = { toolCallId: 'c1', name: 't', content: 'ok', isError: false, durationMs: 1 };

describe('composeToolHooks', () => {
  it('runs every afterRun even when one throws, then rethrows the first error', async () => {
    const order: string[] = [];
    const first = new Error('first');
    const hooks = composeToolHooks(
      {
        afterRun: () => {
          order.push('a');
          throw first;
        },
      },
      undefined,
      { afterRun: async () => void order.push('b') },
      {
        afterRun: async () => {
          order.push('c');
          throw new Error('second');
        },
      },
    );
    // Not `rejects.toThrow('first')`: it passes for a rejection with `undefined` too.
    await expect(hooks.afterRun!(result, call, input)).rejects.toBe(first);
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('resolves when every afterRun does, each given the result, the call and the input', async () => {
    const heard: unknown[][] = [];
    const hooks = composeToolHooks(
      { afterRun: (...args) => void heard.push(args) },
      { afterRun: async (...args) => void heard.push(args) },
    );
    await expect(hooks.afterRun!(result, call, input)).resolves.toBeUndefined();
    expect(heard).toEqual([
      [result, call, input],
      [result, call, input],
    ]);
  });

  it('stops at the first beforeRun that returns a result', async () => {
    const order: string[] = [];
    const hooks = composeToolHooks(
      { beforeRun: async () => void order.push('a') },
      {
        beforeRun: async () => {
          order.push('b');
          return result;
        },
      },
      { beforeRun: async () => void order.push('c') },
    );
    expect(await hooks.beforeRun!(call, input)).toBe(result);
    expect(order).toEqual(['a', 'b']);
  });

  it('runs every beforeRun, each with the call and the input, when none returns a result', async () => {
    const heard: unknown[][] = [];
    const hooks = composeToolHooks(
      { beforeRun: async (...args) => void heard.push(args) },
      { beforeRun: (...args) => void heard.push(args) },
    );
    expect(await hooks.beforeRun!(call, input)).toBeUndefined();
    expect(heard).toEqual([
      [call, input],
      [call, input],
    ]);
  });

  it('has only the hooks some part has, and calls a lone hook with its object as `this`', async () => {
    expect(Object.keys(composeToolHooks())).toEqual([]);
    expect(Object.keys(composeToolHooks(null, false, undefined))).toEqual([]);
    class Ledger implements ToolRunHooks {
      readonly seen: string[] = [];
      async beforeRun() {
        this.seen.push('before');
        return undefined;
      }
    }
    const ledger = new Ledger();
    const onlyBefore = composeToolHooks(ledger, { afterRun: () => void ledger.seen.push('after') });
    expect(Object.keys(onlyBefore).sort()).toEqual(['afterRun', 'beforeRun']);
    expect(Object.keys(composeToolHooks(ledger))).toEqual(['beforeRun']);
    expect(Object.keys(composeToolHooks({ afterRun: () => {} }))).toEqual(['afterRun']);
    await onlyBefore.beforeRun!(call, input);
    await onlyBefore.afterRun!(result, call, input);
    expect(ledger.seen).toEqual(['before', 'after']);
  });

  it('calls composed hooks with their objects as `this`, and a lone afterRun’s error comes out', async () => {
    class Audit implements ToolRunHooks {
      readonly seen: string[] = [];
      constructor(readonly name: string) {}
      async beforeRun() {
        this.seen.push(`${this.name} before`);
        return undefined;
      }
      async afterRun() {
        this.seen.push(`${this.name} after`);
      }
    }
    const [a, b] = [new Audit('a'), new Audit('b')];
    const hooks = composeToolHooks(a, b);
    await hooks.beforeRun!(call, input);
    await hooks.afterRun!(result, call, input);
    expect([...a.seen, ...b.seen]).toEqual(['a before', 'a after', 'b before', 'b after']);
    const failed = new Error('write failed');
    const lone = composeToolHooks({
      afterRun: () => {
        throw failed;
      },
    });
    await expect(async () => lone.afterRun!(result, call, input)).rejects.toBe(failed);
  });
});
