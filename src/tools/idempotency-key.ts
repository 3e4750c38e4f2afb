/**
 * The idempotency key of a tool call: `<session id>:<tool call id>`. The same for every run of the
 * call (a retry, a re-run after a crash, a restore on another worker), and never given to another
 * call: tool call ids are unique within a conversation (llm/tool-call-ids.ts) and session ids within
 * a store. Pass it to the service the tool calls (a payment API's `Idempotency-Key` header, a unique
 * column) so that a second run is recognised there.
 */
export function idempotencyKeyFor(sessionId: string, toolCallId: string): string {
  return `${sessionId}:${toolCallId}`;
}
