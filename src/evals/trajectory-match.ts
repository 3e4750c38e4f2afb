import type { TrajectoryStep } from './trajectory.js';

/**
 * How two trajectories are compared:
 * - `strict`: the same calls in the same order;
 * - `unordered`: the same calls, in any order;
 * - `subset`: every actual call is one of the expected ones (some expected may be missing);
 * - `superset`: every expected call was made (other calls may come between and around them).
 * Each expected step answers at most one actual call.
 */
export type TrajectoryMode = 'strict' | 'unordered' | 'subset' | 'superset';

/**
 * How a call's arguments are compared: `exact` (equal as JSON values), `subset` (what the expected
 * arguments give is in the actual ones, at every depth; arrays element by element with equal length),
 * `ignore` (names only). An expected step without `args` matches any arguments.
 */
export type ArgsMatch = 'exact' | 'subset' | 'ignore';

export interface TrajectoryMatchOptions {
  /** Default `strict`. */
  mode?: TrajectoryMode;
  /** Default `exact`. */
  args?: ArgsMatch;
}

/** An expected step: a name and, optionally, the arguments. */
export type ExpectedStep = Pick<TrajectoryStep, 'name'> & { args?: unknown };

/** The verdict: `ok`, or the first miss in words (for a test's failure message). */
export type TrajectoryVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Whether the `actual` trajectory (`trajectoryOf`) matches the `expected` one under `mode` and `args`.
 * Pure; usable in any test runner: `expect(trajectoryMatch(a, e)).toEqual({ ok: true })` shows the
 * miss when it fails.
 */
export function trajectoryMatch(
  actual: readonly TrajectoryStep[],
  expected: readonly ExpectedStep[],
  options: TrajectoryMatchOptions = {},
): TrajectoryVerdict {
  const mode = options.mode ?? 'strict';
  const same = (a: TrajectoryStep, e: ExpectedStep) => stepMatches(a, e, options.args ?? 'exact');
  if (mode === 'strict') {
    const length = Math.max(actual.length, expected.length);
    for (let i = 0; i < length; i++) {
      const a = actual[i];
      const e = expected[i];
      if (a && e && same(a, e)) continue;
      return miss(`step ${i + 1}: expected ${describe(e)}, got ${describe(a)}`);
    }
    return { ok: true };
  }
  const pairOf = matching(actual, expected, same);
  const matchedActual = new Set(pairOf.values());
  const unmatchedExpected = expected.filter((_, i) => !pairOf.has(i));
  const unmatchedActual = actual.filter((_, i) => !matchedActual.has(i));
  if (mode !== 'subset' && unmatchedExpected.length > 0) {
    return miss(
      `expected ${describe(unmatchedExpected[0])} was not called (${unmatchedExpected.length} missing)`,
    );
  }
  if (mode !== 'superset' && unmatchedActual.length > 0) {
    return miss(`${describe(unmatchedActual[0])} was not expected (${unmatchedActual.length} unexpected)`);
  }
  return { ok: true };
}

function miss(reason: string): TrajectoryVerdict {
  return { ok: false, reason };
}

function describe(step: ExpectedStep | undefined): string {
  if (!step) return 'no call';
  return step.args === undefined ? step.name : `${step.name}(${JSON.stringify(step.args)})`;
}

function stepMatches(actual: TrajectoryStep, expected: ExpectedStep, args: ArgsMatch): boolean {
  if (actual.name !== expected.name) return false;
  if (args === 'ignore' || expected.args === undefined) return true;
  return args === 'exact' ? deepEqual(actual.args, expected.args) : containsValue(actual.args, expected.args);
}

/**
 * A largest matching of expected steps to actual calls (each used once): expected index -> actual
 * index. Augmenting paths, so an early greedy choice never hides a full match (trajectories are short).
 */
function matching(
  actual: readonly TrajectoryStep[],
  expected: readonly ExpectedStep[],
  same: (a: TrajectoryStep, e: ExpectedStep) => boolean,
): Map<number, number> {
  const expectedOf = new Map<number, number>(); // actual index -> expected index
  const tryAssign = (e: number, seen: Set<number>): boolean => {
    for (let a = 0; a < actual.length; a++) {
      if (seen.has(a) || !same(actual[a]!, expected[e]!)) continue;
      seen.add(a);
      const holder = expectedOf.get(a);
      if (holder === undefined || tryAssign(holder, seen)) {
        expectedOf.set(a, e);
        return true;
      }
    }
    return false;
  };
  for (let e = 0; e < expected.length; e++) tryAssign(e, new Set());
  return new Map([...expectedOf].map(([a, e]) => [e, a]));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]))
    );
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    const other = Object.keys(b).filter((k) => b[k] !== undefined);
    return keys.length === other.length && keys.every((k) => deepEqual(a[k], b[k]));
  }
  return Object.is(a, b);
}

/** Whether `actual` holds what `expected` gives (objects: every expected key, recursively). */
function containsValue(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((v, i) => containsValue(actual[i], v))
    );
  }
  if (isPlainObject(expected)) {
    return isPlainObject(actual) && Object.keys(expected).every((k) => containsValue(actual[k], expected[k]));
  }
  return Object.is(actual, expected);
}
