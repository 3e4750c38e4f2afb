import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import type { AgentEventMap } from './emitted-events.js';

/** Events a user or embedder sends to the machine. */
export type AgentInputEvent =
  | { type: 'USER_MESSAGE'; text: string }
  | { type: 'APPROVE'; toolCallId: string }
  | { type: 'REJECT'; toolCallId: string; reason?: string }
  | { type: 'INTERRUPT'; reason?: string }
  | { type: 'RESUME' }
  | { type: 'EXTEND_LIMIT'; by?: number };

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
  | { type: 'TOOL.FINISHED'; result: ToolResult };

/** Every event the machine accepts. */
export type AgentMachineEvent = AgentInputEvent | AgentActorEvent;
