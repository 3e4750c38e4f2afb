/** Where two JSON values first differ: the path and the value on each side (undefined: absent). */
export interface JsonDifference {
  /** E.g. `tools[2].function.parameters.properties.path`; `''` for the values themselves. */
  path: string;
  recorded: unknown;
  actual: unknown;
}

/**
 * The first place two JSON values differ, walking objects by key (in `order` first, then sorted) and
 * arrays by index; undefined when they are equal as JSON values (key order aside, `undefined` members
 * as absent). A value of another type, or an array of another length past the shorter one, differs as
 * a whole at its path.
 */
export function firstDifference(
  recorded: unknown,
  actual: unknown,
  order: readonly string[] = [],
  path = '',
): JsonDifference | undefined {
  if (Object.is(recorded, actual)) return undefined;
  const kind = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
  if (kind(recorded) !== kind(actual) || typeof recorded !== 'object' || recorded === null) {
    return { path, recorded, actual };
  }
  if (Array.isArray(recorded)) {
    const other = actual as unknown[];
    const shared = Math.min(recorded.length, other.length);
    for (let i = 0; i < shared; i++) {
      const found = firstDifference(recorded[i], other[i], [], `${path}[${i}]`);
      if (found) return found;
    }
    if (recorded.length === other.length) return undefined;
    return { path: `${path}[${shared}]`, recorded: recorded[shared], actual: other[shared] };
  }
  const a = recorded as Record<string, unknown>;
  const b = actual as Record<string, unknown>;
  const keys = new Set(
    [...Object.keys(a), ...Object.keys(b)].filter((k) => a[k] !== undefined || b[k] !== undefined),
  );
  const ordered = [
    ...order.filter((k) => keys.has(k)),
    ...[...keys].filter((k) => !order.includes(k)).sort(),
  ];
  for (const key of ordered) {
    const found = firstDifference(a[key], b[key], [], joinPath(path, key));
    if (found) return found;
  }
  return undefined;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function joinPath(path: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path ? `${path}.${key}` : key;
}
