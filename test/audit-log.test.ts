import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AuditRecord, createAuditLog, defineTool, type ToolRunHooks } from '../src/index.js';
import type { AuditFinishRecord, AuditStartRecord } from '../src/unstable.js';
import { agentOn, assertToolCallsAnswered } from './support/harness.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentloop-audit-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function records(file: string): Promise<AuditRecord[]> {
  const text = await readFile(file, 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as AuditRecord);
}

describe('audit log', () => {
  it('writes one record before each call runs and one after it returns', async () => {
    const file = join(dir, 'logs', 'audit.jsonl');
    const seenOwnStart: boolean[] = [];
    const look = defineTool({
      name: 'look',
      description: 'reads the audit log while it runs',
      parameters: z.object({ what: z.string() }),
      execute: async ({ what }, { toolCallId }) => {
        const before = await records(file);
        seenOwnStart.push(before.some((r) => r.type === 'tool_call_started' && r.toolCallId === toolCallId));
        return `looked at ${what}`;
      },
    });
    const explode = defineTool({
      name: 'explode',
      description: 'throws',
      parameters: z.object({}),
      execute: () => {
        throw new Error('kaboom');
      },
    });
    const huge = defineTool({
      name: 'huge',
      description: 'too long',
      parameters: z.object({}),
      execute: () => 'y'.repeat(3_000),
    });
    const { agent } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'look', arguments: { what: 'the sky' } },
              { name: 'explode', arguments: {} },
              { name: 'huge', arguments: {} },
              { name: 'look', arguments: '{"what": ' },
            ],
          },
          { content: 'done' },
        ],
      },
      {
        tools: [look, explode, huge],
        auditLog: file,
        sessionId: 'audit-session',
        limits: { maxToolResultChars: 1_000 },
      },
    );
    const result = await agent.send('go');
    expect(result.terminateReason).toBe('completed');
    assertToolCallsAnswered(result.messages);
    expect(seenOwnStart).toEqual([true]);

    const all = await records(file);
    expect(all).toHaveLength(8);
    const ids = ['call_0_0', 'call_0_1', 'call_0_2', 'call_0_3'];
    for (const id of ids) {
      const mine = all.filter((r) => r.toolCallId === id);
      expect(mine.map((r) => r.type)).toEqual(['tool_call_started', 'tool_call_finished']);
      const [start, finish] = mine as [AuditStartRecord, AuditFinishRecord];
      expect(all.indexOf(start)).toBeLessThan(all.indexOf(finish));
      expect(start).toMatchObject({ sessionId: 'audit-session', turn: 1, iteration: 1 });
      expect(Date.parse(start.startedAt)).not.toBeNaN();
      expect(finish.startedAt).toBe(start.startedAt);
      expect(finish.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(finish.finishedAt)).toBeGreaterThanOrEqual(Date.parse(start.startedAt));
    }
    const byId = (id: string, type: AuditRecord['type']) =>
      all.find((r) => r.toolCallId === id && r.type === type)!;
    expect(byId('call_0_0', 'tool_call_started')).toMatchObject({
      tool: 'look',
      arguments: { what: 'the sky' },
      argumentsValid: true,
    });
    expect(byId('call_0_0', 'tool_call_finished')).toMatchObject({
      outcome: 'ok',
      resultChars: 'looked at the sky'.length,
    });
    expect(byId('call_0_1', 'tool_call_finished')).toMatchObject({
      outcome: 'error',
      error: 'Error: kaboom',
    });
    expect(byId('call_0_2', 'tool_call_finished')).toMatchObject({ outcome: 'ok', truncatedChars: 2_000 });
    expect(byId('call_0_3', 'tool_call_started')).toMatchObject({
      arguments: '{"what": ',
      argumentsValid: false,
    });
    expect((byId('call_0_3', 'tool_call_finished') as AuditFinishRecord).error).toMatch(/not valid JSON/);
  });

  it('fails closed: a call whose start record cannot be written does not run', async () => {
    const blocker = join(dir, 'not-a-folder');
    await writeFile(blocker, 'a file where the log folder should be');
    let ran = false;
    const act = defineTool({
      name: 'act',
      description: 'has a side effect',
      parameters: z.object({}),
      execute: () => {
        ran = true;
        return 'acted';
      },
    });
    const { agent } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'act', arguments: {} }] }, { content: 'could not act' }] },
      { tools: [act], auditLog: join(blocker, 'audit.jsonl') },
    );
    const result = await agent.send('go');
    expect(ran).toBe(false);
    expect(result.messages.find((m) => m.role === 'tool')?.content).toMatch(
      /^Error: the call could not be run: .*(ENOTDIR|EEXIST)/,
    );
    assertToolCallsAnswered(result.messages);
  });

  it('is not told about calls an earlier hook replays (persistence first), and is closable', async () => {
    const file = join(dir, 'audit.jsonl');
    const log = createAuditLog({ file });
    let ran = 0;
    const work = defineTool({
      name: 'work',
      description: 'counts runs',
      parameters: z.object({ n: z.number() }),
      execute: ({ n }) => {
        ran++;
        return `ran ${n}`;
      },
    });
    const replay: ToolRunHooks = {
      beforeRun: async (call) =>
        call.id === 'call_0_0'
          ? {
              toolCallId: call.id,
              name: call.name,
              content: 'recorded before',
              isError: false,
              durationMs: 0,
            }
          : undefined,
    };
    const { agent } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'work', arguments: { n: 1 } },
              { name: 'work', arguments: { n: 2 } },
            ],
          },
          { content: 'done' },
        ],
      },
      { tools: [work], toolHooks: replay, auditLog: log },
    );
    const result = await agent.send('go');
    expect(ran).toBe(1);
    expect(result.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'recorded before',
      'ran 2',
    ]);
    await log.close();
    const all = await records(file);
    expect(all.map((r) => [r.type, r.toolCallId])).toEqual([
      ['tool_call_started', 'call_0_1'],
      ['tool_call_finished', 'call_0_1'],
    ]);
    await expect(
      log.beforeRun(
        { id: 'x', name: 'work', argsText: '{}', args: {}, needsApproval: false },
        {
          sessionId: 's',
          turn: 1,
          iteration: 1,
          calls: [],
          deadline: null,
        },
      ),
    ).rejects.toThrow(/closed/);
  });
});
