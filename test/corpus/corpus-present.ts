import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the corpus tests look: `../shared/corpus/bmad` from the repository root. */
export const CORPUS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../shared/corpus/bmad',
);

/** vitest globalSetup of `npm run test:corpus`: one clear line when the corpus is not there. */
export default function corpusPresent(): void {
  if (!statSync(CORPUS_DIR, { throwIfNoEntry: false })?.isDirectory()) {
    throw new Error(
      `npm run test:corpus needs the shared corpus of real BMAD trees at ${CORPUS_DIR}, and it is missing. ` +
        '`npm test` runs without it.',
    );
  }
}
