import type { Usage } from '../llm/message.js';
import type { CompactionRecord } from '../prompt/compaction.js';
import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import type { AgentEventMap } from './emitted-events.js';

/**
 * Events a user or embedder sends to the machine. Those that start or resume the clock carry `at`,
 * the time (epoch ms) they happened: the machine never reads the clock itself, so its transitions
 * stay pure and replayable. The Agent facade stamps them; embedders pass `Date.now()`.
 */
export type AgentInputEvent =
  | { type: 'USER_MESSAGE'; text: string; at: number }
  /** `always`: the user allows this tool for the rest of the session (other pending calls of it run too). */
  | { type: 'APPROVE'; toolCallId: string; always?: boolean; at: number }
  | { type: 'REJECT'; toolCallId: string; reason?: string; at: number }
  | { type: 'INTERRUPT'; reason?: string }
  | { type: 'RESUME'; at: number }
  | { type: 'EXTEND_LIMIT'; by?: number; at: number }
  /**
   * The session could not be written (a transcript append or a save failed, e.g. a full disk): the
   * turn ends in Error with `message`, which names the write. Sent by the persistence glue while a
   * turn runs or its last writes are under way; a turn is never reported done with its record lost.
   */
  | { type: 'WRITE_FAILED'; message: string }
  /**
   * A compaction asked for after a turn (`agent.compact()`) came back: the summary to send from now on,
   * or why there is none (`failure`), and what its call used.
   */
  | { type: 'COMPACTED'; record?: CompactionRecord; failure?: string; usage: Usage | null };

/** Events the invoked actors send to the machine while they run. */
export type AgentActorEvent =
  | { type: 'LLM.DELTA'; delta: string }
  | { type: 'LLM.TOOL_CALL_READY'; call: ToolCallRequest }
  // The payloads of the events the machine turns these into (`stream_reset`, `retry`, `context_pruned`).
  | ({ type: 'LLM.RESET' } & AgentEventMap['stream_reset'])
  | ({ type: 'LLM.RETRY' } & AgentEventMap['retry'])
  | {
      type: 'LLM.CONTEXT';
      warning?: Pick<AgentEventMap['limit_warning'], 'used' | 'max'>;
      pruned?: AgentEventMap['context_pruned'];
    }
  | { type: 'TOOL.FINISHED'; result: ToolResult }
  /** A running call reported progress: the machine emits `tool_progress` while the call runs. */
  | ({ type: 'TOOL.PROGRESS' } & AgentEventMap['tool_progress'])
  /** The request is past `compactAt`: compact before this model call (callLlm waits to be stopped). */
  | { type: 'LLM.COMPACT' };

/**
 * The machine's start-up, which it sends itself a microtask after it starts (see `startUp` in
 * actions/start-actions.ts): `effect` says whether an `initialize` effect is bound, to be run by the
 * `initialize` actor; without one the machine goes straight to AwaitingInput.
 */
export type AgentStartEvent = { type: 'INITIALIZE'; effect: boolean };

/** Every event the machine accepts. */
export type AgentMachineEvent = AgentInputEvent | AgentActorEvent | AgentStartEvent;
