import type { Message } from '../llm/message.js';
import {
  interruptedToolResult,
  type ToolCallStatus,
  type TranscriptEntry,
  type TranscriptEntryInput,
  toolCallLedger,
} from './transcript.js';

/** The tool result for a call that never started before the session stopped. */
export function notRunToolResult(name: string): string {
  return (
    `Tool call "${name}" was not run: the agent stopped before it started. ` +
    'Call it again if it is still needed.'
  );
}

/**
 * What a restore changed in a conversation rebuilt from a transcript with a gap (entries a failed
 * write lost, a file edited by hand), so that the API accepts it. Every list holds tool call ids.
 */
export interface ConversationRepair {
  /** Tool messages dropped: no call before them was waiting for them, and the transcript does not say what the call was. */
  droppedToolMessages: string[];
  /** Calls whose assistant message was lost: rebuilt from their `tool_call_started` lines, before their tool messages. */
  rebuiltCalls: string[];
  /** Calls whose tool message was lost before the next message: answered from the ledger (recorded, interrupted or not run). */
  answeredCalls: string[];
}

interface OpenCalls {
  /** The assistant message holding the calls, in the output. */
  message: Extract<Message, { role: 'assistant' }>;
  answered: Set<string>;
}

/**
 * Makes a conversation follow the tool-call rules the API enforces (every `tool` message right after
 * the assistant message with its call; every call answered before the next other message) by the
 * least change the transcript supports: a tool message whose call message was lost gets that message
 * back from the `tool_call_started` line (else it is dropped: nothing says what the call was), a
 * duplicate or stray tool message is dropped, and a call left unanswered before a later message gets
 * the answer the ledger gives (its recorded result, else interrupted or not run). The calls of the
 * last assistant message are left as they are: the caller decides about them. Pure.
 */
export function repairConversation(
  messages: readonly Message[],
  entries: readonly TranscriptEntry[],
): { messages: Message[]; repair: ConversationRepair; append: TranscriptEntryInput[] } {
  const ledger = toolCallLedger(entries);
  const repair: ConversationRepair = { droppedToolMessages: [], rebuiltCalls: [], answeredCalls: [] };
  const append: TranscriptEntryInput[] = [];
  const inMessages = new Set(
    messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [])),
  );
  const out: Message[] = [];
  let open: OpenCalls | undefined;
  let rebuilt: OpenCalls | undefined;

  const close = () => {
    for (const call of open?.message.tool_calls ?? []) {
      if (open!.answered.has(call.id)) continue;
      const name = call.type === 'function' ? call.function.name : 'tool';
      const answer = answerFor(ledger.get(call.id), name);
      out.push({ role: 'tool', tool_call_id: call.id, content: answer.content });
      if (answer.record) append.push({ ...answer.record, toolCallId: call.id, name });
      repair.answeredCalls.push(call.id);
    }
    open = undefined;
    rebuilt = undefined;
  };

  for (const m of messages) {
    if (m.role !== 'tool') {
      close();
      out.push(m);
      if (m.role === 'assistant' && m.tool_calls?.length) open = { message: m, answered: new Set() };
      continue;
    }
    const id = m.tool_call_id;
    if (open?.message.tool_calls?.some((c) => c.id === id) && !open.answered.has(id)) {
      open.answered.add(id);
      out.push(m);
      continue;
    }
    const status = ledger.get(id);
    const started = startedCall(entries, id);
    if (inMessages.has(id) || status === undefined || !started) {
      // Answered already, a call of another message, or a call nothing records: not a valid answer here.
      repair.droppedToolMessages.push(id);
      continue;
    }
    if (!rebuilt || open !== rebuilt) {
      close();
      const message: OpenCalls['message'] = { role: 'assistant', content: null, tool_calls: [] };
      out.push(message);
      rebuilt = { message, answered: new Set() };
      open = rebuilt;
    }
    rebuilt.message.tool_calls!.push({
      id,
      type: 'function',
      function: {
        name: started.name,
        arguments: typeof started.args === 'string' ? started.args : JSON.stringify(started.args ?? {}),
      },
    });
    inMessages.add(id);
    rebuilt.answered.add(id);
    repair.rebuiltCalls.push(id);
    out.push(m);
  }
  return { messages: out, repair, append };
}

/** Whether the repair changed anything. */
export function repaired(repair: ConversationRepair): boolean {
  return repair.droppedToolMessages.length + repair.rebuiltCalls.length + repair.answeredCalls.length > 0;
}

/** The answer of a call whose tool message was lost, and the `tool_call_finished` to record for it. */
function answerFor(
  status: ToolCallStatus | undefined,
  name: string,
): {
  content: string;
  record?: Omit<Extract<TranscriptEntryInput, { kind: 'tool_call_finished' }>, 'toolCallId' | 'name'>;
} {
  if (status?.status === 'completed') return { content: status.result };
  const content =
    status?.status === 'started-no-result' ? interruptedToolResult(name) : notRunToolResult(name);
  return { content, record: { kind: 'tool_call_finished', result: content, isError: true, durationMs: 0 } };
}

function startedCall(entries: readonly TranscriptEntry[], id: string) {
  for (const e of entries) if (e.kind === 'tool_call_started' && e.toolCallId === id) return e;
  return undefined;
}
