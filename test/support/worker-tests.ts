import { afterAll } from 'vitest';
import type { ScriptedServer } from '../../src/testing/index.js';
import type { Worker } from '../../src/workers/session-worker.js';

/**
 * What a file of worker tests starts, closed after its tests (registered at the call): the workers
 * it pushes are stopped first, then its scripted servers closed, then its cleanup steps run in order
 * (PostgreSQL schemas dropped, folders removed).
 */
export function closedAfterWorkerTests(): {
  servers: ScriptedServer[];
  workers: Worker[];
  cleanups: (() => Promise<void>)[];
} {
  const servers: ScriptedServer[] = [];
  const workers: Worker[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(servers.map((s) => s.close()));
    for (const step of cleanups) await step();
  });
  return { servers, workers, cleanups };
}
