import { constants, lstatSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { SessionStoreError } from '../session-store-error.js';

// The file store never follows a symbolic link in a session's folder. A session folder can come with
// a cloned repository (`.agentloop/sessions/<id>/`): a record slot or `transcript.jsonl` shipped as a
// link would make the next save overwrite, or the next append grow, any file the user can write. Files
// are opened with O_NOFOLLOW (where the platform has none, a link is looked for first), folders are
// checked before anything is written in them, and a link found is refused with an error naming it.
// Files replaced by a rename (the lease, the auth store) replace a link and need nothing more.

/** O_NOFOLLOW where the platform has it, else 0 (Windows: {@link openNoFollow} then checks first). */
export const NO_FOLLOW: number = constants.O_NOFOLLOW ?? 0;

/** The error for a link where a session's file or folder should be: `corrupt`, naming it. */
export function linkRefusedError(file: string, sessionId?: string): SessionStoreError {
  return new SessionStoreError(
    'corrupt',
    `${file} is a symbolic link: agentloop never reads or writes a session's files through a link ` +
      '(one that came with a cloned repository could aim at any file). It was left as it is; remove it.',
    sessionId === undefined ? { file } : { sessionId, file },
  );
}

/** Whether an open with O_NOFOLLOW failed because the path is a link (ELOOP; EMLINK on FreeBSD). */
function isLinkRefusal(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ELOOP' || code === 'EMLINK';
}

/** Throws {@link linkRefusedError} when `file` is a symbolic link (nothing when it does not exist). */
export function refuseLink(file: string, sessionId?: string): void {
  if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) throw linkRefusedError(file, sessionId);
}

/** `openSync(file, flags | O_NOFOLLOW, 0o666)`; a link is refused naming the file. */
export function openNoFollowSync(file: string, flags: number): number {
  if (NO_FOLLOW === 0) refuseLink(file);
  try {
    return openSync(file, flags | NO_FOLLOW, 0o666);
  } catch (error) {
    throw isLinkRefusal(error) ? linkRefusedError(file) : error;
  }
}

/** `fs.promises.open(file, flags | O_NOFOLLOW)`; a link is refused naming the file. */
export async function openNoFollow(file: string, flags: number) {
  if (NO_FOLLOW === 0) refuseLink(file);
  try {
    return await open(file, flags | NO_FOLLOW, 0o666);
  } catch (error) {
    throw isLinkRefusal(error) ? linkRefusedError(file) : error;
  }
}

/** Maps an O_NOFOLLOW open's refusal of a link to {@link linkRefusedError}; other errors as they are. */
export function linkRefusal(error: unknown, file: string): unknown {
  return isLinkRefusal(error) ? linkRefusedError(file) : error;
}
