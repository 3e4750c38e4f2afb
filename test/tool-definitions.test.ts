import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../src/tools/define-tool.js';
import { planFromArgs, planSchema, planSummary, updatePlanTool } from '../src/tools/update-plan-tool.js';

// defineTool's refusals and the JSON it sends, and the plan tool's own logic (its summary, what a call
// keeps), read directly: the agent tests reach them only through whole turns. Written for the
// survivors of `npm run mutation -- src/tools` (docs/testing.md).

const noContext = {} as ToolContext;

describe('defineTool', () => {
  const parameters = z.object({ path: z.string().describe('where') });

  it('refuses a name the APIs refuse, naming it', () => {
    for (const name of ['', 'has space', 'dot.ted', 'x'.repeat(65)]) {
      expect(() => defineTool({ name, description: 'd', parameters, execute: () => '' })).toThrow(
        `defineTool: invalid tool name ${JSON.stringify(name)}`,
      );
    }
    expect(
      defineTool({ name: 'a-Z_9'.padEnd(64, 'x'), description: 'd', parameters, execute: () => '' }).name,
    ).toHaveLength(64);
  });

  it('refuses parameters that are not a zod object, naming the tool', () => {
    const notObject = z.string() as unknown as typeof parameters;
    expect(() =>
      defineTool({ name: 'read', description: 'd', parameters: notObject, execute: () => '' }),
    ).toThrow('defineTool(read): parameters must be a zod object schema');
  });

  it('sends a function tool: name, description and the input JSON Schema without $schema', () => {
    const tool = defineTool({ name: 'read', description: 'Reads a file', parameters, execute: () => '' });
    expect(tool.json).toEqual({
      type: 'function',
      function: {
        name: 'read',
        description: 'Reads a file',
        parameters: {
          type: 'object',
          properties: { path: { type: 'string', description: 'where' } },
          required: ['path'],
        },
      },
    });
  });

  it('sends a given JSON Schema as it is (less its $schema)', () => {
    const jsonSchema = { $schema: 'x', type: 'object', properties: { q: { type: 'number' } } };
    const tool = defineTool({ name: 'q', description: 'd', parameters, jsonSchema, execute: () => '' });
    expect(tool.json.function.parameters).toEqual({ type: 'object', properties: { q: { type: 'number' } } });
  });
});

describe('update_plan', () => {
  const steps = [
    { step: 'read the brief', status: 'completed' },
    { step: 'draft', status: 'in_progress' },
    { step: 'review', status: 'pending' },
    { step: 'ship', status: 'pending' },
  ] as const;

  it('answers with a count of the steps by status', async () => {
    expect(await updatePlanTool.execute({ steps }, noContext)).toBe(
      'Plan updated (4 steps: 1 completed, 1 in progress, 2 pending).',
    );
    expect(planSummary({ steps: [{ step: 'one', status: 'completed' }] })).toBe(
      '1 step: 1 completed, 0 in progress, 0 pending',
    );
    expect(planSummary({ steps: [] })).toBe('0 steps: 0 completed, 0 in progress, 0 pending');
  });

  it('answers plainly to arguments that are not a plan', async () => {
    expect(await updatePlanTool.execute({ steps: 'none' }, noContext)).toBe('Plan updated.');
  });

  it('keeps the steps and a non-blank explanation, nothing else', () => {
    expect(planFromArgs({ steps, explanation: 'scope grew', extra: 1 })).toEqual({
      explanation: 'scope grew',
      steps: steps.map((s) => ({ ...s })),
    });
    expect(planFromArgs({ steps, explanation: '   ' })).toEqual({ steps: steps.map((s) => ({ ...s })) });
    expect(planFromArgs({ steps })).not.toHaveProperty('explanation');
    expect(planFromArgs({ steps: [{ step: 'x', status: 'done' }] })).toBeUndefined();
  });

  it('refuses two steps in progress, naming them', () => {
    const running = {
      steps: [...steps.slice(0, 1), { step: 'a', status: 'in_progress' }, ...steps.slice(1)],
    };
    expect(planFromArgs(running)).toBeUndefined();
    const result = planSchema.safeParse(running);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({
        code: 'custom',
        path: ['steps'],
        message: 'at most one step may be in_progress; steps 1, 2 are (mark the others pending or completed)',
      }),
    ]);
  });
});
