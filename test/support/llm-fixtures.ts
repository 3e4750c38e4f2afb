/**
 * Fixtures for the tests of src/llm/ on their own: a model request, a completion, and the `where` of
 * a `ReplyShapeError` (checking that it says what came and what was expected).
 */
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { expect } from 'vitest';
import type { Completion } from '../../src/llm/model-reply.js';
import type { ModelRequest } from '../../src/llm/model-request.js';
import { ReplyShapeError } from '../../src/llm/reply-fields.js';

/** A function tool with a description and a schema, as a tool registry hands it out. */
export const echoTool: ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'echo',
    description: 'echoes',
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
  },
};

/** One user message, no tools, no deadline, no call ids taken; `fields` replace any of it. */
export function modelRequest(fields: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    toolsEnabled: true,
    deadline: null,
    usedCallIds: new Set(),
    callIdStem: 'call_t1',
    ...fields,
  };
}

/** An empty answer that stopped, without usage; `fields` replace any of it. */
export function completionOf(fields: Partial<Completion> = {}): Completion {
  return { content: '', reasoning: '', refusal: '', calls: [], finishReason: 'stop', usage: null, ...fields };
}

/** The `where` of the `ReplyShapeError` that `run` throws; fails when it throws none or another. */
export function shapeErrorWhere(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ReplyShapeError);
    expect((error as Error).name).toBe('ReplyShapeError');
    // It says what came and what was expected instead.
    expect((error as Error).message).toMatch(/ as [^;]+; expected \S/);
    return /`([^`]*)`/.exec((error as Error).message)![1]!;
  }
  throw new Error('no error thrown');
}
