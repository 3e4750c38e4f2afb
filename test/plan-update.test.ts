import { describe, expect, it } from 'vitest';
import { planChange, planFromResults } from '../src/machines/plan-update.js';
import { EMPTY_BATCH, receiveCalls } from '../src/machines/tool-batch.js';
import type { ToolCallRequest, ToolResult } from '../src/tools/tool-call.js';

// The plan follows from the calls and their results: the last successful update_plan among the
// results a batch just accepted sets it; failed calls, other tools and bad arguments do not.

const planCall = (id: string, args: unknown, updatesPlan = true): ToolCallRequest => ({
  id,
  name: 'update_plan',
  argsText: JSON.stringify(args),
  args,
  needsApproval: false,
  ...(updatesPlan ? { updatesPlan: true as const } : {}),
});
const answer = (id: string, isError = false): ToolResult => ({
  toolCallId: id,
  name: 'update_plan',
  content: isError ? 'invalid plan' : 'Plan updated',
  isError,
  durationMs: 1,
});
const steps = (...names: string[]) => ({ steps: names.map((step) => ({ step, status: 'pending' })) });

describe('planFromResults', () => {
  const calls = [
    planCall('p1', steps('one')),
    planCall('p2', steps('two', 'three')),
    planCall('bad', { steps: 'not a list' }),
    planCall('other', steps('not a plan call'), false),
  ];
  const batch = receiveCalls(EMPTY_BATCH, calls, []);

  it('is the plan of the last successful update_plan among the results', () => {
    expect(planFromResults(batch, [answer('p1'), answer('p2')])).toEqual(steps('two', 'three'));
    expect(planFromResults(batch, [answer('p2'), answer('p1')])).toEqual(steps('one'));
  });

  it('skips failed calls, calls of other tools, arguments that are no plan and unknown calls', () => {
    expect(planFromResults(batch, [answer('p1'), answer('p2', true)])).toEqual(steps('one'));
    expect(planFromResults(batch, [answer('p1'), answer('other')])).toEqual(steps('one'));
    expect(planFromResults(batch, [answer('p1'), answer('bad')])).toEqual(steps('one'));
    expect(planFromResults(batch, [answer('nowhere')])).toBeUndefined();
    expect(planFromResults(batch, [])).toBeUndefined();
  });

  it('planChange gives the context field and the event payload only when the plan changed', () => {
    expect(planChange({ batch }, [answer('p1')])).toEqual({
      fields: { plan: steps('one') },
      updated: steps('one'),
    });
    expect(planChange({ batch }, [answer('other')])).toEqual({ fields: {}, updated: undefined });
  });
});
