import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Scenario } from '../testing/scenario.js';
import { defineTool, type Tool } from '../tools/define-tool.js';

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

/** What the scripted model does in the notes demo: list, read two notes in parallel, search, answer. */
export const notesDemoScenario: Scenario = {
  turns: [
    { content: 'Let me look at the notes first.', toolCalls: [{ name: 'list_notes', arguments: {} }] },
    {
      toolCalls: [
        { name: 'read_note', arguments: { name: 'meeting-2026-11-02.md' } },
        { name: 'read_note', arguments: { name: 'release-plan.md' } },
        { name: 'search_notes', arguments: { query: 'timeout' } },
      ],
    },
    {
      chunkDelayMs: 15,
      content:
        'Open decisions: the meeting on 2 November left the default tool timeout open (Ana suggests 60 seconds). ' +
        'Everything else in the notes is decided: parallel tools with results in call order, and approvals that ' +
        'hold only the calls that need them. The release plan puts bundles in 0.2 and durable sessions in 0.3.',
    },
  ],
};

/** The question the notes demo asks. */
export const notesDemoQuestion = 'Which decisions are still open in my notes?';
