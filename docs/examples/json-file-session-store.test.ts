import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeSessionStoreConformance } from 'agentloop/testing/stores';
import { afterEach, beforeEach, describe, it } from 'vitest';
import { JsonFileSessionStore } from './json-file-session-store.js';

// The example store through agentloop's conformance kit (docs/store-conformance.md).
describeSessionStoreConformance(
  { describe, it, beforeEach, afterEach },
  {
    name: 'JsonFileSessionStore',
    create: async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'json-store-'));
      return new JsonFileSessionStore(path.join(dir, 'sessions.json'));
    },
    // What a process started after a crash opens: the same file.
    reopen: (store) => new JsonFileSessionStore((store as JsonFileSessionStore).file),
    dispose: (store) =>
      rm(path.dirname((store as JsonFileSessionStore).file), { recursive: true, force: true }),
  },
);
