/**
 * Streamed arguments are assembled in linear work: 106 KiB of arguments in 8-character fragments,
 * each ending in `}` (what made the old completeness check re-parse everything received so far, 18 s
 * for this size), through the real SDK and the scripted server. Measured without a clock: the
 * characters handed to `JSON.parse` during the whole turn (the SDK's parsing of each SSE event, the
 * server's parsing of each request, the tool's arguments) stay a small multiple of the stream's
 * size; the old check alone parsed about 6,800 times the arguments' size.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agentOn, assertToolCallsAnswered } from './support/harness.js';

/** JSON arguments of `chars` characters (a multiple of 8) whose every 8-character piece ends in `}`. */
function bracedArguments(chars: number): string {
  const blocks = (chars - 16) / 8;
  return `{"t":"x}${'xxxxxxx}'.repeat(blocks)}xxxxxx"}`;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('long streamed arguments', () => {
  it('assembles 106 KiB of arguments in fragments ending in "}" without re-parsing them', async () => {
    const args = bracedArguments(106 * 1024);
    expect(args).toHaveLength(108_544);
    expect(JSON.parse(args).t).toHaveLength(108_544 - 8);
    const received: string[] = [];
    const keep = defineTool({
      name: 'keep',
      description: 'keeps its text',
      parameters: z.object({ t: z.string() }),
      execute: ({ t }) => {
        received.push(t);
        return `kept ${t.length}`;
      },
    });
    const { agent, events } = await agentOn(
      {
        turns: [
          {
            chunkSize: 8,
            toolCalls: [
              { name: 'keep', arguments: args },
              { name: 'keep', arguments: { t: 'small' } },
            ],
          },
          { content: 'done' },
        ],
      },
      { tools: [keep] },
    );
    const parse = JSON.parse;
    let parsedChars = 0;
    vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof parse>[1]) => {
      parsedChars += text.length;
      return parse(text, reviver);
    });
    const result = await agent.send('go');
    vi.restoreAllMocks();

    expect(result.response).toBe('done');
    expect(received).toEqual([JSON.parse(args).t, 'small']);
    expect(events.filter((e) => e.type === 'tool_call_start')).toHaveLength(2);
    assertToolCallsAnswered(result.messages);
    // About 13,600 SSE events of some 260 characters each are parsed by the SDK: some 33 times the
    // arguments' size. Re-parsing the arguments received so far on each fragment is about 6,800 times.
    expect(parsedChars).toBeLessThan(100 * args.length);
  });
});
