import { z } from 'zod';
import { unfencedAnswer } from '../agent/turn-result.js';
import type { TerminateReason } from '../machines/emitted-events.js';
import type { EvalExpectations } from './eval-suite-schema.js';
import type { Trajectory } from './trajectory.js';
import { trajectoryMatch } from './trajectory-match.js';

/** What one run of a case did, as its expectations look at it. */
export interface CaseOutcome {
  /** The tool calls the model asked for, in order. */
  trajectory: Trajectory;
  /** The names of the calls that asked for approval, in order. */
  approvalsAsked: string[];
  /** The last turn's answer. */
  response: string;
  /** Why the last turn ended. */
  terminateReason: TerminateReason;
  /** Model calls answered over the case. */
  modelCalls: number;
  /** Tokens (prompt and completion) over the case. */
  tokens: number;
  /** Why the run failed, when it did (the turn's error, a replay's divergence). */
  error?: string;
  /** What a replay noted without failing (sequential hash differences, unrecorded approvals). */
  warnings?: string[];
}

/**
 * The expectations `outcome` misses, in the order the suite format lists them (trajectory, tools not
 * to call, approvals, output, terminate reason, budgets), one sentence each; empty when it meets them.
 * A run that ended in error is a miss unless the case expects `terminateReason: error`.
 */
export function expectationMisses(outcome: CaseOutcome, expect: EvalExpectations): string[] {
  const misses: string[] = [];
  // A run that broke (model unreachable, a failed write) passes nothing by accident.
  if (outcome.terminateReason === 'error' && expect.terminateReason === undefined) {
    misses.push(`the run ended in error: ${outcome.error ?? 'no message'}`);
  }
  if (expect.trajectory) {
    const { steps, match, args } = expect.trajectory;
    const verdict = trajectoryMatch(outcome.trajectory, steps, {
      ...(match ? { mode: match } : {}),
      ...(args ? { args } : {}),
    });
    if (!verdict.ok) misses.push(`trajectory (${match ?? 'strict'}): ${verdict.reason}`);
  }
  const called = new Set(outcome.trajectory.map((s) => s.name));
  for (const name of expect.notCalled ?? []) {
    if (called.has(name)) misses.push(`${name} was called (notCalled)`);
  }
  const asked = new Set(outcome.approvalsAsked);
  for (const name of expect.approvalsAsked ?? []) {
    if (!asked.has(name)) misses.push(`no approval was asked for ${name}`);
  }
  if (expect.output) misses.push(...outputMisses(outcome.response, expect.output));
  if (expect.terminateReason && outcome.terminateReason !== expect.terminateReason) {
    const why = outcome.error ? `: ${outcome.error}` : '';
    misses.push(`terminateReason: expected ${expect.terminateReason}, got ${outcome.terminateReason}${why}`);
  }
  const { modelCalls, tokens } = expect.budget ?? {};
  if (modelCalls !== undefined && outcome.modelCalls > modelCalls) {
    misses.push(`budget: ${outcome.modelCalls} model calls, at most ${modelCalls} allowed`);
  }
  if (tokens !== undefined && outcome.tokens > tokens) {
    misses.push(`budget: ${outcome.tokens} tokens, at most ${tokens} allowed`);
  }
  return misses;
}

function outputMisses(response: string, expect: NonNullable<EvalExpectations['output']>): string[] {
  const misses: string[] = [];
  const shown = quote(response);
  for (const text of expect.contains ?? []) {
    if (!response.includes(text)) misses.push(`output does not contain ${JSON.stringify(text)}: ${shown}`);
  }
  if (expect.regex !== undefined && !new RegExp(expect.regex).test(response)) {
    misses.push(`output does not match /${expect.regex}/: ${shown}`);
  }
  if (expect.equals !== undefined && response !== expect.equals) {
    misses.push(`output: expected ${JSON.stringify(expect.equals)}, got ${shown}`);
  }
  if (expect.schema) {
    const problem = schemaProblem(response, expect.schema);
    if (problem) misses.push(`output schema: ${problem}`);
  }
  return misses;
}

/** Why `response` (JSON, a fenced block unwrapped) does not satisfy the JSON Schema; undefined when it does. */
function schemaProblem(response: string, schema: Record<string, unknown>): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(unfencedAnswer(response));
  } catch {
    return `the output is not JSON: ${quote(response)}`;
  }
  const parsed = z.fromJSONSchema(schema).safeParse(value);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`;
}

/** The answer as a miss line shows it: JSON-quoted, cut at 80 characters. */
function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
