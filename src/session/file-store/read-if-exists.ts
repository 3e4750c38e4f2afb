import { constants } from 'node:fs';
import { openNoFollow } from './no-follow.js';

/** Whether a file-system error means the path (or a folder on it) does not exist. */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The file's contents, or undefined when it does not exist; other errors are thrown, and a symbolic
 * link is refused naming the file (a session's files are never read through one: no-follow.ts).
 */
export function readIfExists(file: string): Promise<Buffer | undefined>;
export function readIfExists(file: string, encoding: 'utf8'): Promise<string | undefined>;
export async function readIfExists(file: string, encoding?: 'utf8'): Promise<Buffer | string | undefined> {
  let handle: Awaited<ReturnType<typeof openNoFollow>>;
  try {
    handle = await openNoFollow(file, constants.O_RDONLY);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  try {
    return encoding ? await handle.readFile(encoding) : await handle.readFile();
  } finally {
    await handle.close();
  }
}
