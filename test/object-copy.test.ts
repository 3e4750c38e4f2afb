/**
 * `copyWith` stands in for `{ ...base, ...fields }` on the hot paths (request bodies, streamed text
 * events, a tool's context): the same object, key for key and in the same order.
 */
import { describe, expect, it } from 'vitest';
import { copyWith } from '../src/object-copy.js';

describe('copyWith', () => {
  it('gives what the spread gives: keys in order, a key of both in its first place with the new value', () => {
    const base = { model: 'm', messages: [1], tools: [], tool_choice: 'auto' };
    const fields = { stream: true, messages: [2] };
    const copy = copyWith(base, fields);
    const spread = { ...base, ...fields };
    expect(copy).toEqual(spread);
    expect(Object.keys(copy)).toEqual(Object.keys(spread));
    expect(JSON.stringify(copy)).toBe(JSON.stringify(spread));
    expect(copy).not.toBe(base);
    expect(base).toEqual({ model: 'm', messages: [1], tools: [], tool_choice: 'auto' });
  });

  it('takes no base as an empty one, and reads a getter of the base once, as a value', () => {
    expect(copyWith(undefined, { a: 1 })).toEqual({ a: 1 });
    let reads = 0;
    const base = {
      get n() {
        reads++;
        return 7;
      },
    };
    const copy = copyWith(base, { m: 1 });
    expect(reads).toBe(1);
    expect(Object.getOwnPropertyDescriptor(copy, 'n')).toMatchObject({ value: 7, writable: true });
  });
});
