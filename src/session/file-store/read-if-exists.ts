import { readFile } from 'node:fs/promises';

/** Whether a file-system error means the path (or a folder on it) does not exist. */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The file's contents, or undefined when it does not exist; other errors are thrown. */
export function readIfExists(file: string): Promise<Buffer | undefined>;
export function readIfExists(file: string, encoding: 'utf8'): Promise<string | undefined>;
export async function readIfExists(file: string, encoding?: 'utf8'): Promise<Buffer | string | undefined> {
  try {
    return encoding ? await readFile(file, encoding) : await readFile(file);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}
