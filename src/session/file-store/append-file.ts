import { closeSync, constants, fstatSync, lstatSync, type Stats } from 'node:fs';
import path from 'node:path';
import { DSYNC_WRITES, fdatasyncFd, fsyncDir, mkdirDurable, openFd, writeAll } from './durable-write.js';
import { linkRefusal, NO_FOLLOW, refuseLink } from './no-follow.js';

/** The file an {@link AppendFile} has open, and which file that is (to notice when the path is replaced). */
interface Opened {
  fd: number;
  dev: number;
  ino: number;
  /** The file did not exist before this open: its folder entry is flushed after the first write. */
  created: boolean;
}

/** Closes the descriptor of an {@link AppendFile} dropped while open (a store let go without releasing its sessions). */
const dropped = new FinalizationRegistry<{ fd: number | undefined }>((box) => {
  try {
    if (box.fd !== undefined) closeSync(box.fd);
  } catch {
    // Already closed: nothing to free.
  }
});

/**
 * One append-only file kept open between writes (`O_APPEND`, and with `fsync` `O_DSYNC`, so a write is
 * on disk when it returns: `fdatasync`'s guarantee in one trip through libuv's thread pool instead of
 * open, write, flush and close). Before each use it checks, with a `stat` (microseconds, done in
 * place), that the path still names the open file; when the file was removed or replaced it is opened
 * again by name, as a write by name would. Calls must not overlap (the store queues them).
 */
export class AppendFile {
  /** The file. */
  readonly file: string;
  readonly #fsync: boolean;
  #opened: Opened | undefined;
  /** The file's size after this object's last write (or at its open); undefined when not known. */
  #size: number | undefined;
  /** The open descriptor, for {@link dropped}. */
  readonly #box: { fd: number | undefined } = { fd: undefined };

  constructor(file: string, fsync: boolean) {
    this.file = file;
    this.#fsync = fsync;
    dropped.register(this, this.#box);
  }

  /**
   * Whether the file changed under this object since its last write: the path names another file
   * (removed or replaced), or the file's size is not the one it left (another process appended).
   * The same `stat` as before, its size compared too. False when nothing is known yet.
   */
  replaced(): boolean {
    const opened = this.#opened;
    if (!opened && this.#size === undefined) return false;
    const now = lstatSync(this.file, { throwIfNoEntry: false });
    if (now && (!opened || sameFile(now, opened)) && now.size === this.#size) return false;
    this.close();
    this.#size = undefined;
    return true;
  }

  /** Appends `text` and, with `fsync`, makes it durable (the folder too when this created the file). */
  async append(text: string): Promise<void> {
    const opened = this.#opened ?? (await this.#open());
    try {
      await writeAll(opened.fd, text);
      this.#size = (this.#size ?? 0) + Buffer.byteLength(text);
      if (this.#fsync && DSYNC_WRITES === 0) await fdatasyncFd(opened.fd);
      if (this.#fsync && opened.created) await fsyncDir(path.dirname(this.file));
      opened.created = false;
    } catch (error) {
      // The file may end in part of `text`; the next append opens it again after its owner reread it.
      this.close();
      this.#size = undefined;
      throw error;
    }
  }

  /** Closes the file (the next append opens it again). */
  close(): void {
    const opened = this.#opened;
    this.#opened = undefined;
    this.#box.fd = undefined;
    if (opened) closeSync(opened.fd);
  }

  async #open(): Promise<Opened> {
    refuseLink(path.dirname(this.file)); // its folder too: a linked one would take the appends elsewhere
    await mkdirDurable(path.dirname(this.file), this.#fsync);
    const existed = lstatSync(this.file, { throwIfNoEntry: false }) !== undefined;
    // Never through a link: appends would grow the file it aims at.
    if (NO_FOLLOW === 0) refuseLink(this.file);
    const flags =
      constants.O_WRONLY |
      constants.O_APPEND |
      constants.O_CREAT |
      NO_FOLLOW |
      (this.#fsync ? DSYNC_WRITES : 0);
    const fd = await openFd(this.file, flags).catch((error: unknown) => {
      throw linkRefusal(error, this.file);
    });
    const { dev, ino, size } = fstatSync(fd);
    this.#size = size;
    this.#opened = { fd, dev, ino, created: !existed };
    this.#box.fd = fd;
    return this.#opened;
  }
}

function sameFile(a: Stats, b: Pick<Opened, 'dev' | 'ino'>): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
