import { afterEach } from 'vitest';
import { FileSessionStore } from '../../src/index.js';
import type { Scenario, ScriptedServer } from '../../src/testing/index.js';
import { serve, testDir } from './harness.js';

// What the protocol servers of a test (A2A, AG-UI) stand on: a scripted model and a file store in a
// temp folder (closed and removed by harness.ts after each test), and the servers, closed first.

const servers: { close(): Promise<void> }[] = [];

// Registered after harness.ts's (imported above), so it runs before it: servers close before their
// model and folder go.
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * A scripted model for `scenario`, a file store in `dir` (a new temp folder `<prefix>…` when none is
 * given), and the server options they make: the agent "You help.", the store, the model.
 */
export async function serverBase(scenario: Scenario, prefix: string, dir?: string) {
  const model: ScriptedServer = await serve(scenario);
  const folder = dir ?? (await testDir(prefix));
  const store = new FileSessionStore({ dir: folder });
  const options = {
    agent: () => ({ instructions: 'You help.', loopControlTools: false }),
    store,
    runtime: { baseURL: model.url, apiKey: 'test-key' },
  };
  return { model, store, dir: folder, options };
}

/** Closes `server` after the test (before its model and folder); returns it. */
export function closedAfterTest<S extends { close(): Promise<void> }>(server: S): S {
  servers.push(server);
  return server;
}
