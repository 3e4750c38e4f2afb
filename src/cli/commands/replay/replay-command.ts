import { stat } from 'node:fs/promises';
import path from 'node:path';
import { toAgentOptions } from '../../../agent/agent-options.js';
import { Cassette } from '../../../evals/cassette.js';
import { replaySession } from '../../../evals/replay-session.js';
import { defineAgent } from '../../../prompt/agent-definition.js';
import { FileSessionStore } from '../../../session/file-store/file-session-store.js';
import type { SessionRecord } from '../../../session/session-store.js';
import type { Tool } from '../../../tools/define-tool.js';
import { loadToolModule, sessionOrigin } from '../../chat/chat-command.js';
import { type CliAgent, loadCliAgent, projectFolder } from '../../cli-agent.js';
import { cliApprovalPolicy } from '../../cli-approvals.js';
import { parseFlags, UsageError } from '../../cli-args.js';
import type { CommandIo } from '../../command-io.js';
import { terminalSafe } from '../../terminal/terminal-safe.js';
import { divergenceText, turnText } from './replay-report.js';

export const REPLAY_USAGE = `Usage: agentloop replay <session-id|transcript.jsonl> [--tools recorded|live] [--match strict|sequential] [--then-live [--model m]]
  Runs a saved session's agent again against its recording: the recorded user messages are sent, the
  recorded replies answer (a local scripted server; no key, no network). Prints the replayed turns and,
  where the run departs from the recording, the first difference.
  --match strict        (default) every model request must be the recorded one (same hash); the first
                        that is not stops the replay and names the JSON path that changed
  --match sequential    the k-th recorded reply answers the k-th call; differences are warnings
  --tools recorded      (default) tools are not run: each call gets its recorded result
  --tools live          the tools run; a result that differs from the recording is a divergence
  --then-live           go on live where the recording ends (a fork's new message): the model at
                        OPENAI_BASE_URL / OPENAI_API_KEY answers, the tools run
  --model <name>        the live model (default OPENAI_MODEL, else a fork's --model, else the recorded one)
  --project <dir>       the project folder (default: current directory)
  --sessions-dir <dir>  where sessions are kept
  The agent is the one the session ran (its bundle and agent, skills, --tools module), as chat --resume
  finds it; a transcript file outside a sessions folder replays the plain assistant.
  Exit status: 0 the replay matches, 1 it diverges, 2 bad input (unknown session, unreadable file).
`;

/** `agentloop replay`: a saved session's agent run again against its recording. */
export async function runReplayCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      tools: { type: 'string', default: 'recorded' },
      match: { type: 'string', default: 'strict' },
      project: { type: 'string' },
      'sessions-dir': { type: 'string' },
      'then-live': { type: 'boolean', default: false },
      model: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(REPLAY_USAGE);
    return 0;
  }
  const [target, ...extra] = positionals;
  if (!target) throw new UsageError('missing the session id or transcript file to replay');
  if (extra.length > 0) throw new UsageError(`one session at a time (also got "${extra.join(' ')}")`);
  const tools = oneOf('--tools', values.tools, ['recorded', 'live'] as const);
  const match = oneOf('--match', values.match, ['strict', 'sequential'] as const);
  if (values.model !== undefined && !values['then-live']) {
    throw new UsageError('--model names the live model: use it with --then-live');
  }
  const env = process.env;
  if (values['then-live'] && !env.OPENAI_BASE_URL && !env.OPENAI_API_KEY) {
    io.stderr('agentloop replay: --then-live needs a live model: set OPENAI_API_KEY (or OPENAI_BASE_URL)\n');
    return 2;
  }
  const projectRoot = projectFolder(values.project);
  const store = new FileSessionStore({
    projectRoot,
    ...(values['sessions-dir'] ? { dir: values['sessions-dir'] } : {}),
  });

  const found = await openRecording(target, store);
  if ('error' in found) {
    io.stderr(`agentloop replay: ${terminalSafe(found.error)}\n`);
    return 2;
  }
  const { cassette, record } = found;
  const origin = sessionOrigin(record);
  let loaded: CliAgent;
  let extraTools: Tool[];
  try {
    loaded = await loadCliAgent({
      bundle: origin.bundle,
      agent: origin.agent,
      projectRoot,
      sessionsDir: store.dir,
      skills: origin.skills,
    });
    const toolModule = record?.meta?.tools;
    extraTools = typeof toolModule === 'string' ? await loadToolModule(toolModule) : [];
  } catch (error) {
    // The session's bundle or --tools module is gone or broken: the recording cannot be replayed.
    io.stderr(
      `agentloop replay: ${terminalSafe(cassette.source)}: its agent cannot be loaded: ${terminalSafe((error as Error).message)}\n`,
    );
    return 2;
  }
  const definition =
    extraTools.length === 0
      ? loaded.definition
      : defineAgent({ ...loaded.definition, tools: [...loaded.definition.tools, ...extraTools] });
  if (origin.mcpConfig?.length) {
    io.stderr(
      `agentloop replay: the session used MCP servers (${terminalSafe(origin.mcpConfig.join(', '))}); they are not started, so their tools are missing from the replay\n`,
    );
  }

  io.stdout(
    `replaying ${terminalSafe(cassette.source)}: ${cassette.calls.length} model calls (match ${match}, tools ${tools})\n`,
  );
  let seen = 0;
  const liveModel = values.model ?? (env.OPENAI_MODEL || undefined) ?? forkModel(record);
  const replay = await replaySession(cassette, {
    ...(values['then-live']
      ? {
          afterRecording: {
            ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
            ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
            ...(liveModel !== undefined ? { model: liveModel } : {}),
          },
        }
      : {}),
    agent: toAgentOptions(definition, {}, { name: loaded.name, approval: cliApprovalPolicy(false) }),
    match,
    tools,
    onTurn: (turn) => {
      const text = turnText(turn, seen);
      seen = text.calls;
      io.stdout(text.lines);
    },
  });
  for (const warning of replay.warnings) io.stdout(`warning: ${terminalSafe(warning)}\n`);
  if (replay.divergence) {
    io.stdout(divergenceText(replay.divergence));
    return 1;
  }
  const live = replay.liveFrom
    ? `, then went on live at model call ${replay.liveFrom.step} (turn ${replay.liveFrom.turn}; ${replay.liveCalls} live model call${replay.liveCalls === 1 ? '' : 's'})`
    : values['then-live']
      ? '; nothing past it to run live'
      : '';
  io.stdout(`ok: the replay matches the recording (${cassette.calls.length} model calls)${live}\n`);
  return 0;
}

/** The model a fork was made for (`agentloop fork --model`), kept in its record's meta. */
function forkModel(record: SessionRecord | undefined): string | undefined {
  const model = record?.meta?.model;
  return record?.meta?.forkedFrom !== undefined && typeof model === 'string' && model !== ''
    ? model
    : undefined;
}

/** The recording a target names: a transcript file (a path or `*.jsonl`), else a session of `store`. */
async function openRecording(
  target: string,
  store: FileSessionStore,
): Promise<{ cassette: Cassette; record: SessionRecord | undefined } | { error: string }> {
  const isFile = target.endsWith('.jsonl') || target.includes('/') || target.includes(path.sep);
  try {
    if (isFile) {
      const cassette = await Cassette.fromFile(target);
      return { cassette, record: await recordBeside(target) };
    }
    const record = await store.load(target).catch((error: unknown) => {
      throw new Error(`session "${target}": ${(error as Error).message}`);
    });
    if (!record) return { error: `no session "${target}" in ${store.dir} (agentloop sessions lists them)` };
    return { cassette: await Cassette.fromSession(store, target), record };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/**
 * The session record of a transcript file that sits in a session's folder of a file store
 * (`<dir>/<id>/transcript.jsonl`); undefined for a file anywhere else.
 */
async function recordBeside(file: string): Promise<SessionRecord | undefined> {
  const sessionDir = path.dirname(path.resolve(file));
  const beside = new FileSessionStore({ dir: path.dirname(sessionDir) });
  const id = path.basename(sessionDir);
  const transcript = beside.files(id).transcript;
  if (transcript !== path.resolve(file) || !(await stat(beside.files(id).snapshot).catch(() => undefined))) {
    return undefined;
  }
  return beside.load(id).catch(() => undefined);
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T {
  if (allowed.includes(value as T)) return value as T;
  throw new UsageError(`${flag} must be ${allowed.join(' or ')} (got "${value}")`);
}
