import type { Message } from '../llm/message.js';
import type { TranscriptEntry } from '../session/transcript.js';

/** One tool call of a run: the tool's name and its arguments, parsed (the raw text when not JSON). */
export interface TrajectoryStep {
  name: string;
  /** Parsed arguments; the arguments text as sent when it is not valid JSON. */
  args: unknown;
  /** The call's id in the conversation, when known (ignored when trajectories are matched). */
  id?: string;
}

/** The tool calls of a run in the order the model made them. */
export type Trajectory = TrajectoryStep[];

/**
 * The trajectory of a conversation or a transcript: each assistant message's tool calls, in order,
 * with their arguments parsed. Takes the messages (`result.messages`, `agent.messages`) or a
 * transcript's entries (`store.readTranscript(id)`; only `message` entries count: a call is in the
 * trajectory when the model asked for it, whether or not it ran). Values that are not assistant
 * messages with a `tool_calls` array are passed over.
 */
export function trajectoryOf(source: readonly (Message | TranscriptEntry)[]): Trajectory {
  const steps: Trajectory = [];
  for (const item of source) {
    const message = 'kind' in item ? (item.kind === 'message' ? item.message : undefined) : item;
    if (message?.role !== 'assistant' || !Array.isArray(message.tool_calls)) continue;
    for (const call of message.tool_calls) {
      if (call?.type !== 'function' || typeof call.function?.name !== 'string') continue;
      const step: TrajectoryStep = { name: call.function.name, args: parsedArgs(call.function.arguments) };
      if (typeof call.id === 'string') step.id = call.id;
      steps.push(step);
    }
  }
  return steps;
}

function parsedArgs(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
