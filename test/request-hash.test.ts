/**
 * The request hash's canonical JSON and settings (src/llm/request-hash.ts) on their own: the text is
 * what `JSON.stringify` gives with sorted keys (what the SDK sends), and the settings are the body
 * without its conversation and transport. The pinned hashes are in model-call-record.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, requestHash, requestSettings } from '../src/llm/request-hash.js';
import { workCounts } from '../src/work-counters.js';

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

/**
 * Messages and tools arrays are never changed once made (docs/evals.md), so the hash remembers each
 * one's text by identity: a long session does not hash its conversation again at every call. These
 * tests change objects in place on purpose, to see that what was hashed once is not hashed again.
 */
describe('requestHash remembers what it hashed', () => {
  const fresh = (body: object) => requestHash(structuredClone(body));

  it('takes a tools array it has seen for the text it had then', () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const before = fresh({ model: 'm', tools });
    expect(requestHash({ model: 'm', tools })).toBe(before);
    tools[0]!.function.name = 'renamed';
    expect(requestHash({ model: 'm', tools })).toBe(before);
    expect(requestHash({ model: 'm', tools: [...tools] })).toBe(fresh({ model: 'm', tools }));
  });

  it('takes a message it has seen for the text it had then, after any other first message', () => {
    const message = { role: 'user', content: 'first text' };
    const asHashed = { ...message };
    requestHash({ model: 'm', messages: [{ role: 'system', content: 'one' }, message] });
    message.content = 'changed text';
    // Another system message: neither the last list nor the chain before `message` is known.
    const system = { role: 'system', content: 'two' };
    expect(requestHash({ model: 'm', messages: [system, message] })).toBe(
      fresh({ model: 'm', messages: [system, asHashed] }),
    );
  });

  it('hashes a conversation that starts with a text item, and again the same', () => {
    const item = { role: 'user', content: 'a' };
    const body = { model: 'm', input: ['hello', item] };
    expect(requestHash(body)).toBe(fresh(body));
    expect(requestHash({ model: 'm', input: ['hello', item, 'more'] })).toBe(
      fresh({ model: 'm', input: ['hello', item, 'more'] }),
    );
    expect(requestHash(body)).not.toBe(requestHash({ model: 'm', input: ['hello!', item] }));
  });

  it('hashes what a call adds, when a block made anew for each call follows the system prompt', () => {
    // As an agent with a plan sends it: the plan block (a new object each call, the same text) after
    // the system message, then the conversation, which grows by a reply and a tool result each call.
    const system = { role: 'system', content: 'prompt' };
    const block = () => ({ role: 'system', content: '## Plan\n- [ ] step' });
    const conversation: object[] = [{ role: 'user', content: 'go' }];
    for (let i = 0; i < 50; i++) conversation.push({ role: 'tool', tool_call_id: `c${i}`, content: `r${i}` });
    const body = () => ({ model: 'm', messages: [system, block(), ...conversation] });
    requestHash(body());
    conversation.push({ role: 'assistant', content: 'next' });
    const before = workCounts.hashes;
    const hash = requestHash(body());
    // The new block's digest and its link, the new message's digest and its link, the request: 5,
    // not one link for each of the 51 messages after the block.
    expect(workCounts.hashes - before).toBe(5);
    expect(hash).toBe(fresh(body()));
  });
});
