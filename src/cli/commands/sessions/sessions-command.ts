import path from 'node:path';
import pc from 'picocolors';
import { createRedactor } from '../../../events/redact.js';
import { FileSessionStore } from '../../../session/file-store/file-session-store.js';
import type { SessionListEntry } from '../../../session/session-store.js';
import type { Colors } from '../../chat/chat-renderer.js';
import { parseFlags } from '../../cli-args.js';
import type { CommandIo } from '../../command-io.js';
import { formatCostUsd } from '../../terminal/cost-text.js';
import { terminalSafe, terminalSafeJson } from '../../terminal/terminal-safe.js';
import { runSessionsExportCommand } from './sessions-export-command.js';

const USAGE = `Usage: agentloop sessions [--project <dir>] [--sessions-dir <dir>] [--json]
  Lists saved chat sessions, newest first (from <project>/.agentloop/sessions, $AGENTLOOP_HOME/sessions
  or --sessions-dir). Continue one with: agentloop chat --resume <id>
       agentloop sessions export <id> --format trajectory [--out <file>]
  Writes a session's conversation as OpenAI messages (agentloop sessions export --help).
`;

/** `agentloop sessions`: the saved sessions, newest first; unreadable ones are listed with the reason. */
export async function runSessionsCommand(args: string[], io: CommandIo): Promise<number> {
  if (args[0] === 'export') return runSessionsExportCommand(args.slice(1), io);
  const { values } = parseFlags({
    args,
    options: {
      project: { type: 'string' },
      'sessions-dir': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const store = new FileSessionStore({
    projectRoot: path.resolve(values.project ?? process.cwd()),
    ...(values['sessions-dir'] ? { dir: values['sessions-dir'] } : {}),
  });
  // Titles are what users typed and agents are named by bundles: printed redacted (OPENAI_API_KEY and
  // the sk-/Bearer patterns; no agent, so no other key is known here) and terminal-safe.
  const rows = createRedactor().redactValue(await store.list());
  if (values.json) {
    io.stdout(`${terminalSafeJson(rows)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    io.stdout(`No sessions in ${store.dir}\n`);
    return 0;
  }
  io.stdout(`${formatSessionList(rows, pc)}\n`);
  return rows.some((r) => r.error !== undefined) ? 1 : 0;
}

/**
 * A table of sessions: id, state, last saved, agent, turns, tokens and cost (`unknown` for a model
 * without a price), title; `current` marked with `*`. Every
 * cell is printed terminal-safe (a title may hold anything a user pasted).
 */
export function formatSessionList(rows: SessionListEntry[], c: Colors, current?: string): string {
  if (rows.length === 0) return '';
  const header = ['', 'ID', 'STATE', 'SAVED', 'AGENT', 'TURNS', 'TOKENS', 'COST', 'TITLE'];
  const raw = rows.map((row) =>
    row.error !== undefined
      ? [row.id === current ? '*' : '', row.id, 'unreadable', when(row.updatedAt), '', '', '', '', row.error]
      : [
          row.id === current ? '*' : '',
          row.id,
          row.state,
          when(row.updatedAt),
          row.agentName ?? '',
          String(row.turns ?? 0),
          row.usage ? String(row.usage.totalTokens) : '',
          row.usage ? formatCostUsd(row.usage.costUsd) : '',
          row.title ?? '',
        ],
  );
  const table = raw.map((row) => row.map(terminalSafe));
  const widths = header.map((h, i) =>
    Math.max(h.length, ...table.map((r) => (i === header.length - 1 ? 0 : r[i]!.length))),
  );
  const format = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    c.dim(format(header)),
    ...table.map((cells, i) => (rows[i]!.error !== undefined ? c.red(format(cells)) : format(cells))),
  ].join('\n');
}

/** `2025-01-14 09:30` in local time. */
function when(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
