import { type BaseEvent, EventType } from '@ag-ui/core';
import type { Message } from '../../llm/message.js';
import type { TranscriptEntry } from '../session-imports.js';
import { contentText, messageId, messageIndexOf } from './message-ids.js';
import { toolCallEvents } from './run-events.js';

// The durable half of a run's events: what the transcript holds, mapped to AG-UI events that carry
// the entry's seq as their SSE id. A client that reconnects with the last id it saw gets these again
// from any process sharing the store (docs/serve.md, "Reconnect").

/** The transcript event that opens an AG-UI run (`data`: `{ runId, parentRunId? }`). */
export const RUN_STARTED_ENTRY = 'agui_run_started';
/** The transcript event that ends one (`data`: `{ runId, event }`, the run's last AG-UI event as sent). */
export const RUN_ENDED_ENTRY = 'agui_run_ended';

/** What mapping a transcript needs to remember from one entry to the next. */
export class TranscriptMapping {
  /** The conversation's length so far: the index the next message entry has. */
  messageCount = 0;
  /** Text messages this connection streamed live and has not ended: ended by their durable entry. */
  readonly open = new Set<string>();
  /** The AG-UI id of the tool message answering each call, known from its assistant message. */
  readonly #results = new Map<string, string>();
  /** Calls whose result went out from their `tool_call_finished` entry (their tool message adds nothing). */
  readonly #finished = new Set<string>();
  readonly #threadId: string;
  readonly #scrub: (text: string) => string;

  constructor(threadId: string, scrub: (text: string) => string) {
    this.#threadId = threadId;
    this.#scrub = scrub;
  }

  /** The AG-UI events of one entry (none for most entries: model calls, approvals, restores). */
  events(entry: TranscriptEntry): BaseEvent[] {
    const at = Date.parse(entry.at) || Date.now();
    if (entry.kind === 'message') return this.#message(entry.message, this.messageCount++, at);
    if (entry.kind === 'tool_call_finished') {
      this.#finished.add(entry.toolCallId);
      return [
        {
          type: EventType.TOOL_CALL_RESULT,
          messageId: this.#results.get(entry.toolCallId) ?? `result-${entry.toolCallId}`,
          toolCallId: entry.toolCallId,
          content: this.#scrub(entry.result),
          role: 'tool',
          timestamp: at,
        },
      ];
    }
    if (entry.kind !== 'event') return [];
    const data = (entry.data ?? {}) as { runId?: string; parentRunId?: string; event?: BaseEvent };
    if (entry.event === RUN_STARTED_ENTRY && typeof data.runId === 'string') {
      return [
        {
          type: EventType.RUN_STARTED,
          threadId: this.#threadId,
          runId: data.runId,
          ...(data.parentRunId ? { parentRunId: data.parentRunId } : {}),
          timestamp: at,
        },
      ];
    }
    if (entry.event === RUN_ENDED_ENTRY && data.event && typeof data.event === 'object') {
      return [...this.closeOpen(at), data.event];
    }
    return [];
  }

  /** Ends the text messages still open (a stream cut off before its message was kept). */
  closeOpen(at: number): BaseEvent[] {
    const events: BaseEvent[] = [...this.open].map((id) => ({
      type: EventType.TEXT_MESSAGE_END,
      messageId: id,
      timestamp: at,
    }));
    this.open.clear();
    return events;
  }

  /** Whether the call's assistant message was seen (its `TOOL_CALL_START` went out, now or before). */
  knowsCall(toolCallId: string): boolean {
    return this.#results.has(toolCallId);
  }

  /** Takes in entries written before the stream starts (their events are not sent). */
  learn(entries: readonly TranscriptEntry[]): void {
    for (const entry of entries) this.events(entry);
    this.open.clear();
  }

  #message(message: Message, index: number, at: number): BaseEvent[] {
    if (message.role === 'tool') {
      // A result the ledger did not record (a declined or interrupted call): its message is the result.
      if (this.#finished.has(message.tool_call_id)) return [];
      this.#finished.add(message.tool_call_id);
      const content = this.#scrub(contentText(message.content));
      return [
        {
          type: EventType.TOOL_CALL_RESULT,
          messageId: messageId(index),
          toolCallId: message.tool_call_id,
          content,
          role: 'tool',
          timestamp: at,
        },
      ];
    }
    if (message.role !== 'assistant') return [];
    const events: BaseEvent[] = [];
    const id = messageId(index);
    const streamed = [...this.open].filter((open) => messageIndexOf(open) === index);
    const text = contentText(message.content);
    if (streamed.length > 0) {
      for (const open of streamed) {
        events.push({ type: EventType.TEXT_MESSAGE_END, messageId: open, timestamp: at });
        this.open.delete(open);
      }
    } else if (text !== '') {
      events.push({ type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant', timestamp: at });
      events.push({
        type: EventType.TEXT_MESSAGE_CONTENT,
        messageId: id,
        delta: this.#scrub(text),
        timestamp: at,
      });
      events.push({ type: EventType.TEXT_MESSAGE_END, messageId: id, timestamp: at });
    }
    (message.tool_calls ?? []).forEach((call, position) => {
      if (call.type !== 'function') return;
      this.#results.set(call.id, messageId(index + 1 + position));
      events.push(
        ...toolCallEvents(
          { id: call.id, name: call.function.name, arguments: call.function.arguments },
          id,
          at,
        ),
      );
    });
    return events;
  }
}
