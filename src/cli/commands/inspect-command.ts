import { startInspectorServer } from '../../inspector/inspector-server.js';
import { createSanitizer, defaultSecrets } from '../../inspector/sanitize.js';
import { savedSessionView } from '../../inspector/saved-sessions.js';
import { FileSessionStore } from '../../session/file-store/file-session-store.js';
import { parseFlags, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { inspectorPort } from '../flags/inspector-flags.js';
import { untilInterrupted } from '../until-interrupted.js';

const USAGE = `Usage: agentloop inspect [options]
  Serves the inspector page for the sessions saved on disk (new saves appear as they land). A saved
  session's transcript offers "Fork here" at its rest points: the fork is saved beside it.
  Open the address it prints: it carries the page's token (new at each start; without it: 401).
  --dir <dir>               the sessions folder (default: $AGENTLOOP_HOME/sessions or ./.agentloop/sessions)
  --project <dir>           use <dir>/.agentloop/sessions
  --inspector-port <port>   port on 127.0.0.1 (default 4777; 0: any free port)
  --poll <ms>               how often the folder is checked for new saves (default 2000; 0: never)
`;

/** `agentloop inspect`: the inspector page over saved sessions, until Ctrl-C (or `signal`). */
export async function runInspectCommand(
  args: string[],
  io: CommandIo,
  signal?: AbortSignal,
): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      dir: { type: 'string' },
      project: { type: 'string' },
      'inspector-port': { type: 'string', default: '4777' },
      poll: { type: 'string', default: '2000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const port = inspectorPort(values) ?? 4777;
  const pollMs = Number(values.poll);
  if (!Number.isFinite(pollMs) || pollMs < 0) {
    throw new UsageError(`--poll needs a number of milliseconds (0 or more), got "${values.poll}"`);
  }
  const store = new FileSessionStore({
    ...(values.dir ? { dir: values.dir } : {}),
    ...(values.project ? { projectRoot: values.project } : {}),
    fsync: false,
  });
  const sanitize = createSanitizer({ secrets: defaultSecrets(), maxStringChars: 8000 });
  // Forks are written as any save is (durably); reading for the page needs no fsync.
  const forkStore = new FileSessionStore({ dir: store.dir });
  const server = await startInspectorServer({ port, store: forkStore });
  const seen = new Map<string, string>();
  const refresh = async () => {
    for (const row of await store.list()) {
      if (row.error !== undefined) {
        if (!seen.has(row.id)) io.stderr(`skipped session ${row.id}: ${row.error}\n`);
        seen.set(row.id, 'error');
        continue;
      }
      if (seen.get(row.id) === row.updatedAt) continue;
      seen.set(row.id, row.updatedAt);
      try {
        const record = await store.load(row.id);
        if (record) server.showSaved(await savedSessionView(store, record, sanitize));
      } catch (error) {
        io.stderr(`skipped session ${row.id}: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  };
  try {
    await refresh();
    io.stdout(
      `${seen.size} saved session(s) in ${store.dir}\ninspector: ${server.url}\npress Ctrl-C to exit\n`,
    );
    const timer = pollMs > 0 ? setInterval(() => void refresh().catch(() => {}), pollMs) : undefined;
    await untilInterrupted(signal);
    if (timer) clearInterval(timer);
    return 0;
  } finally {
    await server.close();
  }
}
