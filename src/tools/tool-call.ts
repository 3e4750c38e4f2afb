import type { ToolRegistry } from './tool-registry.js';

/** One tool call of an assistant message, as the machine keeps it (plain JSON, persistable). */
export interface ToolCallRequest {
  /** The `tool_call_id`. */
  id: string;
  name: string;
  /** The raw arguments text the model sent. */
  argsText: string;
  /** The parsed arguments, or `undefined` when `argsText` is not valid JSON. */
  args: unknown;
  /** Whether its tool or the session policy asks for approval (unless the user allowed the tool for the session). */
  needsApproval: boolean;
  /** Set for `task_completion`, `ask_question`, `converse` and other turn-ending tools. */
  loopBreaking?: 'completed' | 'question';
  /** Set for `update_plan`: a successful call's arguments become the plan. */
  updatesPlan?: true;
  /** Why the call cannot be run (the model server sent it without a function name): its error result. */
  problem?: string;
}

/** The result of one call, as the model will read it in its `role: 'tool'` message. */
export interface ToolResult {
  toolCallId: string;
  name: string;
  content: string;
  isError: boolean;
  durationMs: number;
  /** The call was cut short by the turn's deadline. */
  deadlineExceeded?: boolean;
}

/**
 * Session-wide approval policy. `'tool'` (default) asks the tool's own `needsApproval`; `'always'` and
 * `'never'` override it; a function decides per call (return `undefined` to defer to the tool).
 */
export type ApprovalPolicy =
  | 'tool'
  | 'always'
  | 'never'
  | ((call: { toolCallId: string; name: string; args: unknown }) => boolean | undefined);

/** Parses a call's argument text; an empty string means no arguments. */
export function parseToolArgs(argsText: string): unknown {
  if (argsText.trim() === '') return {};
  try {
    return JSON.parse(argsText);
  } catch {
    return undefined;
  }
}

/**
 * Builds the machine's record of a call: parsed arguments, whether its tool (or the session policy)
 * asks for approval, and whether it ends the turn. Unknown tools and unparseable arguments never need
 * approval: they fail without running. Tools the user allowed for the session are the machine's call.
 */
export function planToolCall(
  call: { id: string; name: string; argsText: string; problem?: string },
  registry: ToolRegistry,
  policy: ApprovalPolicy = 'tool',
  sessionId = '',
): ToolCallRequest {
  const args = parseToolArgs(call.argsText);
  const request: ToolCallRequest = {
    id: call.id,
    name: call.name,
    argsText: call.argsText,
    args,
    needsApproval: false,
  };
  if (call.problem !== undefined) {
    request.problem = call.problem;
    return request;
  }
  const tool = registry.get(call.name);
  if (!tool) return request;
  if (tool.loopBreaking) request.loopBreaking = tool.loopBreaking;
  if (tool.updatesPlan) request.updatesPlan = true;
  if (args === undefined || policy === 'never') return request;
  let decision: boolean | undefined;
  if (policy === 'always') decision = true;
  else if (typeof policy === 'function') decision = policy({ toolCallId: call.id, name: call.name, args });
  if (decision === undefined) {
    const own = tool.needsApproval;
    decision =
      typeof own === 'function' ? safeDecide(() => own(args, { toolCallId: call.id, sessionId })) : !!own;
  }
  request.needsApproval = decision;
  return request;
}

/** A `needsApproval` function that throws asks for approval: failing safe means asking the user. */
function safeDecide(decide: () => boolean): boolean {
  try {
    return decide();
  } catch {
    return true;
  }
}
