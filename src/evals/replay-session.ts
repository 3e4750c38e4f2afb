import { type Agent, createAgent } from '../agent/agent.js';
import { type AgentOptions, type ExecutionResult, toAgentOptions } from '../agent/agent-options.js';
import { composeToolHooks } from '../machines/actors/compose-tool-hooks.js';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import { startScriptedServer } from '../testing/scripted-server.js';
import type { Cassette } from './cassette.js';
import { cassetteResponder, type ResponderLog } from './cassette-responder.js';
import { liveTarget, routedClient } from './replay-live-model.js';
import type { ReplayAgent, ReplayedTurn, ReplayOptions, ReplayResult } from './replay-options.js';
import { answerApprovals, replayToolHooks } from './replay-tools.js';
import { trajectoryOf } from './trajectory.js';

/**
 * Runs an agent again against a recording (docs/evals.md, "Replay"): the recorded user messages are
 * sent in order, and the model is a scripted server on 127.0.0.1 answering from the cassette through
 * the real `openai` SDK, so streaming, early tool start and retries run as they do live. Resolves with
 * whether the run matched the recording (`ok`), the first divergence, warnings, the trajectory and the
 * last turn's result. Writes no session; needs no key and no network unless `afterRecording` names a
 * live model to go on with past the recording (then `liveFrom` says where that began).
 */
export async function replaySession(cassette: Cassette, options: ReplayOptions): Promise<ReplayResult> {
  const recordsHashes = cassette.calls.some((call) => call.record !== undefined);
  const match = recordsHashes ? (options.match ?? 'strict') : 'sequential';
  const log: ResponderLog = { divergence: undefined, warnings: [], answered: 0 };
  const live = options.afterRecording ? liveTarget(options.afterRecording) : undefined;
  if (!recordsHashes && options.match === 'strict' && cassette.calls.length > 0) {
    log.warnings.push(`${cassette.source}: no model_call entries (an older transcript); matched by position`);
  }
  const server = await startScriptedServer({
    respond: cassetteResponder(cassette, match, log),
    record: false,
  });
  let agent: Agent | undefined;
  const turns: ReplayedTurn[] = [];
  let modelCalls = 0;
  try {
    const base = agentOptions(options.agent, options.inputs);
    const tools = replayToolHooks(cassette.entries, options.tools ?? 'recorded', log);
    // Past the recording (and only while nothing diverged), requests go to the live model.
    const goesLive = () => {
      if (!live || log.divergence || log.answered < cassette.calls.length) return false;
      log.liveFrom ??= { step: log.answered + 1, turn: turns.length + 1 };
      return true;
    };
    agent = createAgent({
      ...base,
      ...recordedModel(cassette, base),
      // With a live part, the live key is the agent's (so it is redacted as any agent's key is).
      ...(live
        ? { client: routedClient(server.url, live, goesLive), apiKey: live.apiKey }
        : { baseURL: server.url, apiKey: 'agentloop-replay' }),
      toolHooks: composeToolHooks(tools, base.toolHooks),
    }) as Agent;
    agent.on('model_call', () => void modelCalls++);
    answerApprovals(agent, cassette.entries, options.approve ?? 'recorded', log);
    for (const input of userInputs(cassette)) {
      const result: ExecutionResult = await agent.send(input);
      const turn = { turn: turns.length + 1, input, result };
      turns.push(turn);
      options.onTurn?.(turn);
      if (!log.divergence && result.terminateReason === 'error') {
        const error = result.error ?? 'unknown error';
        const message = `turn ${turn.turn} ended in an error the recording did not have: ${error}`;
        log.divergence = { kind: 'error', step: log.answered + 1, turn: turn.turn, error, message };
        break;
      }
      if (log.divergence && match === 'strict') break;
    }
    if (!log.divergence && log.answered < cassette.calls.length) {
      const recordedCalls = cassette.calls.length;
      log.divergence = {
        kind: 'calls',
        step: log.answered + 1,
        recordedCalls,
        actualCalls: log.answered,
        message: `the recording has ${recordedCalls} model calls, the replay made ${log.answered}`,
      };
    }
    return {
      ok: log.divergence === undefined,
      divergence: log.divergence,
      warnings: log.warnings,
      trajectory: trajectoryOf(agent.messages),
      result: turns.at(-1)?.result,
      turns,
      modelCalls: log.answered,
      ...(live ? { liveFrom: log.liveFrom, liveCalls: modelCalls - log.answered } : {}),
    };
  } finally {
    await agent?.close().catch(() => {});
    await server.close();
  }
}

type BaseOptions = Omit<AgentOptions, 'baseURL' | 'apiKey' | 'client'>;

/** The `createAgent` options of the agent to replay, without a session or a way to a model. */
function agentOptions(agent: ReplayAgent, inputs: Record<string, unknown> | undefined): BaseOptions {
  const options: AgentOptions = isDefinition(agent) ? toAgentOptions(agent, inputs) : { ...agent };
  const {
    baseURL: _url,
    apiKey: _key,
    client: _client,
    store: _store,
    session: _session,
    sessionId: _id,
    ...rest
  } = options;
  return rest;
}

function isDefinition(agent: ReplayAgent): agent is AgentDefinition {
  return typeof (agent as { description?: unknown }).description === 'string';
}

/** The recorded model and API, for an agent that names neither (they are part of the request's hash). */
function recordedModel(cassette: Cassette, base: BaseOptions): Pick<AgentOptions, 'model' | 'api'> {
  const first = cassette.calls.find((call) => call.settings || call.record);
  const settingsModel = first?.settings?.settings.model;
  const model =
    base.model ?? (typeof settingsModel === 'string' ? settingsModel : first?.record?.responseModel);
  const api = base.api ?? first?.record?.wire ?? first?.settings?.wire;
  return { ...(model !== undefined ? { model } : {}), ...(api !== undefined ? { api } : {}) };
}

/** The user messages of the recording, in order: each started a turn (`agent.send`). */
function userInputs(cassette: Cassette): string[] {
  const inputs: string[] = [];
  for (const entry of cassette.entries) {
    if (entry.kind !== 'message' || entry.message.role !== 'user') continue;
    const content = entry.message.content as unknown;
    if (typeof content === 'string') inputs.push(content);
    else if (Array.isArray(content)) {
      inputs.push(
        content
          .map((part: unknown) => {
            const text = (part as { text?: unknown } | null)?.text;
            return typeof text === 'string' ? text : '';
          })
          .join(''),
      );
    }
  }
  return inputs;
}
