import type { InspectionEvent } from 'xstate';
import type { Agent } from '../../agent/agent.js';
import { type InspectorServer, startInspectorServer } from '../../inspector/inspector-server.js';
import {
  DEFAULT_STATELY_PORT,
  type StatelyBridge,
  startStatelyBridge,
} from '../../inspector/stately-bridge.js';
import {
  checkStatelyInspect,
  combineInspection,
  createStatelyInspection,
} from '../../inspector/stately-inspector.js';
import { UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { untilInterrupted } from '../until-interrupted.js';

/** The `parseArgs` options of the inspector flags, shared by `demo`, `run` and `chat`. */
export const INSPECTOR_FLAGS = {
  'inspector-port': { type: 'string' },
  inspect: { type: 'boolean', default: false },
} as const;

/** The inspector flags' usage lines. */
export const INSPECTOR_USAGE = `  --inspector-port <port>  serve the local inspector page on 127.0.0.1:<port> (0: any free port);
                           open the address printed (it carries the page's token); approvals are
                           answered in the page; the command stays up until Ctrl-C
  --inspect                send the statechart to the Stately inspector: open http://127.0.0.1:${DEFAULT_STATELY_PORT}
`;

/**
 * The port `--inspector-port` asks for (undefined without the flag). Throws a {@link UsageError} for
 * anything but 0-65535: commands check it before they open anything.
 */
export function inspectorPort(values: { 'inspector-port'?: string | undefined }): number | undefined {
  const text = values['inspector-port'];
  if (text === undefined) return undefined;
  const port = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--inspector-port needs a port number from 0 to 65535, got "${text}"`);
  }
  return port;
}

/** What the inspector flags started for one command. */
export interface CliInspection {
  /** The local inspector page, when `--inspector-port` was given. */
  readonly server: InspectorServer | undefined;
  /** The `inspect` option for `createAgent` (undefined when no inspector is on). */
  inspectFor(apiKey: string | undefined): ((event: InspectionEvent) => void) | undefined;
  /** Shows the agent in the inspectors; returns a function to call after `agent.stop()`. */
  attach(agent: Agent<unknown>, options?: { name?: string; title?: string; parentId?: string }): () => void;
  /** With the page on: waits until it is open, telling the user where. */
  waitForPage(): Promise<void>;
  /** With the page on: keeps serving until Ctrl-C (or `signal`). */
  holdOpen(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Starts what `--inspector-port` and `--inspect` ask for and prints where to look. */
export async function startCliInspection(
  values: { 'inspector-port'?: string | undefined; inspect?: boolean | undefined },
  io: CommandIo,
): Promise<CliInspection> {
  // @statelyai/inspect is an optional peer dependency: say so before anything starts.
  if (values.inspect) await checkStatelyInspect();
  let server: InspectorServer | undefined;
  let bridge: StatelyBridge | undefined;
  const port = inspectorPort(values);
  if (port !== undefined) {
    server = await startInspectorServer({ port }).catch((error: unknown) => {
      if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
      throw new Error(
        `--inspector-port ${port}: 127.0.0.1:${port} is in use; pick another port (0: any free one)`,
      );
    });
    io.stderr(`inspector: ${server.url}\n`);
  }
  if (values.inspect) {
    bridge = await startStatelyBridge(DEFAULT_STATELY_PORT);
    io.stderr(
      `Stately inspector: open ${bridge.pageUrl} in a browser with internet access` +
        `${bridge.owned ? '' : ' (port in use: sending to the bridge already there)'}\n`,
    );
  }
  const stately = new Map<Agent<unknown>, ReturnType<typeof createStatelyInspection>>();
  const pendingStately: ReturnType<typeof createStatelyInspection>[] = [];

  return {
    server,
    inspectFor(apiKey) {
      if (!server && !bridge) return undefined;
      let statelyObserver: ((event: InspectionEvent) => void) | undefined;
      if (bridge) {
        const inspection = createStatelyInspection({
          url: bridge.wsUrl,
          serve: false,
          agentSecrets: [apiKey],
        });
        pendingStately.push(inspection);
        const observer = inspection.observer;
        statelyObserver = typeof observer === 'function' ? observer : (e) => observer.next?.(e);
      }
      return combineInspection(server?.inspect, statelyObserver);
    },
    attach(agent, options = {}) {
      const inspection = pendingStately.shift();
      if (inspection) stately.set(agent, inspection);
      const detach = server?.attach(agent, options);
      return () => {
        detach?.();
        stately.get(agent)?.stop();
        stately.delete(agent);
      };
    },
    async waitForPage() {
      if (!server || server.clientCount > 0) return;
      io.stderr(`open ${server.url} in a browser: the run starts when the page connects\n`);
      await server.waitForClient();
    },
    async holdOpen(signal) {
      if (!server && !bridge) return;
      io.stderr(`inspector still serving${server ? ` at ${server.url}` : ''}: press Ctrl-C to exit\n`);
      await untilInterrupted(signal);
    },
    async close() {
      for (const inspection of [...stately.values(), ...pendingStately]) inspection.stop();
      await server?.close();
      await bridge?.release();
    },
  };
}
