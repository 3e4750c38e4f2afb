import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { resolveSessionsDir, type SessionsDirOptions } from '../sessions-dir.js';

/** What is kept for one server URL: its tokens, its client registration, what discovery found. */
export interface McpAuthRecord {
  /** The server URL this record is for (the file name is its hash). */
  url: string;
  /** As the authorization server sent them, plus `expires_at` (ms since the epoch) when they expire. */
  tokens?: Record<string, unknown> & { access_token: string; refresh_token?: string; expires_at?: number };
  /** The client registration (dynamic, or a client ID metadata document's URL). */
  client?: Record<string, unknown> & { client_id: string };
  /** Written by earlier versions (what discovery found); ignored: discovery is kept in memory only. */
  discovery?: Record<string, unknown>;
}

/** The `auth/` folder beside the sessions folder that `options` select (`.agentloop/auth`, `$AGENTLOOP_HOME/auth`). */
export function defaultAuthDir(options: SessionsDirOptions = {}): string {
  return path.join(path.dirname(resolveSessionsDir(options)), 'auth');
}

/**
 * Tokens and client registrations by server URL, one JSON file each in `dir` (mode 0600, the folder
 * 0700), written to a temp file created 0600 and flushed, then renamed over the old one (the folder flushed after), so a reader
 * sees the old record or the new, and no other user can read either. The writer lives here rather
 * than reusing `session/file-store/durable-write.ts`: `mcp/` sits below `session/`, and a secret file must be
 * 0600 from its first byte, which that writer (made for transcripts) does not do.
 */
export class McpAuthStore {
  /** Updates of one file, one after the other (a read-change-write each). */
  readonly #queue = new Map<string, Promise<unknown>>();

  constructor(readonly dir: string) {}

  /** The file of a server URL. */
  fileOf(url: string): string {
    return path.join(this.dir, `${createHash('sha256').update(url).digest('hex').slice(0, 32)}.json`);
  }

  /** The record of `url`, or undefined (none yet, or unreadable: it is then written afresh). */
  async read(url: string): Promise<McpAuthRecord | undefined> {
    const text = await readFile(this.fileOf(url), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      const record = JSON.parse(text) as McpAuthRecord;
      return typeof record === 'object' && record !== null && record.url === url ? record : undefined;
    } catch {
      return undefined;
    }
  }

  /** Changes the record of `url` (created if missing) and writes it. */
  update(url: string, change: (record: McpAuthRecord) => McpAuthRecord): Promise<void> {
    const file = this.fileOf(url);
    const next = (this.#queue.get(file) ?? Promise.resolve())
      .catch(() => {})
      .then(async () => {
        const record = change((await this.read(url)) ?? { url });
        await this.#write(file, `${JSON.stringify({ ...record, url }, null, 2)}\n`);
      });
    this.#queue.set(file, next);
    return next;
  }

  /** Forgets everything kept for `url`; true if something was. */
  async remove(url: string): Promise<boolean> {
    const file = this.fileOf(url);
    const existed = (await this.read(url)) !== undefined;
    await rm(file, { force: true });
    return existed;
  }

  async #write(file: string, data: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700).catch(() => {});
    const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => {});
      await rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    try {
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    // The rename made durable too, where the platform can open a folder.
    const folder = await open(this.dir, 'r').catch(() => undefined);
    await folder?.sync().catch(() => {});
    await folder?.close();
  }
}
