import type { AnyEventObject, InspectionEvent, MachineContext, Observer } from 'xstate';
import type { AgentInspection, InspectionAttachment } from '../agent/agent-inspection.js';
import {
  createSanitizer,
  defaultSecrets,
  isTokenChunkEvent,
  type Sanitizer,
  sanitizeAgentContext,
} from './sanitize.js';
import { DEFAULT_STATELY_PORT, type StatelyBridge, startStatelyBridge } from './stately-bridge.js';

/** Options of `statelyInspection()`: the Stately inspector over a WebSocket. */
export interface StatelyInspectOptions {
  /** Where the WebSocket inspector sends events (default `ws://127.0.0.1:8080`). */
  url?: string;
  /**
   * Start the bridge page on the URL's port (default true), unless this process or another one
   * already serves it. Open `http://127.0.0.1:<port>` to see the agent in the Stately inspector.
   */
  serve?: boolean;
  /** More strings never to send (besides the agent's API key and `OPENAI_API_KEY`). */
  secrets?: readonly string[];
  /** Longer strings (message bodies, tool results) are cut to this many characters (default 300). */
  maxStringChars?: number;
  /** Called once the bridge page is served, with its address. */
  onListening?: (pageUrl: string) => void;
  /** Called when the inspector cannot start (default: a warning on stderr). */
  onError?: (error: unknown) => void;
}

/**
 * The options that make `@statelyai/inspect` safe for agentloop: `sanitizeContext` (messages reduced
 * to a count and the last three, cut), `sanitizeEvent`, `serialize` (a final pass over the whole
 * event, including child actors' inputs and outputs) and `filter` (no token-chunk events).
 * Pass them to your own `createWebSocketInspector(...)` / `createSkyInspector(...)`.
 */
export function statelyInspectorOptions(
  options: { secrets?: readonly (string | undefined)[]; maxStringChars?: number } = {},
) {
  const secrets = [...defaultSecrets(), ...(options.secrets ?? [])];
  const sanitize: Sanitizer = createSanitizer({
    secrets,
    maxStringChars: options.maxStringChars ?? 300,
    maxArrayItems: 50,
  });
  // The definition string is the machine's JSON: needed whole by the viewer; only redacted.
  const sanitizeWhole: Sanitizer = createSanitizer({
    secrets,
    maxStringChars: options.maxStringChars ?? 300,
    maxArrayItems: 50,
    uncutKeys: ['definition'],
  });
  return {
    sanitizeContext: (context: MachineContext): MachineContext =>
      sanitizeAgentContext(context, sanitize) as MachineContext,
    sanitizeEvent: (event: AnyEventObject): AnyEventObject => sanitize(event) as AnyEventObject,
    serialize: <T>(event: T): T => sanitizeWhole(event) as T,
    filter: (event: { type: string; event?: { type?: unknown } }): boolean =>
      event.type === '@xstate.actor' || !isTokenChunkEvent(event.event),
  };
}

/** Whether a raw XState inspection event is (or is caused by) a token chunk. */
export function isTokenChunkInspection(event: InspectionEvent): boolean {
  return (
    (event.type === '@xstate.event' || event.type === '@xstate.snapshot') && isTokenChunkEvent(event.event)
  );
}

/** The optional peer dependency the Stately inspector runs on. */
const STATELY_PACKAGE = '@statelyai/inspect';

/** What agentloop uses of `@statelyai/inspect` (its types stay out of agentloop's declarations). */
interface StatelyInspectModule {
  createWebSocketInspector(options: Record<string, unknown>): {
    inspect: Observer<InspectionEvent>;
    stop(): void;
  };
}

let statelyModule: Promise<StatelyInspectModule> | undefined;

/**
 * Loads `@statelyai/inspect`, an optional peer dependency, once. When it is not installed the error
 * says so and how to install it (the loader's own "Cannot find package" is kept as the `cause`).
 */
function loadStatelyInspect(): Promise<StatelyInspectModule> {
  statelyModule ??= (import('@statelyai/inspect') as unknown as Promise<StatelyInspectModule>).catch(
    (error: unknown) => {
      statelyModule = undefined;
      const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
      const missing =
        (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
        String(message).includes(`'${STATELY_PACKAGE}'`);
      if (!missing) throw error;
      throw new Error(
        `the Stately inspector (statelyInspection(), --inspect) needs the optional package ${STATELY_PACKAGE}, ` +
          `which is not installed: run \`npm install ${STATELY_PACKAGE}\``,
        { cause: error },
      );
    },
  );
  return statelyModule;
}

/**
 * Resolves when `@statelyai/inspect` (an optional peer dependency) can be loaded; rejects with an error
 * that says how to install it otherwise. `--inspect` checks this before anything starts.
 */
export async function checkStatelyInspect(): Promise<void> {
  await loadStatelyInspect();
}

/**
 * Attaches `@statelyai/inspect`'s WebSocket inspector with agentloop's sanitizers. The package is
 * loaded on first use; events that arrive meanwhile are held (up to 1000).
 */
export function createStatelyInspection(
  options: StatelyInspectOptions & { agentSecrets?: readonly (string | undefined)[] } = {},
): InspectionAttachment & { ready: Promise<void> } {
  const url = options.url ?? `ws://127.0.0.1:${DEFAULT_STATELY_PORT}`;
  let target: Observer<InspectionEvent> | undefined;
  let inspector: { stop(): void } | undefined;
  let bridge: StatelyBridge | undefined;
  let stopped = false;
  const held: InspectionEvent[] = [];

  const ready = (async () => {
    // The package first: without it, no bridge page is served for nothing.
    await loadStatelyInspect();
    if (options.serve !== false) {
      const port = Number(new URL(url).port || DEFAULT_STATELY_PORT);
      bridge = await startStatelyBridge(port);
      if (stopped) return void (await bridge.release());
      options.onListening?.(bridge.pageUrl);
    }
    const { createWebSocketInspector } = await loadStatelyInspect();
    if (stopped) return void (await bridge?.release());
    const secrets = [...(options.agentSecrets ?? []), ...(options.secrets ?? [])];
    const created = createWebSocketInspector({
      url,
      ...statelyInspectorOptions({
        secrets,
        ...(options.maxStringChars !== undefined ? { maxStringChars: options.maxStringChars } : {}),
      }),
    });
    inspector = created;
    target = created.inspect;
    for (const event of held.splice(0)) target.next?.(event);
  })().catch((error) => {
    if (options.onError) options.onError(error);
    else process.stderr.write(`agentloop: the Stately inspector did not start: ${errorMessage(error)}\n`);
  });

  return {
    observer: {
      next(event) {
        if (stopped || isTokenChunkInspection(event)) return;
        if (target) target.next?.(event);
        else if (held.length < 1000) held.push(event);
      },
    },
    ready,
    stop() {
      if (stopped) return;
      stopped = true;
      // The inspector converts events on a timer: let the last ones (the final state) go out first.
      setTimeout(() => {
        inspector?.stop();
        void bridge?.release();
      }, 100);
    },
  };
}

/**
 * `createAgent({ inspect: statelyInspection() })`: the agent's statechart in the Stately inspector,
 * through `@statelyai/inspect`'s WebSocket inspector with agentloop's sanitizers (the agent's API key
 * and secrets never leave), and the bridge page served on 127.0.0.1:8080 unless `serve: false`.
 */
export function statelyInspection(options: StatelyInspectOptions = {}): AgentInspection {
  return { attach: ({ secrets }) => createStatelyInspection({ ...options, agentSecrets: secrets }) };
}

/** One observer that forwards every inspection event to each of `observers`. */
export function combineInspection(
  ...observers: (Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined)[]
): (event: InspectionEvent) => void {
  const fns = observers
    .filter((o) => o !== undefined)
    .map((o) => (typeof o === 'function' ? o : (event: InspectionEvent) => o.next?.(event)));
  return (event) => {
    for (const fn of fns) fn(event);
  };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
