/**
 * The request hash's canonical JSON and settings (src/llm/request-hash.ts) on their own: the text is
 * what `JSON.stringify` gives with sorted keys (what the SDK sends), and the settings are the body
 * without its conversation and transport. The pinned hashes are in model-call-record.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, requestHash, requestSettings } from '../src/llm/request-hash.js';

describe('canonicalJson', () => {
  it('is what JSON.stringify writes for values whose keys are already sorted', () => {
    const fn = () => 1;
    const values: unknown[] = [
      null,
      1,
      'x',
      [undefined, fn, 2],
      { a: fn, b: undefined, c: [null, { d: 'e' }] },
      [],
      {},
    ];
    for (const value of values) expect(canonicalJson(value)).toBe(JSON.stringify(value));
    // Where JSON.stringify writes nothing at all, the text is `null`.
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(fn)).toBe('null');
  });
});

describe('requestHash', () => {
  it('leaves out the members JSON leaves out: undefined and functions', () => {
    const body = { model: 'm', input: [{ role: 'user', content: 'hi' }] };
    expect(requestHash({ ...body, send: () => 1, temperature: undefined })).toBe(requestHash(body));
  });

  it('hashes a conversation holding null and text items, and tells them apart', () => {
    const a = { role: 'user', content: 'a' };
    const withNull = requestHash({ model: 'm', input: [a, null] });
    expect(withNull).toBe(requestHash({ model: 'm', input: [a, null] }));
    expect(withNull).not.toBe(requestHash({ model: 'm', input: [a] }));
    expect(withNull).not.toBe(requestHash({ model: 'm', input: [a, 'null'] }));
  });
});

describe('requestSettings', () => {
  it('is the body without its conversation and how it travels', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const settings = requestSettings({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      input: 'hi',
      stream: true,
      stream_options: { include_usage: true },
      tools,
      temperature: 0,
    });
    expect(settings).toEqual({ model: 'm', tools, temperature: 0 });
    expect(settings.tools).toBe(tools);
  });
});
