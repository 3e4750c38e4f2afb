import type { Message } from '../../../src/llm/message.js';
import type { Snapshot } from './agent-model.js';

const REST = new Set(['AwaitingInput', 'WaitingApproval', 'Completed', 'Error', 'Interrupted']);

/** The real-world checks made at every snapshot of the real actor. */
export function checkInvariants(previous: Message[] | undefined, snapshot: Snapshot): string[] {
  const problems: string[] = [];
  const { messages } = snapshot.context;
  const { pending } = snapshot.context.batch;
  const value = snapshot.value as string;
  if (previous) {
    const prefix = messages.slice(0, previous.length);
    if (prefix.length < previous.length || JSON.stringify(prefix) !== JSON.stringify(previous))
      problems.push('messages are not append-only: the previous array is not a prefix of the new one');
  }
  if (pending.length > 0 && value !== 'WaitingApproval')
    problems.push(`pending approvals ${pending.join(', ')} outside WaitingApproval (in ${value})`);
  let open: string[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'assistant') open = 'tool_calls' in m ? (m.tool_calls ?? []).map((c) => c.id) : [];
    else if (m.role === 'tool') {
      if (!open.includes(m.tool_call_id))
        problems.push(
          `tool message ${i} (${m.tool_call_id}) follows no assistant message that made that call`,
        );
    } else open = [];
  });
  if (REST.has(value)) {
    messages.forEach((m, i) => {
      if (m.role !== 'assistant' || !('tool_calls' in m) || !m.tool_calls?.length) return;
      let j = i + 1;
      const answers = new Map<string, number>();
      while (j < messages.length && messages[j]!.role !== 'assistant') {
        const t = messages[j]!;
        if (t.role === 'tool') answers.set(t.tool_call_id, (answers.get(t.tool_call_id) ?? 0) + 1);
        j++;
      }
      const last = j === messages.length;
      const open = last && value === 'WaitingApproval';
      for (const c of m.tool_calls) {
        const n = answers.get(c.id) ?? 0;
        if (n > 1 || (n === 0 && !open))
          problems.push(`tool call ${c.id} of message ${i} has ${n} tool messages (in ${value})`);
      }
      for (const id of answers.keys())
        if (!m.tool_calls.some((c) => c.id === id))
          problems.push(`tool message for ${id} answers no call of message ${i}`);
    });
  }
  return problems;
}
