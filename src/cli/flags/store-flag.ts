import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PostgresSessionStore } from '../../postgres/postgres-session-store.js';
import { FileSessionStore } from '../../session/file-store/file-session-store.js';
import type { InboxSessionStore } from '../../workers/session-client.js';
import { UsageError } from '../cli-args.js';

/** The `parseArgs` options of `--store` and `--schema`, shared by `worker` and `send`. */
export const STORE_FLAG_OPTIONS = {
  store: { type: 'string' },
  schema: { type: 'string' },
} as const;

export const STORE_USAGE = `  --store <url-or-dir>  where sessions and their inboxes are: postgres://user:pass@host:port/db
                        (or postgresql://; needs npm install pg) for workers on many machines, or a
                        folder (or file: URL) for processes on this machine
  --schema <name>       the PostgreSQL schema (default: agentloop)
`;

/** How long to wait for PostgreSQL to answer before saying it is unreachable. */
const CONNECT_TIMEOUT_MS = 10_000;

/** An opened `--store`: the store, a description safe to print (no password), and how to close it. */
export interface CliStore {
  store: InboxSessionStore & { close?(): Promise<void> };
  description: string;
  close(): Promise<void>;
}

/** A connection string with its password replaced by `***` (what the CLI prints of it). */
export function redactConnectionString(text: string): string {
  try {
    const url = new URL(text);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    // Not a URL: hide whatever sits between "user:" and "@".
    return text.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

/**
 * Opens what `--store` names: `postgres://` / `postgresql://` (migrated first, so an unreachable server
 * or a missing `pg` is one line here), or a folder / `file:` URL for a FileSessionStore. Errors never
 * show the password.
 */
export async function openCliStore(values: {
  store?: string | undefined;
  schema?: string | undefined;
}): Promise<CliStore> {
  const text = values.store?.trim();
  if (!text) throw new UsageError('missing --store <url-or-dir> (a postgres:// URL or a sessions folder)');
  if (/^postgres(ql)?:\/\//i.test(text)) return openPostgres(text, values.schema);
  if (values.schema !== undefined) throw new UsageError('--schema applies to a postgres:// --store only');
  if (/^[a-z][a-z0-9+.-]+:\/\//i.test(text) && !/^file:/i.test(text)) {
    throw new UsageError(
      `--store takes a postgres:// or postgresql:// URL, a folder or a file: URL; got "${redactConnectionString(text)}"`,
    );
  }
  let dir: string;
  try {
    dir = /^file:/i.test(text) ? fileURLToPath(text) : path.resolve(text);
  } catch (error) {
    throw new UsageError(`--store ${text}: ${(error as Error).message}`);
  }
  const found = await stat(dir).catch(() => undefined);
  if (found && !found.isDirectory()) throw new UsageError(`--store ${dir} is a file, not a sessions folder`);
  const store = new FileSessionStore({ dir });
  return { store, description: `sessions folder ${store.dir}`, close: async () => {} };
}

async function openPostgres(text: string, schema: string | undefined): Promise<CliStore> {
  const shown = redactConnectionString(text);
  try {
    new URL(text);
  } catch {
    throw new UsageError(`--store ${shown} is not a valid URL`);
  }
  if (schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new UsageError(`--schema "${schema}" is not a plain SQL name (letters, digits, _)`);
  }
  const store = new PostgresSessionStore(
    { connectionString: text, max: 4, connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
    schema ? { schema } : {},
  );
  try {
    await store.migrate();
  } catch (error) {
    await store.close().catch(() => {});
    const message = (error as Error).message || String(error);
    if (/npm install pg/.test(message)) throw new Error(`--store ${shown}: ${message}`);
    let detail = message.split(text).join(shown);
    const raw = new URL(text).password;
    let password = raw;
    try {
      password = decodeURIComponent(raw);
    } catch {}
    if (password.length >= 3) detail = detail.split(password).join('***');
    detail = detail.replace(/\s+/g, ' ').trim();
    throw new Error(`cannot use the database at ${shown}: ${detail || (error as { code?: string }).code}`);
  }
  return { store, description: `PostgreSQL ${shown}`, close: () => store.close() };
}

/** The options of a command that reads saved sessions: `--store` (and `--schema`), or the project's folder. */
export const SAVED_SESSIONS_FLAG_OPTIONS = {
  ...STORE_FLAG_OPTIONS,
  project: { type: 'string' },
  'sessions-dir': { type: 'string' },
} as const;

export const SAVED_SESSIONS_USAGE = `  --store <url-or-dir>  the store: a postgres:// URL (--schema <name>, default agentloop) or a sessions
                        folder; default: <project>/.agentloop/sessions ($AGENTLOOP_HOME/sessions)
  --project <dir> --sessions-dir <dir>
                        without --store: the project (default: the current folder) or its sessions folder
`;

/** The store `--store` names, or else the project's sessions folder (as `chat` and `sessions` use). */
export async function openSavedSessions(values: {
  store?: string | undefined;
  schema?: string | undefined;
  project?: string | undefined;
  'sessions-dir'?: string | undefined;
}): Promise<CliStore> {
  if (values.store !== undefined) {
    if (values.project !== undefined || values['sessions-dir'] !== undefined)
      throw new UsageError('give --store or --project/--sessions-dir, not both');
    return openCliStore(values);
  }
  if (values.schema !== undefined) throw new UsageError('--schema applies to a postgres:// --store only');
  const store = new FileSessionStore({
    projectRoot: path.resolve(values.project ?? process.cwd()),
    ...(values['sessions-dir'] ? { dir: values['sessions-dir'] } : {}),
  });
  return { store, description: `sessions folder ${store.dir}`, close: async () => {} };
}
