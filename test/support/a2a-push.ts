import { createServer, type Server } from 'node:http';
import { afterAll, afterEach } from 'vitest';
import { FileSessionStore, type SessionStore } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/postgres/postgres-session-store.js';
import { dropSchema, freshSchema, postgresStore, postgresUrl } from './postgres.js';

// What the tests of A2A push configs set on a server that does not carry the session stand on: a
// listener for the notifications, stores that note their appends, and the two places two servers
// share (a sessions folder, a PostgreSQL schema).

/** The server option that turns push notifications on for listeners on 127.0.0.1. */
export const push = { allowedHosts: ['127.0.0.1'] };

/** A push config of task `taskId` posting to `url`, as the SDK's client sends it. */
export const config = (taskId: string, url: string) => ({
  tenant: '',
  taskId,
  id: '',
  url,
  token: 'tok',
  authentication: undefined,
});

const hooks: Server[] = [];
afterEach(async () => {
  await Promise.all(hooks.splice(0).map((h) => new Promise((resolve) => h.close(resolve))));
});

/** A listener on 127.0.0.1 noting the bodies posted to it (closed after the test); its URL. */
export async function hook(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      bodies.push(body);
      res.end();
    });
  });
  hooks.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, bodies };
}

/** A file store that notes the sessions it appends to and the leases it takes. */
export class NotingStore extends FileSessionStore {
  readonly appendedTo: string[] = [];
  readonly leased: string[] = [];
  override appendTranscript(...args: Parameters<FileSessionStore['appendTranscript']>) {
    this.appendedTo.push(args[0]);
    return super.appendTranscript(...args);
  }
  override acquireLease(...args: Parameters<FileSessionStore['acquireLease']>) {
    this.leased.push(args[0]);
    return super.acquireLease(...args);
  }
}

/** A PostgreSQL store that notes the sessions it appends to. */
class NotingPostgresStore extends PostgresSessionStore {
  readonly appendedTo: string[] = [];
  override appendTranscript(...args: Parameters<PostgresSessionStore['appendTranscript']>) {
    this.appendedTo.push(args[0]);
    return super.appendTranscript(...args);
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanups) await step();
});

/**
 * Two stores on one place, by name: the carrier's (none: the server makes its own file store on the
 * folder), and the setter's, noting its appends. The PostgreSQL schema is dropped after the file's tests.
 */
export const storePairs: [
  string,
  (dir: string) => { carrier?: SessionStore; setter: SessionStore & { appendedTo: string[] } },
][] = [
  ['a file store', (dir) => ({ setter: new NotingStore({ dir }) })],
  [
    'PostgreSQL',
    () => {
      const schema = freshSchema('a2a_push');
      const carrier = postgresStore(schema);
      const setter = new NotingPostgresStore({ connectionString: postgresUrl(), max: 4 }, { schema });
      cleanups.push(async () => {
        await Promise.all([carrier.close(), setter.close()]);
        await dropSchema(schema);
      });
      return { carrier, setter };
    },
  ],
];
