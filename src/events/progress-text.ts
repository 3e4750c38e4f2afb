import type { ToolProgressInfo } from '../machines/emitted-events.js';

/**
 * A tool's progress report as one short line of text: its message and `progress/total` (or the bare
 * count), e.g. `page 2 (2/5)`; `''` when it reported neither (only `data`). Shared by the places that
 * show progress as text: the CLI, the MCP server's progress notifications, the A2A server's `working` updates.
 */
export function progressText(report: Pick<ToolProgressInfo, 'message' | 'progress' | 'total'>): string {
  const count =
    report.progress === undefined
      ? ''
      : report.total === undefined
        ? String(report.progress)
        : `${report.progress}/${report.total}`;
  const message = report.message?.trim() ?? '';
  if (message && count) return `${message} (${count})`;
  return message || count;
}
