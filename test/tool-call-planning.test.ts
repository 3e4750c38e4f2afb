import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/tools/define-tool.js';
import { planToolCall } from '../src/tools/tool-call.js';
import { ToolRegistry } from '../src/tools/tool-registry.js';

// How a call of the model becomes the machine's record (src/tools/tool-call.ts): which calls ask the
// user first, under each session policy. The approval rules are a safety property: a call that
// cannot run never waits for a user, and a `needsApproval` that throws asks rather than runs.

const args = z.object({ path: z.string() });
const guarded = defineTool({
  name: 'delete_file',
  description: 'Deletes a file',
  parameters: args,
  needsApproval: true,
  execute: () => 'deleted',
});
const open = defineTool({ name: 'read_file', description: 'Reads', parameters: args, execute: () => 'text' });
const judged = defineTool({
  name: 'write_file',
  description: 'Writes',
  parameters: args,
  needsApproval: (a) => !a.path.startsWith('/tmp/'),
  execute: () => 'written',
});
const broken = defineTool({
  name: 'broken_rule',
  description: 'Its approval rule throws',
  parameters: args,
  needsApproval: () => {
    throw new Error('rule failed');
  },
  execute: () => 'ran',
});
const finish = defineTool({
  name: 'finish',
  description: 'Ends the turn',
  parameters: z.object({}),
  loopBreaking: 'completed',
  updatesPlan: true,
  execute: () => 'done',
});
const registry = new ToolRegistry([guarded, open, judged, broken, finish]);
const call = (name: string, argsText = '{"path":"/home/a.txt"}') => ({ id: 'c1', name, argsText });

describe('planToolCall', () => {
  it("asks for approval when the tool says so, by its flag or by its rule on the call's arguments", () => {
    expect(planToolCall(call('delete_file'), registry).needsApproval).toBe(true);
    expect(planToolCall(call('read_file'), registry).needsApproval).toBe(false);
    expect(planToolCall(call('write_file'), registry).needsApproval).toBe(true);
    expect(planToolCall(call('write_file', '{"path":"/tmp/x"}'), registry).needsApproval).toBe(false);
  });

  it('asks when the approval rule throws: failing safe means asking the user', () => {
    expect(planToolCall(call('broken_rule'), registry).needsApproval).toBe(true);
  });

  it("gives the rule the call's id and the session id", () => {
    const seen: unknown[] = [];
    const spy = defineTool({
      name: 'spy',
      description: 'Records',
      parameters: args,
      needsApproval: (a, ctx) => {
        seen.push({ a, ctx });
        return false;
      },
      execute: () => '',
    });
    planToolCall(call('spy'), new ToolRegistry([spy]), 'tool', 'session-7');
    expect(seen).toEqual([{ a: { path: '/home/a.txt' }, ctx: { toolCallId: 'c1', sessionId: 'session-7' } }]);
  });

  it("lets the session policy override the tool: 'always' asks, 'never' does not", () => {
    expect(planToolCall(call('read_file'), registry, 'always').needsApproval).toBe(true);
    expect(planToolCall(call('delete_file'), registry, 'never').needsApproval).toBe(false);
  });

  it('lets a policy function decide per call, and defer to the tool by returning undefined', () => {
    const policy = (c: { name: string }) => (c.name === 'read_file' ? true : undefined);
    expect(planToolCall(call('read_file'), registry, policy).needsApproval).toBe(true);
    expect(planToolCall(call('delete_file'), registry, policy).needsApproval).toBe(true);
    expect(planToolCall(call('write_file', '{"path":"/tmp/x"}'), registry, policy).needsApproval).toBe(false);
    expect(planToolCall(call('delete_file'), registry, () => false).needsApproval).toBe(false);
  });

  it('never asks for a call that cannot run: an unknown tool, arguments that are not JSON', () => {
    for (const policy of ['tool', 'always'] as const) {
      expect(planToolCall(call('no_such_tool'), registry, policy)).toEqual({
        id: 'c1',
        name: 'no_such_tool',
        argsText: '{"path":"/home/a.txt"}',
        args: { path: '/home/a.txt' },
        needsApproval: false,
      });
      const unparsed = planToolCall(call('delete_file', '{"path":'), registry, policy);
      expect(unparsed).toMatchObject({ args: undefined, needsApproval: false });
    }
  });

  it('reads empty arguments as an empty object, and marks turn-ending and plan tools', () => {
    expect(planToolCall(call('finish', '  '), registry)).toEqual({
      id: 'c1',
      name: 'finish',
      argsText: '  ',
      args: {},
      needsApproval: false,
      loopBreaking: 'completed',
      updatesPlan: true,
    });
    const plain = planToolCall(call('read_file'), registry);
    expect('loopBreaking' in plain || 'updatesPlan' in plain).toBe(false);
  });
});

describe('ToolRegistry', () => {
  it('keeps the tools list it sends in step with adds and removes', () => {
    const tools = new ToolRegistry([open]);
    expect(tools.toJSON().map((t) => t.function.name)).toEqual(['read_file']);
    tools.add(guarded);
    expect(tools.toJSON().map((t) => t.function.name)).toEqual(['read_file', 'delete_file']);
    expect(tools.remove('read_file')).toBe(true);
    expect(tools.remove('read_file')).toBe(false);
    expect(tools.toJSON().map((t) => t.function.name)).toEqual(['delete_file']);
    expect([tools.size, tools.names, tools.has('delete_file'), tools.has('read_file')]).toEqual([
      1,
      ['delete_file'],
      true,
      false,
    ]);
    expect(() => tools.add(guarded)).toThrow(/delete_file/);
  });
});
