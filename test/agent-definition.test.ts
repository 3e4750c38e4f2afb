import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AgentRegistry,
  createAgent,
  defineAgent,
  defineTool,
  escapeInstructions,
  renderInstructions,
  subagentTool,
  toAgentOptions,
} from '../src/index.js';
import { type ScriptedServer, type ScriptedTurn, startScriptedServer } from '../src/testing/index.js';
import { assertToolCallsAnswered } from './support/harness.js';

let server: ScriptedServer | undefined;
afterEach(async () => server?.close());

const summarizer = defineAgent({
  name: 'summarizer',
  description: 'Summarizes a topic in a given number of words',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: ${...} is the instructions' placeholder syntax.
  instructions: 'You summarize ${topic} in at most ${words} words. Answer in JSON.',
  inputSchema: z.object({ topic: z.string(), words: z.number().int().positive() }),
  outputSchema: z.object({ summary: z.string(), words: z.number() }),
});

describe('agent definitions', () => {
  it('are checked when made', () => {
    expect(() => defineAgent({ name: 'bad name', description: '', instructions: '' })).toThrow(
      /invalid agent name/,
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ${...} is the instructions' placeholder syntax.
    expect(() => defineAgent({ name: 'x', description: '', instructions: 'Hi ${who}' })).toThrow(
      /\$\{who\} but inputSchema has no "who"/,
    );
    const t = defineTool({ name: 't', description: '', parameters: z.object({}), execute: () => '' });
    expect(() => defineAgent({ name: 'x', description: '', instructions: '', tools: [t, t] })).toThrow(
      /duplicate tool "t"/,
    );
  });

  it('fill their instructions from validated inputs', () => {
    expect(renderInstructions(summarizer, { topic: 'statecharts', words: 20 })).toBe(
      'You summarize statecharts in at most 20 words. Answer in JSON.',
    );
    expect(() => renderInstructions(summarizer, { topic: 'x', words: -1 })).toThrow(
      /summarizer: invalid inputs: words/,
    );
  });

  it('keep escaped placeholders as written', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: literal text with placeholder syntax.
    const text = 'Costs ${price}; write \\${x} for a literal.';
    const escaped = escapeInstructions(text);
    const literal = defineAgent({ name: 'literal', description: '', instructions: escaped });
    expect(renderInstructions(literal)).toBe(text);
    expect(renderInstructions(summarizer, { topic: 'a', words: 1 })).not.toContain('\\');
    const mixed = defineAgent({
      name: 'mixed',
      description: '',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: one placeholder and one escaped.
      instructions: `Hello \${who}, ${escapeInstructions('${who} is literal')}`,
      inputSchema: z.object({ who: z.string() }),
    });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal part.
    expect(renderInstructions(mixed, { who: 'Ada' })).toBe('Hello Ada, ${who} is literal');
  });

  it('take a display name from the runtime options', () => {
    expect(toAgentOptions(summarizer, { topic: 'a', words: 1 }).name).toBe('summarizer');
    expect(toAgentOptions(summarizer, { topic: 'a', words: 1 }, { name: 'The Summarizer' }).name).toBe(
      'The Summarizer',
    );
  });

  it('live in a registry by unique name', () => {
    const registry = new AgentRegistry().register(summarizer);
    expect(registry.get('summarizer')).toBe(summarizer);
    expect(() => registry.register(summarizer)).toThrow(/already registered/);
    expect(() => registry.require('nobody')).toThrow(/registered: summarizer/);
    expect(registry.unregister('summarizer')).toBe(true);
    expect(registry.getAll()).toEqual([]);
  });

  it('run with validated output', async () => {
    server = await startScriptedServer({
      scenario: { turns: [{ content: '{"summary":"States and events.","words":3}' }] },
    });
    const agent = createAgent(
      toAgentOptions(summarizer, { topic: 'statecharts', words: 5 }, { baseURL: server.url, apiKey: 't' }),
    );
    const result = await agent.send('go');
    expect(result.output).toEqual({ summary: 'States and events.', words: 3 });
    expect(server.requests[0]!.messages[0]).toMatchObject({
      content: 'You summarize statecharts in at most 5 words. Answer in JSON.',
    });
    agent.stop();
  });
});

describe('subagents', () => {
  it('run as a tool of a parent agent, with their own conversation and validated output', async () => {
    const childEvents: string[] = [];
    const children: string[] = [];
    const respond = (
      request: { messages: { role: string; content?: unknown }[] },
      index: number,
    ): ScriptedTurn => {
      const isChild = String(request.messages[0]!.content).startsWith('You summarize');
      if (isChild) return { content: '{"summary":"Machines of states.","words":3}' };
      return index === 0
        ? {
            toolCalls: [
              { name: 'summarizer', arguments: { topic: 'statecharts', words: 3, task: 'summarize' } },
            ],
          }
        : { content: 'The summarizer says: Machines of states.' };
    };
    server = await startScriptedServer({ respond });
    const runtime = { baseURL: server.url, apiKey: 't' };
    const parent = createAgent({
      ...runtime,
      sessionId: 'parent',
      instructions: 'You delegate.',
      tools: [
        subagentTool(summarizer, {
          runtime,
          onEvent: (e) => childEvents.push(`${e.sessionId} ${e.type}`),
          onChild: (child, info) => {
            children.push(`${info.parentSessionId} ${info.toolCallId} ${child.sessionId}`);
            return () => children.push('detached');
          },
        }),
      ],
    });
    const result = await parent.send('summarize statecharts');
    expect(result.response).toBe('The summarizer says: Machines of states.');
    expect(result.messages.find((m) => m.role === 'tool')).toMatchObject({
      content: '{"summary":"Machines of states.","words":3}',
    });
    assertToolCallsAnswered(result.messages);
    expect(childEvents).toContain('parent/summarizer/call_0_0 turn_end');
    expect(children).toEqual(['parent call_0_0 parent/summarizer/call_0_0', 'detached']);
    parent.stop();
  });
});
