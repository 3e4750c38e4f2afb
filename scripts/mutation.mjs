#!/usr/bin/env node
// `npm run mutation -- src/tools src/bundle/sandbox/`: Stryker on the given files or folders under
// src/ (a folder means every .ts file in it, recursively). Extra `--flags` go to Stryker as they are.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';

const args = process.argv.slice(2);
const targets = args.filter((a) => !a.startsWith('--'));
const flags = args.filter((a) => a.startsWith('--'));
if (targets.length === 0) {
  console.error('usage: npm run mutation -- <files or folders under src/> [--stryker-flags]');
  process.exit(2);
}
const globs = targets.map((target) => {
  const isFolder = statSync(target, { throwIfNoEntry: false })?.isDirectory();
  return isFolder ? `${target.replace(/\/$/, '')}/**/*.ts` : target;
});
const stryker = spawnSync(
  'npx',
  ['stryker', 'run', 'stryker.config.mjs', '--mutate', globs.join(','), ...flags],
  {
    stdio: 'inherit',
  },
);
process.exit(stryker.status ?? 1);
