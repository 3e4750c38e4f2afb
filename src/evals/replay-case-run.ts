import type { AgentDefinition } from '../prompt/agent-definition.js';
import type { ScriptedTurn } from '../testing/scenario.js';
import { Cassette } from './cassette.js';
import { connectEvalModel } from './eval-model.js';
import type { EvalCase } from './eval-suite-file.js';
import { type LiveRun, runLiveCase } from './live-case-run.js';

/**
 * Replays a case's transcript: the agent runs again on the scripted server answering each model call
 * with the recorded reply in order (the k-th reply answers the k-th call), the user messages of the
 * recording sent as the turns, approvals as the case says. Tools run.
 *
 * Interim: `replaySession` (strict request matching, recorded tool results) takes this over when it lands.
 */
export async function runReplayCase(definition: AgentDefinition, evalCase: EvalCase): Promise<LiveRun> {
  const cassette = evalCase.cassette ?? (await Cassette.fromFile(evalCase.transcript!));
  const inputs = cassette.entries.flatMap((e) =>
    e.kind === 'message' && e.message.role === 'user' && typeof e.message.content === 'string'
      ? [e.message.content]
      : [],
  );
  if (inputs.length === 0) throw new Error(`${cassette.source}: the recording has no user message`);
  const turns = cassette.calls.map(({ reply, record }): ScriptedTurn => {
    const turn: ScriptedTurn = {};
    if (typeof reply.content === 'string') turn.content = reply.content;
    const calls = (reply.tool_calls ?? []).filter((c) => c.type === 'function');
    if (calls.length > 0) {
      turn.toolCalls = calls.map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      }));
    }
    if (record?.usage) {
      turn.usage = {
        prompt_tokens: record.usage.promptTokens,
        completion_tokens: record.usage.completionTokens,
      };
    }
    return turn;
  });
  const model = await connectEvalModel({}, { turns });
  try {
    return await runLiveCase(definition, model!, inputs, evalCase.approvals);
  } finally {
    await model!.close();
  }
}
