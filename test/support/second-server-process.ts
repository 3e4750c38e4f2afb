import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './build-dist.js';
import { scriptChildren } from './script-child.js';

const dist = (file: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', file)).href);

/** The server a second process runs: the A2A server, or the AG-UI agent server. */
const servers = {
  a2a: { module: 'server/a2a/index.js', start: 'startA2aServer' },
  'ag-ui': { module: 'server/index.js', start: 'startAgentServer' },
} as const;

/**
 * A second server process on the file store of the test's in-process server, as a deployment with
 * two replicas has: `node` on the built `dist/`, the agent "You help." with no tools, the model at the
 * URL given, polling the store every 20 ms. Call at the top of a test file (it registers the
 * file's beforeAll/afterAll: build dist/, kill the processes). `options` (JSON) go to the server's start
 * too (for A2A, `push`). `start` resolves to the process's URL once it listens.
 */
export function secondServerProcess(kind: keyof typeof servers, options: Record<string, unknown> = {}) {
  const { module, start } = servers[kind];
  const children = scriptChildren(
    `${kind}-second-`,
    `
import { FileSessionStore } from ${dist('index.js')};
import { ${start} } from ${dist(module)};
const config = JSON.parse(process.argv[3]);
const server = await ${start}({
  agent: () => ({ instructions: 'You help.', loopControlTools: false }),
  store: new FileSessionStore({ dir: config.dir }),
  runtime: { baseURL: config.model, apiKey: 'test-key' },
  pollMs: 20,
  ...config.options,
});
console.log(JSON.stringify({ url: server.url }));
`,
  );
  return {
    /** Starts a server process on the sessions folder `dir`, calling the model at `model`; its URL. */
    async start(dir: string, model: string): Promise<string> {
      const child = children.run('serve', { dir, model, options }, (line) => typeof line.url === 'string');
      return (await child.reached).at(-1)!.url as string;
    },
  };
}
