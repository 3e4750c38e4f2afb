import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: this file sits in dist/cli/ (or src/cli/), two levels below it. */
export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
