import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  buildReply,
  checkChatRequest,
  completionCutPoint,
  completionJson,
  defaultErrorKind,
  errorJson,
  problem,
  streamEvents,
  type WireProblem,
} from './openai-wire.js';
import { responseJson, responseStreamEvents } from './responses-events.js';
import { viewResponsesRequest } from './responses-request-view.js';
import {
  loadScenario,
  parseScenario,
  type Scenario,
  type ScriptedRequest,
  type ScriptedRequestInfo,
  type ScriptedTurn,
  type ScriptedTurnFn,
} from './scenario.js';

/** Options of {@link startScriptedServer}. */
export interface ScriptedServerOptions {
  /** The script, or the path of a `.json`/`.yaml` scenario file. Optional when `respond` is given. */
  scenario?: Scenario | string;
  /**
   * Overrides the scenario's turn lookup: called with the request, its turn index and the body as sent
   * (a replay answers from a recording this way).
   */
  respond?: ScriptedTurnFn;
  /** Default 0: the OS picks a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Milliseconds added before every chat completion response; overrides the scenario's `latencyMs`. */
  latencyMs?: number;
  /** Keep request bodies in `requests` (default true; benchmarks may turn it off to save memory). */
  record?: boolean;
  /**
   * How long an idle keep-alive connection stays open, in ms (default Node's 5 s). Raise it for load
   * tests: a client that reuses a socket just as the server closes it sees "other side closed".
   */
  keepAliveTimeoutMs?: number;
}

/** A running scripted OpenAI-compatible server. */
export interface ScriptedServer {
  /** Base URL for the SDK, e.g. `http://127.0.0.1:PORT/v1`. */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /**
   * Parsed bodies of the requests received, in arrival order (not malformed JSON); a Responses API
   * request as its Chat Completions view (docs/scripted-server.md).
   */
  readonly requests: readonly ScriptedRequest[];
  /** Chat completion requests received, including invalid ones. */
  readonly requestCount: number;
  /** Clears `requests`, `requestCount` and the `times` counters of errors and faults. */
  reset(): void;
  /** Stops listening and destroys every open connection (keep-alive, streaming, hanging). */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** The APIs the server speaks, by request path. */
type Wire = 'chat' | 'responses';
const WIRES: Record<string, Wire | undefined> = {
  '/v1/chat/completions': 'chat',
  '/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/responses': 'responses',
};
const DEFAULT_MODEL = 'scripted-model';

/**
 * Checks a request as its API would and counts its assistant messages. A Responses request is seen
 * (and recorded) as its Chat Completions view (`viewResponsesRequest`).
 */
function checkRequest(
  body: unknown,
  wire: Wire,
): { ok: true; request: ScriptedRequest; assistantCount: number } | { ok: false; problem: WireProblem } {
  const view = wire === 'responses' ? viewResponsesRequest(body) : { ok: true as const, request: body };
  if (!view.ok) return view;
  const check = checkChatRequest(view.request);
  return check.ok ? { ...check, request: view.request as ScriptedRequest } : check;
}

/**
 * Starts a server on `127.0.0.1` that speaks OpenAI's Chat Completions and Responses wire formats
 * (`POST /v1/chat/completions`, `POST /v1/responses`, streaming or not; `GET /v1/models`) and answers
 * both from one scenario.
 * The turn for a request is the number of assistant messages it holds, so it is stateless per
 * conversation; only the `times` counters of errors/faults are kept per server.
 */
export async function startScriptedServer(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const scenario =
    typeof options.scenario === 'string'
      ? await loadScenario(options.scenario)
      : options.scenario
        ? parseScenario(options.scenario)
        : undefined;
  if (!scenario && !options.respond) throw new TypeError('startScriptedServer needs a scenario or respond()');
  const turns = scenario?.turns ?? [];
  const latencyMs = options.latencyMs ?? scenario?.latencyMs ?? 0;
  const record = options.record ?? true;
  const host = options.host ?? '127.0.0.1';

  const requests: ScriptedRequest[] = [];
  let requestCount = 0;
  let seq = 0;
  /** How many times the error/fault of each turn index has been served. */
  let faultsServed = new Map<number, number>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let closing: Promise<void> | undefined;

  /** Resolves after `ms` unless the server closes first (then it never resolves: the socket is gone). */
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      if (closing) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const sendProblem = (res: ServerResponse, p: WireProblem, headers?: Record<string, string>) => {
    if (res.destroyed || res.headersSent) return;
    const body = errorJson(p);
    res.writeHead(p.status, {
      ...headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };

  const lookupTurn = async (
    request: ScriptedRequest,
    index: number,
    info: ScriptedRequestInfo,
  ): Promise<{ turn: ScriptedTurn } | { problem: WireProblem }> => {
    const fail = (message: string) => ({ problem: problem(message, null, null, 500, 'server_error') });
    try {
      const entry = options.respond ? options.respond : turns[index];
      if (entry === undefined) {
        return fail(
          `scenario has no turn ${index} (it has ${turns.length}): the request holds ${index} assistant messages`,
        );
      }
      const turn = typeof entry === 'function' ? await entry(request, index, info) : entry;
      if (typeof turn !== 'object' || turn === null) return fail(`scripted turn ${index} is not an object`);
      return { turn };
    } catch (error) {
      return fail(`scripted turn ${index} threw: ${(error as Error).message}`);
    }
  };

  const answerChat = async (req: IncomingMessage, res: ServerResponse, raw: Buffer, wire: Wire) => {
    requestCount++;
    const requestSeq = ++seq;
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      if (latencyMs > 0) await wait(latencyMs);
      return sendProblem(
        res,
        problem(
          'We could not parse the JSON body of your request. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.',
        ),
      );
    }
    const check = checkRequest(body, wire);
    if (record) requests.push(check.ok ? check.request : (body as ScriptedRequest));
    if (!check.ok) {
      if (latencyMs > 0) await wait(latencyMs);
      return sendProblem(res, check.problem);
    }
    const request = check.request;
    const index = check.assistantCount;
    const found = await lookupTurn(request, index, {
      body,
      api: wire === 'responses' ? 'responses' : 'chat-completions',
    });
    if ('problem' in found) {
      if (latencyMs > 0) await wait(latencyMs);
      return sendProblem(res, found.problem);
    }
    const turn = found.turn;

    let failing = false;
    if (turn.error || turn.fault) {
      const served = faultsServed.get(index) ?? 0;
      failing = turn.times === undefined || served < turn.times;
      if (failing) faultsServed.set(index, served + 1);
    }
    const delay = latencyMs + (turn.delayMs ?? 0);
    if (delay > 0) await wait(delay);
    if (res.destroyed) return;

    if (failing && turn.error) {
      const kind = defaultErrorKind(turn.error.status);
      return sendProblem(
        res,
        {
          status: turn.error.status,
          message: turn.error.message ?? `Scripted error (HTTP ${turn.error.status}) for turn ${index}`,
          type: turn.error.type ?? kind.type,
          param: null,
          code: turn.error.code ?? kind.code,
        },
        turn.error.headers,
      );
    }
    const fault = failing ? turn.fault : undefined;
    if (fault === 'reset') return void req.socket.destroy();
    if (fault === 'hang') return; // Answered never: the client aborts, or close() destroys the socket.

    const reply = buildReply(turn, {
      request,
      index,
      requestBytes: raw.length,
      model: scenario?.model ?? request.model,
      seq: requestSeq,
    });

    if (request.stream !== true) {
      const json = wire === 'responses' ? responseJson(reply) : completionJson(reply);
      const bytes = Buffer.from(json);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
      if (fault === 'cut-mid-text' || fault === 'cut-mid-tool-call') {
        const cut = Buffer.byteLength(json.slice(0, completionCutPoint(json, fault)));
        res.write(bytes.subarray(0, cut), () => res.destroy());
        return;
      }
      res.end(bytes);
      return;
    }

    const plan =
      wire === 'responses'
        ? responseStreamEvents(reply, turn.chunkSize)
        : streamEvents(reply, {
            includeUsage: request.stream_options?.include_usage === true,
            chunkSize: turn.chunkSize,
          });
    const cutAt =
      fault === 'cut-mid-text' ? plan.cutMidText : fault === 'cut-mid-tool-call' ? plan.cutMidToolCall : -1;
    const events = cutAt >= 0 ? plan.events.slice(0, cutAt) : plan.events;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const finish = () => (cutAt >= 0 ? res.destroy() : res.end());
    const chunkDelay = turn.chunkDelayMs ?? 0;
    if (chunkDelay === 0) {
      if (cutAt >= 0) res.write(events.join(''), () => res.destroy());
      else res.end(events.join(''));
      return;
    }
    for (let i = 0; i < events.length; i++) {
      if (i > 0) await wait(chunkDelay);
      if (res.destroyed) return;
      res.write(events[i]);
    }
    if (cutAt >= 0) await wait(chunkDelay);
    if (!res.destroyed) finish();
  };

  const server = createServer((req, res) => {
    req.on('error', () => {});
    res.on('error', () => {});
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query >= 0 ? url.slice(0, query) : url;

    const wire = req.method === 'POST' ? WIRES[path] : undefined;
    if (wire !== undefined) {
      const parts: Buffer[] = [];
      let size = 0;
      req.on('data', (part: Buffer) => {
        size += part.length;
        if (size > MAX_BODY_BYTES) {
          sendProblem(res, problem('Request body too large.', null, null, 413));
          req.destroy();
          return;
        }
        parts.push(part);
      });
      req.on('end', () => {
        if (size > MAX_BODY_BYTES || closing) return;
        answerChat(req, res, parts.length === 1 ? parts[0]! : Buffer.concat(parts), wire).catch(() => {
          if (!res.headersSent)
            sendProblem(res, problem('scripted server failure', null, null, 500, 'server_error'));
          else res.destroy();
        });
      });
      return;
    }
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      const model = scenario?.model ?? DEFAULT_MODEL;
      const body = JSON.stringify({
        object: 'list',
        data: [{ id: model, object: 'model', created: 0, owned_by: 'agentloop' }],
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    req.resume();
    sendProblem(res, problem(`Invalid URL (${req.method} ${path})`, null, null, 404));
  });
  if (options.keepAliveTimeoutMs !== undefined) {
    server.keepAliveTimeout = options.keepAliveTimeoutMs;
    // Node requires the header timeout to exceed the keep-alive timeout.
    server.headersTimeout = Math.max(server.headersTimeout, options.keepAliveTimeoutMs + 1_000);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}/v1`,
    port,
    host,
    get requests() {
      return requests;
    },
    get requestCount() {
      return requestCount;
    },
    reset() {
      requests.length = 0;
      requestCount = 0;
      faultsServed = new Map();
    },
    close() {
      if (closing) return closing;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      closing = new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
