import { defineConfig } from 'vitest/config';

/**
 * Test files that run each in a fresh module graph and process (the "isolated" project), with why.
 * Every other file runs in the "shared" project: files one after another in a worker that keeps its
 * modules, so `src/` and the libraries are imported once per worker instead of once per file (most
 * of the suite's time was imports). A file belongs here when it changes something process-wide that
 * would outlive it or that another file's leftovers could change: environment variables, stubs and
 * spies, global OpenTelemetry state, process listeners, the DBOS singleton, process-wide counters.
 * test/test-projects.test.ts checks the shared files for those (docs/testing.md, "Two projects").
 */
export const isolatedFiles: Record<string, string> = {
  'test/bundle-definition.test.ts': 'vi.stubEnv',
  'test/file-session-store.test.ts': 'vi.stubEnv',
  'test/openai-client.test.ts': 'vi.stubEnv',
  'test/long-arguments-stream.test.ts': 'vi.spyOn(JSON.parse)',
  'test/stream-call-assembly.test.ts': 'vi.spyOn(JSON.parse)',
  'test/redaction.test.ts': 'sets process.env.OPENAI_API_KEY',
  'test/mcp-config.test.ts': 'sets process.env.AGENTLOOP_TEST_NODE',
  'test/mcp-oauth-cli.test.ts': 'sets process.env.AGENTLOOP_NO_BROWSER',
  'test/cli-engines.test.ts': 'sets process.env.RESTATE_LOGGING',
  'test/restate-agent.test.ts': 'sets process.env.RESTATE_LOGGING',
  'test/restate-unreachable.test.ts': 'sets process.env.RESTATE_LOGGING',
  'test/restate-crash.test.ts': 'sets process.env.RESTATE_LOGGING, replaces console.info and console.debug',
  'test/restate-turn-work.test.ts': 'sets process.env.RESTATE_LOGGING',
  'test/restate-behind-proxy.test.ts': 'sets process.env.RESTATE_LOGGING',
  'test/dbos-agent.test.ts': 'DBOS is one per process (DBOS.launch)',
  'test/dbos-unreachable.test.ts': 'DBOS is one per process (DBOS.launch)',
  'test/dbos-crash.test.ts': 'DBOS in the test process and its children',
  'test/otel-spans.test.ts': "sets OpenTelemetry's global context manager (inMemoryTracing)",
  'test/otel-trace-parent.test.ts': "sets OpenTelemetry's global context manager (inMemoryTracing)",
  'test/otel-worker.test.ts': "sets OpenTelemetry's global context manager (inMemoryTracing)",
  'test/otel-two-processes.test.ts': "sets OpenTelemetry's global context manager",
  'test/agent-effects.test.ts':
    "process 'unhandledRejection' listeners (watchCrashes): another file's leftovers would count",
  'test/fault-matrix.test.ts':
    "process 'unhandledRejection' listeners (watchCrashes): another file's leftovers would count",
  'test/session-disk-full.test.ts':
    "process 'unhandledRejection' listeners (watchCrashes): another file's leftovers would count",
  'test/session-snapshot-validation.test.ts':
    "process 'unhandledRejection' listeners (watchCrashes): another file's leftovers would count",
  'test/model-call-work.test.ts': "process-wide work counters: another file's leftover work would count",
  'test/start-up-work.test.ts': "process-wide work counters: another file's leftover work would count",
  'test/durable-model-record.test.ts': 'process-wide work counters (the request hash)',
  'test/mcp-ask-work.test.ts': "process-wide work counters: another file's leftover work would count",
  'test/event-bus-hears.test.ts':
    "vi.spyOn(EventEmitter.prototype.listenerCount): another file's buses would count",
  'test/tool-context.test.ts': 'replaces globalThis.AbortController to count the signals made',
};

const isolated = Object.keys(isolatedFiles);

export default defineConfig({
  test: {
    // One throwaway PostgreSQL cluster for the tests that need it (test/support/postgres-cluster.mjs),
    // shared by both projects.
    globalSetup: ['test/support/postgres-global-setup.ts'],
    // `rejects.toThrow(x)` fails on a rejection with `undefined` or `null` (test/support/strict-rejects.ts).
    setupFiles: ['test/support/strict-rejects.ts'],
    // Tests of the shared corpus (../shared/corpus) run apart: `npm run test:corpus` (vitest.corpus.config.ts).
    // `npm test` needs nothing beside the repository.
    exclude: ['test/corpus/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real HTTP servers, real processes and real browsers: keep parallelism modest on 2 cores.
    maxWorkers: 2,
    // The include lists are in the projects only: a project's arrays add to the root's.
    projects: [
      { extends: true, test: { name: 'isolated', include: isolated } },
      {
        extends: true,
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: isolated, isolate: false },
      },
    ],
  },
});
