import { type StreamResponse, TaskStatus } from '@a2a-js/sdk';
import { progressText } from '../../events/progress-text.js';
import type { AgentEvent } from '../../machines/emitted-events.js';
import { agentMessageJson, textPart } from './task-messages.js';

/** The `type` of the data part that carries an inner tool's progress report. */
export const TOOL_PROGRESS_PART = 'tool_progress';

/**
 * A running tool's progress report (`tool_progress`, docs/tool-progress.md) as A2A has it: a status
 * update that stays `working` (so it ends no stream; 0.3 clients get `final: false`), its message a
 * text part (`"<tool>: <message> (n/total)"`, when the report has text or numbers) and a data part
 * `{ type: "tool_progress", toolCallId, toolName, message?, progress?, total?, data? }`. Live only:
 * sent to the task's streaming callers, never kept in the transcript (nor pushed).
 */
export function progressEvent(
  taskId: string,
  contextId: string,
  event: AgentEvent<'tool_progress'>,
  scrub: (text: string) => string,
): StreamResponse {
  const report: Record<string, unknown> = {
    type: TOOL_PROGRESS_PART,
    toolCallId: event.toolCallId,
    toolName: event.name,
  };
  if (event.message !== undefined) report.message = scrub(event.message);
  if (event.progress !== undefined) report.progress = event.progress;
  if (event.total !== undefined) report.total = event.total;
  if (event.data !== undefined) report.data = event.data;
  const text = progressText(event);
  const parts = [
    ...(text ? [textPart(scrub(`${event.name}: ${text}`))] : []),
    { data: report, mediaType: 'application/json' },
  ];
  return {
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId,
        contextId,
        status: TaskStatus.fromJSON({
          state: 'TASK_STATE_WORKING',
          timestamp: new Date(event.timestamp).toISOString(),
          message: agentMessageJson(contextId, taskId, parts),
        }),
        metadata: undefined,
      },
    },
  };
}
