/**
 * The fault matrix: every fault the issue names (and a few more), each in streaming and
 * non-streaming mode, driven over HTTP through the real `openai` SDK against the scripted server.
 *
 * Every cell checks that the machine comes to rest in the expected state with nothing left running,
 * every tool call has exactly one result, the conversation only ever grew (checked at every
 * snapshot), the transcript is intact (the next request the server accepts holds exactly the
 * agent's messages, as does the persisted transcript; no partial text or half-built call of a
 * discarded stream), the expected terminateReason and retry count show in the events, and no
 * unhandled rejection or uncaught exception happened. The last test renders the observed matrix to docs/fault-matrix.md.
 */
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type Agent,
  type AgentEvent,
  type AgentOptions,
  type AgentStateName,
  createAgent,
  defineTool,
  FileSessionStore,
  MemorySessionStore,
  type Message,
  type SessionStore,
  SessionStoreError,
  type TerminateReason,
  type Tool,
} from '../src/index.js';
import { type ScriptedServer, type ScriptedTurn, startScriptedServer } from '../src/testing/index.js';
import { toolCallLedger } from '../src/unstable.js';
import { watchCrashes } from './support/crash-watch.js';
import { DiskFullStore } from './support/disk-full-store.js';
import { assertToolCallsAnswered } from './support/harness.js';
import { editRecordFile, readRecordFile } from './support/record-file.js';

const UPDATE_COMMAND = 'npx vitest run test/fault-matrix.test.ts -u';
const FOLLOW_UP = 'follow up';
const FOLLOW_UP_ANSWER = 'follow-up done';
const REST_STATES: readonly AgentStateName[] = ['AwaitingInput', 'Completed', 'Error', 'Interrupted'];

/** Tools whose every execution is counted, made fresh for each run. */
function faultTools() {
  const executions: string[] = [];
  let hangAborted = false;
  const echo = defineTool({
    name: 'echo',
    description: 'returns its text',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }, { toolCallId }) => {
      executions.push(toolCallId);
      return text;
    },
  });
  const explode = defineTool({
    name: 'explode',
    description: 'always throws',
    parameters: z.object({}),
    execute: (_args, { toolCallId }) => {
      executions.push(toolCallId);
      throw new Error('kaboom');
    },
  });
  const hang = defineTool({
    name: 'hang',
    description: 'never returns',
    parameters: z.object({}),
    timeoutMs: 50,
    execute: (_args, { signal, toolCallId }) => {
      executions.push(toolCallId);
      return new Promise(() => {
        signal.addEventListener('abort', () => {
          hangAborted = true;
        });
      });
    },
  });
  const huge = defineTool({
    name: 'huge',
    description: 'returns 250,000 characters',
    parameters: z.object({}),
    execute: (_args, { toolCallId }) => {
      executions.push(toolCallId);
      return 'x'.repeat(250_000);
    },
  });
  return {
    tools: [echo, explode, hang, huge] as Tool[],
    executions,
    get hangAborted() {
      return hangAborted;
    },
  };
}

type Tools = ReturnType<typeof faultTools>;

/** What a cell observed (also what the matrix prints). */
interface Observation {
  state: AgentStateName;
  terminateReason: TerminateReason;
  retries: number;
  delays: number[];
  retryKinds: string[];
  streamResets: number;
  toolResults: { name: string; content: string; isError: boolean }[];
  error?: string;
  warnings: string[];
  executions: number;
  evidence: string;
}

interface Cell {
  name: string;
  turns: ScriptedTurn[];
  options?: Partial<AgentOptions>;
  expected: { state: AgentStateName; terminateReason: TerminateReason; retries: number; delays?: number[] };
  /** Cell-specific checks on what happened. */
  check?: (o: Observation, run: Run, tools: Tools) => void;
  /**
   * The session store fails during the turn: `disk-full` is a real `FileSessionStore` in a temp dir
   * whose appends and saves fail with a real ENOSPC from the start of the turn until it ends.
   */
  store?: 'disk-full';
}

interface Run {
  agent: Agent<unknown>;
  server: ScriptedServer;
  events: AgentEvent[];
  messages: readonly Message[];
  stream: boolean;
}

const ok = (content: string): ScriptedTurn => ({ content });
const call = (name: string, args: Record<string, unknown> | string = {}) => ({ name, arguments: args });

const CELLS: Cell[] = [
  {
    name: '429 with `retry-after: 2` (cap 25 ms)',
    turns: [{ error: { status: 429, headers: { 'retry-after': '2' } }, times: 1, content: 'after the 429' }],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 1, delays: [25] },
  },
  {
    name: '429 with `retry-after-ms: 15`',
    turns: [
      { error: { status: 429, headers: { 'retry-after-ms': '15' } }, times: 1, content: 'after the 429' },
    ],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 1, delays: [15] },
  },
  {
    name: '500 once',
    turns: [{ error: { status: 500 }, times: 1, content: 'after the 500' }],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 1, delays: [1] },
  },
  {
    name: '503 twice',
    turns: [{ error: { status: 503 }, times: 2, content: 'after two 503s' }],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 2, delays: [1, 2] },
  },
  {
    name: '500 every time (attempts run out)',
    turns: [{ error: { status: 500 } }],
    expected: { state: 'Error', terminateReason: 'error', retries: 3, delays: [1, 2, 4] },
    check: (o) => expect(o.error).toMatch(/LLM call failed \(server\) after 4 attempts/),
  },
  {
    name: 'connection reset',
    turns: [{ fault: 'reset', times: 1, content: 'after the reset' }],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 1, delays: [1] },
    check: (o) => expect(o.retryKinds).toEqual(['connection']),
  },
  {
    name: 'stream cut mid-text',
    turns: [
      {
        fault: 'cut-mid-text',
        times: 1,
        content: 'A fairly long answer that the server cuts off in the middle of the text.',
      },
    ],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 1, delays: [1] },
    check: (o, run) => {
      const full = 'A fairly long answer that the server cuts off in the middle of the text.';
      expect(run.messages.at(-1)).toEqual({ role: 'assistant', content: full });
      expect(o.streamResets).toBe(1);
      // What the UI shows after the reset is the retried answer, once.
      const reset = run.events.findIndex((e) => e.type === 'stream_reset');
      const shown = run.events
        .slice(reset + 1)
        .flatMap((e) => (e.type === 'content_chunk' ? [e.delta] : []))
        .join('');
      expect(shown).toBe(run.stream ? full : '');
    },
  },
  {
    name: 'stream cut mid-tool-call',
    turns: [
      {
        fault: 'cut-mid-tool-call',
        times: 1,
        content: 'Echoing twice.',
        toolCalls: [call('echo', { text: 'first call' }), call('echo', { text: 'second call' })],
      },
      ok('both echoed'),
    ],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 1, delays: [1] },
    check: (o, run, tools) => {
      // The half-built call of the cut stream never ran: each call ran once, from the retried stream.
      expect(tools.executions).toEqual(['call_0_0', 'call_0_1']);
      const assistant = run.messages.find((m) => m.role === 'assistant');
      expect(assistant).toMatchObject({ content: 'Echoing twice.' });
      expect(o.toolResults.map((r) => r.content)).toEqual(['first call', 'second call']);
    },
  },
  {
    name: 'malformed tool arguments',
    turns: [{ toolCalls: [call('echo', '{"text": "unterminated')] }, ok('fixed it')],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 0 },
    check: (o, _run, tools) => {
      expect(o.toolResults[0]).toMatchObject({ isError: true });
      expect(o.toolResults[0]!.content).toMatch(/not valid JSON/);
      expect(tools.executions).toEqual([]);
    },
  },
  {
    name: 'schema violation',
    turns: [{ toolCalls: [call('echo', { text: 42 })] }, ok('fixed it')],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 0 },
    check: (o) => expect(o.toolResults[0]!.content).toMatch(/invalid arguments for "echo": text:/),
  },
  {
    name: 'unknown tool',
    turns: [{ toolCalls: [call('teleport', { to: 'mars' })] }, ok('no teleport then')],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 0 },
    check: (o) => expect(o.toolResults[0]!.content).toMatch(/unknown tool "teleport"/),
  },
  {
    name: 'tool throws',
    turns: [{ toolCalls: [call('explode')] }, ok('it exploded')],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 0 },
    check: (o) => expect(o.toolResults[0]).toMatchObject({ content: 'Error: kaboom', isError: true }),
  },
  {
    name: 'tool hangs (50 ms timeout)',
    turns: [{ toolCalls: [call('hang')] }, ok('it hung')],
    expected: { state: 'Completed', terminateReason: 'completed', retries: 0 },
    check: (o, _run, tools) => {
      expect(o.toolResults[0]!.content).toMatch(/timed out after 50 ms; it was stopped/);
      expect(tools.hangAborted).toBe(true);
    },
  },
  {
    name: 'huge tool output (250,000 chars, limit 10,000)',
    turns: [{ toolCalls: [call('huge')] }, ok('that was big')],
    options: { limits: { maxToolResultChars: 10_000 } },
    expected: { state: 'Completed', terminateReason: 'completed', retries: 0 },
    check: (o) => {
      expect(o.toolResults[0]!.content).toHaveLength(
        10_000 + '\n[truncated: 240000 of 250000 characters cut]'.length,
      );
      expect(o.toolResults[0]!.content).toMatch(/\[truncated: 240000 of 250000 characters cut\]$/);
    },
  },
  {
    name: '`finish_reason: length` mid-tool-call',
    turns: [
      { content: 'Let me echo', toolCalls: [call('echo', '{"text": "cut sho')], finishReason: 'length' },
    ],
    expected: { state: 'Completed', terminateReason: 'length', retries: 0 },
    check: (o, _run, tools) => {
      // The cut-off call is answered without running.
      expect(tools.executions).toEqual([]);
      expect(o.toolResults).toEqual([
        {
          name: 'echo',
          content: "Not run: the model's output was cut off (finish_reason: length).",
          isError: false,
        },
      ]);
    },
  },
  {
    name: 'repeated identical calls (limit 3)',
    turns: [
      { toolCalls: [call('echo', { text: 'same' })] },
      { toolCalls: [call('echo', { text: 'same' })] },
      { toolCalls: [call('echo', { text: 'same' })] },
      ok('I kept repeating myself'),
    ],
    options: { limits: { maxRepeatedCalls: 3 } },
    expected: { state: 'Completed', terminateReason: 'repeated_calls', retries: 0 },
    check: (o) => expect(o.warnings).toEqual(['repeated_calls']),
  },
  {
    name: 'failing streak (limit 3)',
    turns: [
      { toolCalls: [call('explode')] },
      { toolCalls: [call('explode')] },
      { toolCalls: [call('explode')] },
      ok('everything failed'),
    ],
    options: { limits: { maxConsecutiveErrors: 3 } },
    expected: { state: 'Completed', terminateReason: 'consecutive_errors', retries: 0 },
    check: (o) => expect(o.warnings).toEqual(['consecutive_errors']),
  },
  {
    name: 'model server hangs (turn limit 300 ms)',
    turns: [{ fault: 'hang', times: 1, content: 'answering without tools' }],
    options: { limits: { timeoutMs: 300 } },
    expected: { state: 'Completed', terminateReason: 'timeout', retries: 0 },
    check: (o) => expect(o.warnings).toEqual(['timeout']),
  },
  {
    name: '400 bad request',
    turns: [{ error: { status: 400, message: 'Invalid parameter: messages' }, times: 1 }],
    expected: { state: 'Error', terminateReason: 'error', retries: 0 },
    check: (o) => expect(o.error).toMatch(/\(bad_request\) after 1 attempt: 400 Invalid parameter/),
  },
  {
    name: '401 unauthorized',
    turns: [{ error: { status: 401, message: 'Incorrect API key provided' }, times: 1 }],
    expected: { state: 'Error', terminateReason: 'error', retries: 0 },
    check: (o) => expect(o.error).toMatch(/\(auth\) after 1 attempt: 401 Incorrect API key/),
  },
  {
    name: '404 model not found',
    turns: [{ error: { status: 404, message: 'The model does not exist' }, times: 1 }],
    expected: { state: 'Error', terminateReason: 'error', retries: 0 },
    check: (o) => expect(o.error).toMatch(/\(not_found\) after 1 attempt: 404 The model/),
  },
  {
    name: 'disk full during the turn (ENOSPC on appends and saves), freed after it',
    turns: [{ toolCalls: [call('echo', { text: 'never run' })] }, ok('echoed')],
    store: 'disk-full',
    expected: { state: 'Error', terminateReason: 'error', retries: 0 },
    check: (o, _run, tools) => {
      expect(o.error).toMatch(/^appending 1 entry to <sessions>\/.*\/transcript\.jsonl failed: ENOSPC/);
      // The first write of the turn failed: it ended there, and nothing ran.
      expect(tools.executions).toEqual([]);
    },
  },
];

/** Each cell on both wires (docs/providers.md), streamed and not; the cells on load are the store's, one wire. */
const MODES = [
  { label: 'stream', stream: true, api: 'chat-completions' },
  { label: 'non-stream', stream: false, api: 'chat-completions' },
  { label: 'responses stream', stream: true, api: 'responses' },
  { label: 'responses non-stream', stream: false, api: 'responses' },
] as const;
const LOAD_MODES = MODES.slice(0, 2);

// Any unhandled rejection or uncaught exception during a cell (one a test) fails that cell.
const crashes = watchCrashes();

const open: { agents: Agent<unknown>[]; servers: ScriptedServer[]; dirs: string[] } = {
  agents: [],
  servers: [],
  dirs: [],
};
afterEach(async () => {
  for (const agent of open.agents.splice(0)) agent.stop();
  await Promise.all(open.servers.splice(0).map((s) => s.close()));
  await Promise.all(open.dirs.splice(0).map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

const observed = new Map<string, Observation>();

function isFollowUp(messages: readonly Message[]): boolean {
  const last = messages.at(-1);
  return last?.role === 'user' && last.content === FOLLOW_UP;
}

/** Checks that each array of messages starts with the one before it (append-only). */
function assertPrefix(before: readonly Message[], after: readonly Message[], where: string): void {
  if (after.length < before.length)
    throw new Error(`${where}: messages shrank from ${before.length} to ${after.length}`);
  for (let i = 0; i < before.length; i++) {
    if (after[i] !== before[i] && JSON.stringify(after[i]) !== JSON.stringify(before[i])) {
      throw new Error(`${where}: message ${i} changed`);
    }
  }
}

/** A temp folder of sessions for a cell with a file store; removed after the cell. */
async function sessionsDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-fault-matrix-'));
  open.dirs.push(dir);
  return dir;
}

async function runCell(
  cell: Cell,
  stream: boolean,
  api: (typeof MODES)[number]['api'],
): Promise<Observation> {
  const server = await startScriptedServer({
    respond: (request, index) =>
      isFollowUp(request.messages as Message[])
        ? ok(FOLLOW_UP_ANSWER)
        : (cell.turns[index] ?? { error: { status: 500, message: `no scripted turn ${index}` } }),
  });
  open.servers.push(server);
  const tools = faultTools();
  const dir = cell.store ? await sessionsDir() : undefined;
  const disk = dir ? new DiskFullStore(new FileSessionStore({ dir, fsync: false })) : undefined;
  const store: SessionStore = disk ?? new MemorySessionStore();
  // A fixed session id keeps the error text (which names the file) the same from run to run.
  const session = disk ? { session: 'cell' } : {};
  const agent = createAgent({
    store,
    baseURL: server.url,
    apiKey: 'test-key',
    stream,
    api,
    tools: tools.tools,
    retry: { baseDelayMs: 1, maxDelayMs: 4, retryAfterCapMs: 25, jitter: 'none' },
    ...session,
    ...cell.options,
  }) as Agent<unknown>;
  open.agents.push(agent);
  const events: AgentEvent[] = [];
  agent.on('*', (e) => events.push(e));

  await agent.ready(); // the session store is opened first
  await agent.flush();
  // Append-only, checked at every snapshot the machine produces.
  let seen: readonly Message[] = agent.messages;
  const growth: string[] = [];
  const sub = agent.actor.subscribe((snapshot) => {
    try {
      assertPrefix(seen, snapshot.context.messages, `snapshot in ${String(snapshot.value)}`);
    } catch (error) {
      growth.push((error as Error).message);
    }
    seen = snapshot.context.messages;
  });

  if (disk) disk.full = true;
  const result = await agent.send('go');
  if (disk) disk.full = false;
  await new Promise((r) => setTimeout(r, 20)); // let late rejections surface
  const state = agent.state;
  const context = agent.context;
  const turnEvents = [...events];

  // A valid rest state with nothing left running or half-recorded.
  expect(REST_STATES).toContain(state);
  expect(state).toBe(cell.expected.state);
  expect({ batch: context.batch, partial: context.partial }).toEqual({
    batch: { calls: [], results: {}, pending: [], started: [], runners: {} },
    partial: '',
  });
  expect(result.terminateReason).toBe(cell.expected.terminateReason);
  assertToolCallsAnswered(result.messages);

  // The transcript: ids unique, no interrupted or partial text, each tool message answers a call.
  const ids = result.messages.flatMap((m) =>
    m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [],
  );
  expect(new Set(ids).size).toBe(ids.length);
  for (const m of result.messages) {
    if (m.role === 'assistant') expect(String(m.content ?? '')).not.toMatch(/\[interrupted\]/);
  }

  const retries = turnEvents.filter((e): e is AgentEvent<'retry'> => e.type === 'retry');
  const toolEnds = turnEvents.filter((e): e is AgentEvent<'tool_call_end'> => e.type === 'tool_call_end');
  const errorEvent = turnEvents.find((e): e is AgentEvent<'error'> => e.type === 'error');
  const callNames = new Map(
    result.messages.flatMap((m) =>
      m.role === 'assistant'
        ? (m.tool_calls ?? []).map((c) => [c.id, c.type === 'function' ? c.function.name : '?'] as const)
        : [],
    ),
  );
  const observation: Observation = {
    state,
    terminateReason: result.terminateReason,
    retries: retries.length,
    delays: retries.map((e) => e.delayMs),
    retryKinds: retries.map((e) => e.kind),
    streamResets: turnEvents.filter((e) => e.type === 'stream_reset').length,
    toolResults: result.messages.flatMap((m) =>
      m.role === 'tool'
        ? [
            {
              name: callNames.get(m.tool_call_id) ?? '?',
              content: String(m.content),
              isError: toolEnds.find((e) => e.toolCallId === m.tool_call_id)?.error !== undefined,
            },
          ]
        : [],
    ),
    ...(errorEvent
      ? { error: dir ? errorEvent.message.replaceAll(dir, '<sessions>') : errorEvent.message }
      : {}),
    warnings: turnEvents.flatMap((e) =>
      e.type === 'limit_warning' && e.limit !== 'context_window' ? [e.limit] : [],
    ),
    executions: tools.executions.length,
    evidence: '',
  };
  expect(observation.retries).toBe(cell.expected.retries);
  if (cell.expected.delays) expect(observation.delays).toEqual(cell.expected.delays);
  // Each retry discards the attempt before it, and the UI is told.
  expect(observation.streamResets).toBe(observation.retries);
  if (state === 'Error') expect(observation.error).toBeDefined();
  cell.check?.(observation, { agent, server, events: turnEvents, messages: result.messages, stream }, tools);

  // The conversation goes on, and the server (which checks every call is answered) accepts it whole.
  const first = result.messages;
  const next = await agent.send(FOLLOW_UP);
  expect(next.terminateReason).toBe('completed');
  expect(next.response).toBe(FOLLOW_UP_ANSWER);
  assertPrefix(first, next.messages, 'after the follow-up');
  const lastRequest = server.requests.at(-1)!;
  expect(lastRequest.messages).toEqual(next.messages.slice(0, -1));
  assertToolCallsAnswered(next.messages);
  sub.unsubscribe();

  // The persisted transcript: the same messages in the same order, every started call finished.
  await agent.flush();
  const { entries, torn } = await store.readTranscript(agent.sessionId);
  expect(torn).toBeUndefined();
  const logged = entries.flatMap((e) => (e.kind === 'message' ? [e.message] : []));
  expect(logged).toEqual(next.messages);
  const ledger = [...toolCallLedger(entries).values()];
  expect(ledger.filter((c) => c.status !== 'completed')).toEqual([]);
  const recorded = ledger.map((c) => c.toolCallId);
  const answered = next.messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
  for (const id of tools.executions) expect(recorded).toContain(id);
  for (const id of recorded) expect(answered).toContain(id);

  await new Promise((r) => setTimeout(r, 20));
  expect(growth).toEqual([]);
  expect(crashes).toEqual([]);
  observation.evidence = evidence(observation);
  return observation;
}

function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** A short, deterministic account of what the model and the UI were told. */
function evidence(o: Observation): string {
  const parts: string[] = [];
  if (o.retryKinds.length > 0) parts.push(`retried on ${o.retryKinds.join(', ')}`);
  const failed = o.toolResults.find((r) => r.isError || r.content.startsWith('Not run'));
  if (failed) parts.push(`tool result: "${clip(failed.content, 70)}"`);
  const truncated = o.toolResults.find((r) => r.content.includes('[truncated:'));
  if (truncated)
    parts.push(`tool result ends "${truncated.content.slice(truncated.content.lastIndexOf('['))}"`);
  if (o.warnings.length > 0) parts.push(`limit_warning: ${o.warnings.join(', ')}`);
  if (o.error) parts.push(`error event: "${clip(o.error, 90)}"`);
  if (parts.length === 0) parts.push('answered normally');
  return parts.join('; ').replaceAll('|', '\\|');
}

/**
 * A fault found when a saved session is loaded: a real session, saved by a real agent on a file
 * store, is damaged as a newer version, an editor or a lost file would leave it, then loaded again.
 */
interface LoadCell {
  name: string;
  damage: (files: { snapshot: string; transcript: string }) => Promise<void>;
  expected: { state: AgentStateName | 'not started'; terminateReason: TerminateReason | null };
  check: (o: LoadObservation) => void;
}

interface LoadObservation {
  state: AgentStateName | 'not started';
  terminateReason: TerminateReason | null;
  /** What the caller and the UI were told (the rejection of `ready()`, else the first error event). */
  told: string;
  evidence: string;
}

/** Edits the persisted machine snapshot inside the newest record (sealed again, as another version's bug would write it). */
const editSnapshot =
  (edit: (snapshot: Record<string, unknown>) => void) =>
  async ({ snapshot }: { snapshot: string }) => {
    await editRecordFile(path.dirname(snapshot), (record) => edit(record.snapshot));
  };

const LOAD_CELLS: LoadCell[] = [
  {
    name: 'corrupt snapshot: a state a later version renamed',
    damage: editSnapshot((s) => {
      s.value = 'Reflecting';
    }),
    expected: { state: 'not started', terminateReason: null },
    check: (o) =>
      expect(o.told).toMatch(
        /snapshot(\.1)?\.json is corrupt \(snapshot\.value: found "Reflecting", expected one of/,
      ),
  },
  {
    name: 'corrupt snapshot: `messages` is a string',
    damage: editSnapshot((s) => {
      (s.context as { messages: unknown }).messages = 'hello';
    }),
    expected: { state: 'not started', terminateReason: null },
    check: (o) => expect(o.told).toMatch(/snapshot\.context\.messages: Invalid input: expected array/),
  },
  {
    name: '`transcript.jsonl` deleted',
    damage: ({ transcript }) => unlink(transcript),
    expected: { state: 'Error', terminateReason: 'error' },
    check: (o) => expect(o.told).toMatch(/^The transcript <sessions>\/cell\/transcript\.jsonl is missing/),
  },
];

async function runLoadCell(cell: LoadCell, stream: boolean): Promise<LoadObservation> {
  const server = await startScriptedServer({
    respond: (request) => (isFollowUp(request.messages as Message[]) ? ok(FOLLOW_UP_ANSWER) : ok('saved')),
  });
  open.servers.push(server);
  const dir = await sessionsDir();
  const options = { baseURL: server.url, apiKey: 'test-key', stream, session: 'cell' } as const;
  const first = createAgent({ ...options, store: new FileSessionStore({ dir }) });
  open.agents.push(first as Agent<unknown>);
  await first.send('go');
  await first.flush();
  first.stop();
  const store = new FileSessionStore({ dir });
  await cell.damage(store.files('cell'));

  const agent = createAgent({ ...options, store }) as Agent<unknown>;
  open.agents.push(agent);
  const errors: string[] = [];
  agent.on('error', (e) => errors.push(e.message));
  const failure = await agent.ready().then(
    () => undefined,
    (error: unknown) => error,
  );
  await new Promise((r) => setTimeout(r, 20));
  expect(crashes).toEqual([]);
  const hide = (text: string) => text.replaceAll(dir, '<sessions>');
  let observation: LoadObservation;
  if (failure !== undefined) {
    // Refused, naming the file: the agent never starts, every call that needs the session says why.
    expect(failure).toBeInstanceOf(SessionStoreError);
    expect(failure).toMatchObject({
      code: 'corrupt',
      file: (await readRecordFile(path.join(dir, 'cell'))).file,
    });
    expect(agent.state).toBe('Initializing');
    await expect(agent.send(FOLLOW_UP)).rejects.toBe(failure);
    expect(errors).toEqual([expect.stringContaining((failure as Error).message)]);
    // One bad file hides nothing else: another session of the store goes on.
    const other = createAgent({ ...options, session: 'other', store }) as Agent<unknown>;
    open.agents.push(other);
    expect((await other.send(FOLLOW_UP)).response).toBe(FOLLOW_UP_ANSWER);
    const told = hide((failure as Error).message);
    observation = { state: 'not started', terminateReason: null, told, evidence: '' };
    observation.evidence = `ready() rejects (\`corrupt\`): "${clip(told, 110)}"`;
  } else {
    // Restored in the state shown; the conversation goes on from it, whole, on the wire and on disk.
    const state = agent.state;
    const terminateReason = agent.context.terminateReason;
    assertToolCallsAnswered(agent.messages);
    const next = await agent.send(FOLLOW_UP);
    expect(next.response).toBe(FOLLOW_UP_ANSWER);
    expect(server.requests.at(-1)!.messages).toEqual(next.messages.slice(0, -1));
    await agent.flush();
    const { entries } = await store.readTranscript('cell');
    expect(entries.flatMap((e) => (e.kind === 'message' ? [e.message] : []))).toEqual(next.messages);
    const told = hide(errors[0] ?? '');
    observation = { state, terminateReason, told, evidence: `error event: "${clip(told, 90)}"` };
  }
  expect({ state: observation.state, terminateReason: observation.terminateReason }).toEqual(cell.expected);
  cell.check(observation);
  observation.evidence = observation.evidence.replaceAll('|', '\\|');
  return observation;
}

const loadObserved = new Map<string, LoadObservation>();

describe('fault matrix', () => {
  for (const cell of CELLS) {
    for (const mode of MODES) {
      it(`${cell.name} [${mode.label}]`, async () => {
        observed.set(`${cell.name}|${mode.label}`, await runCell(cell, mode.stream, mode.api));
      });
    }
  }

  for (const cell of LOAD_CELLS) {
    for (const mode of LOAD_MODES) {
      it(`${cell.name} [${mode.label}]`, async () => {
        loadObserved.set(`${cell.name}|${mode.label}`, await runLoadCell(cell, mode.stream));
      });
    }
  }

  it('renders the matrix (docs/fault-matrix.md)', async () => {
    const rows = CELLS.flatMap((cell, i) =>
      MODES.map((mode) => {
        const o = observed.get(`${cell.name}|${mode.label}`);
        if (!o) return `| ${i + 1} | ${cell.name} | ${mode.label} | (not run) | | | | |`;
        const delays = o.delays.length > 0 ? o.delays.join(', ') : '–';
        return `| ${i + 1} | ${cell.name} | ${mode.label} | ${o.state} | \`${o.terminateReason}\` | ${o.retries} | ${delays} | ${o.evidence} |`;
      }),
    );
    const loadRows = LOAD_CELLS.flatMap((cell, i) =>
      LOAD_MODES.map((mode) => {
        const n = CELLS.length + i + 1;
        const o = loadObserved.get(`${cell.name}|${mode.label}`);
        if (!o) return `| ${n} | ${cell.name} | ${mode.label} | (not run) | | | | |`;
        const reason = o.terminateReason === null ? '–' : `\`${o.terminateReason}\``;
        return `| ${n} | ${cell.name} (on load) | ${mode.label} | ${o.state} | ${reason} | 0 | – | ${o.evidence} |`;
      }),
    );
    const table = [
      '| # | Cell | Mode | End state | terminateReason | Retries | Waits (ms) | What the model / UI was told |',
      '| - | ---- | ---- | --------- | --------------- | ------- | ---------- | ---------------------------- |',
      ...rows,
      ...loadRows,
    ].join('\n');
    console.log(`\nFault matrix\n\n${table}\n`);
    const doc = [
      '# Fault matrix',
      '',
      'Generated by `test/fault-matrix.test.ts` (do not edit by hand). Regenerate with:',
      '',
      '```sh',
      UPDATE_COMMAND,
      '```',
      '',
      'Each cell runs one turn against the scripted server through the real `openai` SDK, then a',
      'follow-up turn. Every cell checks: the agent rests in the state shown with no call, approval,',
      'runner or partial text left over; every tool call has exactly one result; the conversation only',
      'grew (checked at every machine snapshot); the follow-up request the server accepted holds',
      "exactly the agent's messages, and so does the persisted transcript (a `MemorySessionStore`),",
      'where every started tool call has its result; the retry count and waits match; no unhandled',
      'rejection or uncaught exception. Retry policy in the test: `{ baseDelayMs: 1, maxDelayMs: 4,',
      "retryAfterCapMs: 25, jitter: 'none' }`, 4 attempts. See docs/reliability.md.",
      '',
      'Every cell runs on both wires: Chat Completions (modes `stream`, `non-stream`) and the Responses',
      "API (`api: 'responses'`, modes `responses stream`, `responses non-stream`), the scripted server",
      'answering each in its own format and cutting a Responses stream inside its text or arguments',
      "events. The cells on load are the store's and run on Chat Completions.",
      '',
      'Session store faults: the disk-full cell runs on a real `FileSessionStore` in a temp dir whose',
      'appends and saves fail with a real ENOSPC from the start of the turn until it ends (the',
      'follow-up writes what was not written first). The cells marked "on load" damage a session a',
      'real agent saved, then load it: a corrupt snapshot is refused (the agent never starts, another',
      'session of the store goes on); a lost transcript is restored in Error, and the follow-up goes on',
      'from it. `<sessions>` stands for the temp folder. See docs/persistence.md.',
      '',
      table,
      '',
    ].join('\n');
    // A file snapshot: CI fails when the doc is stale; `-u` rewrites it.
    await expect(doc).toMatchFileSnapshot('../docs/fault-matrix.md');
  });
});
