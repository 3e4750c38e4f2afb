import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';

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
  | { type: 'LLM.RESET'; reason: string; attempt: number }
  | {
      type: 'LLM.RETRY';
      attempt: number;
      maxAttempts: number;
      delayMs: number;
      kind: string;
      status?: number;
      message: string;
    }
  | {
      type: 'LLM.CONTEXT';
      warning?: { used: number; max: number };
      pruned?: { prunedMessages: number; removedTokens: number; tokensBefore: number; tokensAfter: number };
    }
  | { type: 'TOOL.FINISHED'; result: ToolResult };

/** Every event the machine accepts. */
export type AgentMachineEvent = AgentInputEvent | AgentActorEvent;
