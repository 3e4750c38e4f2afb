import { createHash } from 'node:crypto';
import { constants, type FSWatcher, watch } from 'node:fs';
import { lutimes, open, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { InboxInput, InboxItem } from '../session-inbox.js';
import { corruptFileError } from '../session-store.js';
import { createFileExclusive, fsyncDir, mkdirDurable } from './durable-write.js';
import { openNoFollow, refuseLink } from './no-follow.js';
import { isMissing, readIfExists } from './read-if-exists.js';

/** A session's inbox folder, beside its snapshot. */
export const INBOX_DIR = 'inbox';
/** The store-wide folder of "this session has open items" markers (what workers scan and watch). */
export const PENDING_DIR = '.inbox-pending';

const ITEM = /^([1-9]\d{0,14})\.json$/;
const DONE = /^([1-9]\d{0,14})\.done$/;

/**
 * The file store's inboxes (see docs/scale-out.md), for processes on one machine:
 * `<session>/inbox/<seq>.json` per item, created exclusively (a hard link of a flushed temp file), so
 * two posts never get one seq and no reader sees half an item; `<seq>.done` once completed. An answer
 * to an approval counts only when `approval-<hash of the call id>` (created exclusively as well) names
 * its seq: of two answers posted at once, one wins and the other is refused. `.inbox-pending/<session>`
 * marks sessions with open items for workers to claim and watch.
 */
export class FileInbox {
  readonly #root: string;
  readonly #fsync: boolean;
  /** Files found malformed, with their size and time, so that a worker reports each once. */
  readonly #reported = new Map<string, string>();

  constructor(root: string, fsync: boolean) {
    this.#root = root;
    this.#fsync = fsync;
  }

  async post(id: string, input: InboxInput, at: Date): Promise<InboxItem | undefined> {
    const dir = this.#dir(id);
    this.#refuseLinks(id);
    await mkdirDurable(dir, this.#fsync);
    let seq = (await this.#highestSeq(dir)) + 1;
    const body = (n: number): InboxItem => ({ ...structuredClone(input), seq: n, at: at.toISOString() });
    while (
      !(await createFileExclusive(path.join(dir, `${seq}.json`), JSON.stringify(body(seq)), this.#fsync))
    )
      seq++;
    if (input.kind === 'approval') {
      const marker = approvalMarker(dir, input.toolCallId);
      // The item is posted but counts only if it is the first answer to name the call.
      if (!(await createFileExclusive(marker, String(seq), this.#fsync))) {
        await this.#markDone(dir, seq);
        return undefined;
      }
    }
    await this.#markPending(id);
    return body(seq);
  }

  /**
   * The open items in seq order. Throws `corrupt` naming the file for an item or marker that is not
   * what this store writes (hand-edited, truncated by a full disk).
   */
  async read(id: string): Promise<InboxItem[]> {
    const dir = this.#dir(id);
    const { items, done } = await scan(dir);
    const open = items.filter((seq) => !done.has(seq)).sort((a, b) => a - b);
    const read = await Promise.all(open.map((seq) => this.#readItem(id, dir, seq)));
    return read.filter((item) => item !== undefined);
  }

  /** Marks items done (the store checks the lease first), then clears the session's pending marker if nothing is open. */
  async complete(id: string, seqs: readonly number[]): Promise<void> {
    const dir = this.#dir(id);
    this.#refuseLinks(id);
    const { items } = await scan(dir);
    const known = new Set(items);
    for (const seq of seqs) if (known.has(seq)) await this.#markDone(dir, seq, false);
    if (this.#fsync && seqs.length > 0) await fsyncDir(dir);
    await this.settlePending(id);
  }

  /**
   * Removes the session's pending marker, then puts it back if items are open: a post that lands
   * meanwhile writes its item before its marker, so either this read sees the item or the marker stays.
   */
  async settlePending(id: string): Promise<void> {
    await rm(path.join(this.#root, PENDING_DIR, id), { force: true });
    // A malformed item keeps the marker: the worker reports it.
    const open = await this.read(id).then(
      (items) => items.length > 0,
      () => true,
    );
    if (open) await this.#markPending(id);
  }

  /** Sessions marked as having open items (in marker age order: older first). */
  async pendingSessions(): Promise<string[]> {
    const dir = path.join(this.#root, PENDING_DIR);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const aged = await Promise.all(
      names.map(async (name) => ({
        name,
        at: (await stat(path.join(dir, name)).catch(() => undefined))?.mtimeMs,
      })),
    );
    return aged
      .filter((e) => e.at !== undefined)
      .sort((a, b) => (a.at ?? 0) - (b.at ?? 0))
      .map((e) => e.name);
  }

  /**
   * Whether a worker should take the session: it has open items, or a malformed file not reported yet
   * (so that the worker's error report names it once, rather than on every poll).
   */
  async hasWork(id: string): Promise<boolean> {
    try {
      return (await this.read(id)).length > 0;
    } catch (error) {
      const file = (error as { file?: unknown }).file;
      if (typeof file !== 'string') throw error;
      const seen = await stat(file).then(
        (s) => `${s.size}:${s.mtimeMs}`,
        () => 'gone',
      );
      if (this.#reported.get(file) === seen) return false;
      this.#reported.set(file, seen);
      return true;
    }
  }

  /** Calls `listener` when a session gets open items (fs.watch on the pending folder); workers poll as well. */
  async watch(listener: () => void): Promise<() => void> {
    const dir = path.join(this.#root, PENDING_DIR);
    await mkdirDurable(dir, this.#fsync);
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, () => listener());
    } catch {
      return () => {};
    }
    // A watch that breaks only ends the wakeups: the worker polls.
    watcher.on('error', () => watcher.close());
    return () => watcher.close();
  }

  #dir(id: string): string {
    return path.join(this.#root, id, INBOX_DIR);
  }

  /** Refuses a session folder or inbox folder that is a symbolic link before anything is written in it. */
  #refuseLinks(id: string): void {
    refuseLink(path.join(this.#root, id), id);
    refuseLink(this.#dir(id), id);
  }

  async #markPending(id: string): Promise<void> {
    const dir = path.join(this.#root, PENDING_DIR);
    await mkdirDurable(dir, this.#fsync);
    const marker = path.join(dir, id);
    try {
      await (await open(marker, 'wx')).close();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A marker that was there already is touched, so that watchers hear of the new item too.
      const now = new Date();
      await lutimes(marker, now, now).catch(() => {});
      return;
    }
    // Durable, or a power loss could leave open items that no worker looks for.
    if (this.#fsync) await fsyncDir(dir);
  }

  async #markDone(dir: string, seq: number, fsync = this.#fsync): Promise<void> {
    // Never through a link: a dangling one would create the file it names.
    const done = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND;
    await (await openNoFollow(path.join(dir, `${seq}.done`), done)).close();
    if (fsync) await fsyncDir(dir);
  }

  async #highestSeq(dir: string): Promise<number> {
    const { items } = await scan(dir);
    return items.reduce((max, seq) => Math.max(max, seq), 0);
  }

  async #readItem(id: string, dir: string, seq: number): Promise<InboxItem | undefined> {
    const file = path.join(dir, `${seq}.json`);
    const text = await readIfExists(file, 'utf8');
    if (text === undefined) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw corruptFileError(id, file, `not JSON: ${(error as Error).message}`);
    }
    const problem = inputProblem(value);
    if (problem) throw corruptFileError(id, file, `not an inbox item: ${problem}`);
    const item = { ...(value as InboxItem), seq };
    if (item.kind !== 'approval') return item;
    const marker = approvalMarker(dir, item.toolCallId);
    const winner = await readIfExists(marker, 'utf8');
    if (winner === undefined) return undefined;
    if (!/^\d{1,15}$/.test(winner)) throw corruptFileError(id, marker, 'not the seq of an answer');
    // Another answer to the same call came first: this one was refused at its post.
    return Number(winner) === seq ? item : undefined;
  }
}

/** The item and done seqs in an inbox folder (none when it does not exist). */
async function scan(dir: string): Promise<{ items: number[]; done: Set<number> }> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isMissing(error)) return { items: [], done: new Set() };
    throw error;
  }
  const items: number[] = [];
  const done = new Set<number>();
  for (const name of names) {
    const item = ITEM.exec(name);
    if (item) items.push(Number(item[1]));
    const finished = DONE.exec(name);
    if (finished) done.add(Number(finished[1]));
  }
  return { items, done };
}

/** The marker file of the answer to one approval (the call id hashed: any string makes a safe name). */
function approvalMarker(dir: string, toolCallId: string): string {
  return path.join(dir, `approval-${createHash('sha256').update(toolCallId).digest('hex').slice(0, 32)}`);
}

/** What is wrong with a stored inbox item, or undefined when it is one. */
function inputProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const v = value as Record<string, unknown>;
  if (typeof v.at !== 'string') return '"at" is not a string';
  const optionalString = (key: string) => v[key] === undefined || typeof v[key] === 'string';
  switch (v.kind) {
    case 'message':
      return typeof v.text === 'string' ? undefined : '"text" is not a string';
    case 'approval':
      if (typeof v.toolCallId !== 'string') return '"toolCallId" is not a string';
      if (typeof v.approved !== 'boolean') return '"approved" is not a boolean';
      if (v.always !== undefined && typeof v.always !== 'boolean') return '"always" is not a boolean';
      return optionalString('reason') ? undefined : '"reason" is not a string';
    case 'interrupt':
      return optionalString('reason') ? undefined : '"reason" is not a string';
    case 'event':
      return typeof v.event === 'string' ? undefined : '"event" is not a string';
    default:
      return `"kind" is ${JSON.stringify(v.kind) ?? 'missing'} (message, approval, interrupt or event)`;
  }
}
