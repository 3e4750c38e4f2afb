import { h } from './dom.js';

/**
 * A tool call's arguments as the user reads them before approving: one row per field, its value as
 * written (a multi-line string keeps its line breaks instead of showing `\n`), objects and arrays as
 * indented JSON. Arguments that are not an object (or JSON text that does not parse) are shown whole.
 */
export function argumentsView(args: unknown): HTMLElement {
  const value = typeof args === 'string' ? parseObject(args) : args;
  if (value === undefined || typeof value !== 'object' || value === null || Array.isArray(value)) {
    return h('pre', { class: 'arg-value' }, valueText(value === undefined ? args : value));
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return h('pre', { class: 'arg-value' }, '{}');
  return h(
    'dl',
    { class: 'arguments' },
    ...entries.flatMap(([key, v]) => [
      h('dt', { class: 'arg-key' }, key),
      h('dd', {}, h('pre', { class: 'arg-value' }, valueText(v))),
    ]),
  );
}

/** A string as it is; anything else as indented JSON. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** JSON text of an object, parsed; undefined when it is not one. */
function parseObject(text: string): unknown {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}
