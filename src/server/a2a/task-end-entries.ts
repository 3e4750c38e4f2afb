import { Artifact } from '@a2a-js/sdk';
import type { Agent } from '../../agent/agent.js';
import type { TerminateReason } from '../../machines/emitted-events.js';
import { TASK_ARTIFACT_ENTRY } from './task-entries.js';
import { approvalPart, textPart } from './task-messages.js';

/** The entries that end a task's turn: the answer artifact (when completed) and the final status. */
export function endEntries(
  end: { reason: TerminateReason | 'waiting'; response: string },
  agent: Agent,
  cancelled: boolean,
  scrub: (text: string) => string,
  status: (
    state: string,
    parts?: Record<string, unknown>[],
  ) => {
    kind: 'event';
    event: string;
    data: unknown;
  },
  taskId: string,
): { kind: 'event'; event: string; data: unknown }[] {
  if (end.reason === 'waiting') {
    const pending = agent.pendingApprovals;
    const names = pending.map((call) => call.name).join(', ');
    return [
      status('TASK_STATE_INPUT_REQUIRED', [
        textPart(`approval needed for ${pending.length} tool call(s): ${names}`),
        ...pending.map((call) => approvalPart({ ...call, args: scrubArgs(call.args, scrub) })),
      ]),
    ];
  }
  const text = scrub(end.response);
  switch (end.reason) {
    case 'completed':
      return [
        {
          kind: 'event',
          event: TASK_ARTIFACT_ENTRY,
          data: {
            taskId,
            artifact: Artifact.toJSON(
              Artifact.fromJSON({ artifactId: `${taskId}-answer`, name: 'answer', parts: [textPart(text)] }),
            ),
          },
        },
        status('TASK_STATE_COMPLETED', [textPart(text)]),
      ];
    case 'question':
      return [status('TASK_STATE_INPUT_REQUIRED', [textPart(text)])];
    case 'interrupted':
      return [
        status(cancelled ? 'TASK_STATE_CANCELED' : 'TASK_STATE_FAILED', [
          textPart(cancelled ? 'canceled by the client' : 'interrupted'),
        ]),
      ];
    default:
      return [
        status('TASK_STATE_FAILED', [textPart(`the turn ended: ${end.reason}${text ? ` (${text})` : ''}`)]),
      ];
  }
}

function scrubArgs(args: unknown, scrub: (text: string) => string): unknown {
  try {
    return JSON.parse(scrub(JSON.stringify(args ?? null)));
  } catch {
    return scrub(String(args));
  }
}
