// BMAD 6.12's customization merge, as its SKILL.md files describe it: a base (`customize.toml`, or
// `_bmad/config.toml`) under a team override, under a personal override.

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** The key that identifies an item of an array of tables: `code`, else `id`. */
function itemKey(item: unknown): string | undefined {
  if (!isTable(item)) return undefined;
  for (const field of ['code', 'id']) {
    const value = item[field];
    if (typeof value === 'string' || typeof value === 'number') return `${field}:${value}`;
  }
  return undefined;
}

function mergeArrays(base: unknown[], over: unknown[]): unknown[] {
  const keyed = [...base, ...over].every((item) => itemKey(item) !== undefined);
  if (!keyed) return [...base, ...over];
  const out = [...base];
  for (const item of over) {
    const at = out.findIndex((existing) => itemKey(existing) === itemKey(item));
    if (at >= 0) out[at] = item;
    else out.push(item);
  }
  return out;
}

/**
 * Merges `over` onto `base` by BMAD's structural rules: scalars override, tables deep-merge, arrays of
 * tables keyed by `code` (or `id`) replace the matching item in place and append new ones, every other
 * array appends. Neither input is changed.
 */
export function mergeCustomization(base: Table, over: Table): Table {
  const out: Table = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    if (isTable(current) && isTable(value)) out[key] = mergeCustomization(current, value);
    else if (Array.isArray(current) && Array.isArray(value)) out[key] = mergeArrays(current, value);
    else out[key] = value;
  }
  return out;
}
