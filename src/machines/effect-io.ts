import type { Message } from '../llm/message.js';
import type { AgentActorEvent } from './agent-events.js';
import type { AgentEventType } from './emitted-events.js';

/** What an effect gets besides its input: its abort signal and a way to tell the machine. */
export interface EffectIO {
  /**
   * Aborted when the machine stops the actor (it left the state, an interrupt, the agent stopped).
   * Made on first read: an effect that never looks costs no AbortController.
   */
  readonly signal: AbortSignal;
  /** Whether the actor was stopped, without making a signal. */
  readonly aborted: boolean;
  /** Why it was stopped, once `aborted`. */
  readonly reason: unknown;
  /** Calls `listener` once when the actor is stopped, without making a signal; returns how to stop listening. */
  onAbort(listener: () => void): () => void;
  /**
   * Whether anyone listens to emitted events of `type` on this agent (absent: assume so). An effect
   * asks before it sends what only becomes an event for listeners (a tool's progress).
   */
  hears?(type: AgentEventType): boolean;
  /** Sends an event to the agent machine; dropped once the actor is stopped or done. */
  send(event: AgentActorEvent): void;
  /**
   * The agent's conversation as it stands now (read-only; empty when the effect runs unbound). Tools
   * see it as `ToolContext.messages`: session state that tool calls recorded (an activated skill) is
   * read from it, so it is saved and restored with the conversation.
   */
  conversation?(): readonly Message[];
}
