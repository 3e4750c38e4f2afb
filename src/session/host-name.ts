import { hostname } from 'node:os';

let cached: string | undefined;

/**
 * This machine's host name, as leases and inbox claims record it next to the process id. Read once
 * per process: `os.hostname()` is a system call (8-18 µs on a small VM), and a lease is taken at
 * every turn of a session.
 */
export function hostName(): string {
  cached ??= hostname();
  return cached;
}
