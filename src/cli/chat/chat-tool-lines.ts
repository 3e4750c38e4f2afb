import path from 'node:path';
import type { BundleAgent } from '../../bundle/bundle-agent-types.js';
import { fillVariables } from '../../bundle/path-variables.js';
import { displayWidth, ellipsize, looksLikePath, shortenPath } from '../terminal/terminal-layout.js';
import { terminalSafe } from '../terminal/terminal-safe.js';

/** Argument names that usually say what a call is about, in order of preference. */
const MAIN_ARGS = ['file_path', 'path', 'workflow_path', 'url', 'query', 'command', 'name', 'text'];

/**
 * The widest a call's main argument is shown, whatever the terminal's width: 80 columns, 50 for an
 * absolute path (outside the project: its last folders say which file).
 */
export const MAX_ARGUMENT_COLUMNS = 80;
const MAX_ABSOLUTE_PATH_COLUMNS = 50;

/** How paths in tool calls are shown: variables filled, relative to the project. */
export interface PathView {
  /** Paths under it are shown relative to it. */
  projectRoot?: string;
  /** Fills path variables (`{output_folder}`, `{bundle-root}`, `{date}`) as the tools will. */
  resolve?: (value: string) => string;
}

/** Fills a bundle agent's path variables in a value, as its tools do (what cannot be filled stays). */
export function bundlePaths(
  agent: Pick<BundleAgent, 'projectRoot' | 'bundleRoot' | 'coreRoot' | 'variables'>,
): (value: string) => string {
  const scope = {
    projectRoot: agent.projectRoot,
    bundleRoot: agent.bundleRoot,
    ...(agent.coreRoot ? { coreRoot: agent.coreRoot } : {}),
    variables: agent.variables,
  };
  return (value) => (value.includes('{') ? fillVariables(value, scope) : value);
}

/** A value as the user should read it: variables filled, and relative to the project when inside it. */
export function showPath(value: string, view: PathView): string {
  let shown = view.resolve ? view.resolve(value) : value;
  const root = view.projectRoot;
  if (root && path.isAbsolute(shown) && shown.startsWith(root + path.sep)) shown = path.relative(root, shown);
  return shown;
}

/** A value as the user should read it when it is a path (see `showPath`); other values as they are. */
export function shownPath(value: string, view: PathView): string {
  return looksLikePath(value) ? showPath(value, view) : value;
}

/** The argument that says what a call is about (`file_path`, `url`, `query`, ...), whole and on one line. */
export function mainArgumentText(args: unknown, view: PathView): string {
  if (typeof args === 'string') return terminalSafe(args);
  if (typeof args !== 'object' || args === null) return '';
  const record = args as Record<string, unknown>;
  const key =
    MAIN_ARGS.find((k) => typeof record[k] === 'string') ??
    Object.keys(record).find((k) => typeof record[k] === 'string');
  if (!key) return '';
  const value = terminalSafe(String(record[key])).replace(/\s+/g, ' ').trim();
  return looksLikePath(value) ? showPath(value, view) : value;
}

/** A call's main argument in at most `max` columns: paths keep their end, other text its start. */
export function fitArgument(text: string, max: number): string {
  if (!looksLikePath(text)) return ellipsize(text, Math.min(max, MAX_ARGUMENT_COLUMNS));
  const cap = path.isAbsolute(text) ? MAX_ABSOLUTE_PATH_COLUMNS : MAX_ARGUMENT_COLUMNS;
  return shortenPath(text, Math.min(max, cap));
}

/**
 * A tool result for one line: the fields that say most (a loaded workflow, a saved or read file with
 * its size; the file named only when it is not the call's own argument), else the text.
 */
export function summarize(result: string | undefined, argument: string, view: PathView): string {
  if (!result) return '(no output)';
  const field = (name: string) => new RegExp(`"${name}":\\s*"([^"]*)"`).exec(result)?.[1];
  const bytes = /"bytes":\s*(\d+)/.exec(result)?.[1];
  const size = bytes ? ` (${bytes} bytes)` : '';
  const workflow = field('workflow_name');
  if (workflow) return `loaded workflow ${workflow}`;
  const file = field('path');
  const named = file === undefined ? '' : showPath(file, view);
  const which = named && named !== argument ? ` ${named}` : '';
  if (file && /"success":\s*true/.test(result)) return `saved${which}${size}`;
  if (file && bytes) return `read${which}${size}`;
  return view.projectRoot ? result.split(view.projectRoot + path.sep).join('') : result;
}

/** The parts of a tool line, before colouring. */
export interface ToolLineParts {
  name: string;
  /** The main argument, whole (see {@link mainArgumentText}). */
  argument: string;
  /** Elapsed time, e.g. `0.4s`. */
  took?: string;
  /** What came of it, after the time. */
  detail?: string;
  /** Columns taken by what the line adds around these parts (mark, separators, hints). */
  extra: number;
}

/**
 * Fits a tool line's argument and detail into `width` columns: the detail gives way first (down to
 * a few words, then it is left out), then the argument (a path keeps its end).
 */
export function fitToolLine(
  parts: ToolLineParts,
  width: number,
): { argument: string; detail: string | undefined } {
  const fixed = parts.extra + displayWidth(parts.name) + (parts.took ? 1 + parts.took.length : 0);
  const avail = width - fixed;
  const detail = parts.detail === undefined ? undefined : ellipsize(parts.detail, Number.POSITIVE_INFINITY);
  const detailWidth = detail === undefined ? 0 : displayWidth(detail);
  const keepDetail = Math.min(detailWidth, 18);
  const argumentWidth = displayWidth(parts.argument);
  let argument = parts.argument
    ? fitArgument(parts.argument, Math.max(Math.min(argumentWidth, 20), avail - keepDetail - 1))
    : '';
  const argWidth = argument ? displayWidth(argument) + 1 : 0;
  if (argWidth > avail) argument = fitArgument(parts.argument, Math.max(1, avail - 1));
  if (detail === undefined) return { argument, detail };
  const room = avail - (argument ? displayWidth(argument) + 1 : 0);
  return { argument, detail: room >= 8 ? ellipsize(detail, room) : undefined };
}
