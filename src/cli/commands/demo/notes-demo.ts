import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Scenario } from '../../../testing/scenario.js';
import { defineTool, type Tool } from '../../../tools/define-tool.js';
import { failureAnswer, lastToolResults, type SeenToolResult } from './demo-tool-results.js';

/** Resolves a name inside `root`, refusing anything that leaves it. */
function inside(root: string, name: string): string {
  const full = path.resolve(root, name);
  if (full !== root && !full.startsWith(root + path.sep))
    throw new Error(`"${name}" is outside the notes folder`);
  return full;
}

/** Three real file tools over one folder: list, read and search notes. */
export function notesTools(root: string): Tool[] {
  const listNotes = defineTool({
    name: 'list_notes',
    description: 'Lists the note files with their sizes.',
    parameters: z.object({}),
    execute: async () => {
      const names = (await readdir(root)).sort();
      const sizes = await Promise.all(names.map(async (n) => (await stat(inside(root, n))).size));
      return names.map((n, i) => ({ name: n, bytes: sizes[i] }));
    },
  });
  const readNote = defineTool({
    name: 'read_note',
    description: 'Reads one note file by name.',
    parameters: z.object({ name: z.string().describe('File name as listed by list_notes') }),
    execute: async ({ name }) => readFile(inside(root, name), 'utf8'),
  });
  const searchNotes = defineTool({
    name: 'search_notes',
    description: 'Finds lines containing a word (case-insensitive) across all notes.',
    parameters: z.object({ query: z.string().min(2) }),
    execute: async ({ query }) => {
      const hits: string[] = [];
      for (const name of (await readdir(root)).sort()) {
        const lines = (await readFile(inside(root, name), 'utf8')).split('\n');
        lines.forEach((line, i) => {
          if (line.toLowerCase().includes(query.toLowerCase())) hits.push(`${name}:${i + 1}: ${line.trim()}`);
        });
      }
      return hits.length ? hits.join('\n') : `no line mentions "${query}"`;
    },
  });
  return [listNotes, readNote, searchNotes];
}

/**
 * What the scripted model does in the notes demo: list the notes; read the markdown ones it listed
 * and search for "open" in parallel; answer from what the tools returned. Each step reads the tool
 * results in the request, so when a tool fails (the notes folder is missing, say) the answer says so.
 */
export const notesDemoScenario: Scenario = {
  turns: [
    { content: 'Let me look at the notes first.', toolCalls: [{ name: 'list_notes', arguments: {} }] },
    (request) => {
      const [listing] = lastToolResults(request);
      const names = listing && !listing.failed ? listedNames(listing.content) : [];
      if (names.length === 0) return failureAnswer('list the notes', listing ? [listing] : []);
      return {
        toolCalls: [
          ...names
            .filter((n) => n.endsWith('.md'))
            .map((name) => ({ name: 'read_note', arguments: { name } })),
          { name: 'search_notes', arguments: { query: 'open' } },
        ],
      };
    },
    (request) => {
      const results = lastToolResults(request);
      if (results.some((r) => r.failed)) return failureAnswer('read the notes, so I cannot answer', results);
      return { chunkDelayMs: 15, content: notesAnswer(results) };
    },
  ],
};

/** The note names out of `list_notes`' result. */
function listedNames(content: string): string[] {
  try {
    const listed: unknown = JSON.parse(content);
    return Array.isArray(listed) ? listed.map((n) => String((n as { name?: unknown }).name ?? '')) : [];
  } catch {
    return [];
  }
}

/** The answer built from the notes as read: open points (from the search), decisions, the plan. */
function notesAnswer(results: readonly SeenToolResult[]): string {
  const read = results.filter((r) => r.name === 'read_note').map((r) => r.content.split('\n'));
  const hits = results.find((r) => r.name === 'search_notes')?.content ?? '';
  const open = [...hits.matchAll(/^(\S+):(\d+): - Open: (.*)$/gm)].map(
    ([, file, line, text]) => `${text} (${file}, line ${line})`,
  );
  const decided = read.flat().flatMap((l) => /^- Decided: (.*)$/.exec(l)?.slice(1) ?? []);
  const plan = read.flat().flatMap((l) => /^- (\d+\.\d+: .*)$/.exec(l)?.slice(1) ?? []);
  return [
    open.length > 0 ? `Still open: ${open.join(' ')}` : 'Nothing in the notes is marked open.',
    decided.length > 0 ? `Decided: ${decided.map(capitalized).join(' ')}` : 'No decision is written down.',
    plan.length > 0 ? `The release plan: ${plan.join(' ')}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The question the notes demo asks. */
export const notesDemoQuestion = 'Which decisions are still open in my notes?';
