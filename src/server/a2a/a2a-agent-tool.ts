import { type AgentCard, SendMessageRequest, type StreamResponse, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { z } from 'zod';
import { traceCarrierOf } from '../../telemetry/trace-parent.js';
import { defineTool, type Tool } from '../../tools/define-tool.js';
import { stateName } from './task-views.js';

/** What `a2aAgentTool` takes. */
export interface A2aAgentToolOptions {
  /** The remote agent's base URL (its card is at `/.well-known/agent-card.json`). */
  url: string;
  /** The tool's name (default `ask_<the card's name>`). */
  name?: string;
  /** A bearer token, or headers, sent with every call (the card's security schemes say which). */
  auth?: { token: string } | { headers: Record<string, string> };
  /**
   * The W3C `traceparent` to send with a call instead of the call's own trace context, given the
   * call's session and tool call ids (`undefined`: the call's own; `''`: none). Without it, a local agent with
   * telemetry (`createAgent({ telemetry })`) sends its tool call's span, so the remote turn joins the
   * local trace as a child of the call.
   */
  traceparent?: (call: { sessionId: string; toolCallId: string }) => string | undefined;
  /** How long one call may take in ms (default: the agent's tool timeout). */
  timeoutMs?: number;
  /** `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

/** A remote task waiting for approval, per local session. */
interface Waiting {
  taskId: string;
  contextId: string;
  calls: { toolCallId: string; toolName: string; args: unknown }[];
}

/**
 * A remote A2A agent as a tool of a local agent: reads the remote card, sends the model's `message`
 * (in one remote context per local session), streams the answer as the call's progress (`tool_progress`
 * events: each piece of text, each state of the remote task) and returns it. A
 * remote task that waits for approval (`input-required`) comes back as a result asking the model to
 * call the tool again with `approve`; `approve: true` needs the local agent's approval (the local
 * user decides on the remote call), `approve: false` declines with `reason`. When the local turn is
 * interrupted, the remote task is canceled. The remote card's security: `auth`. Each call carries the
 * local call's trace context (`traceparent`, `tracestate`) when the local agent has telemetry.
 */
export async function a2aAgentTool(options: A2aAgentToolOptions): Promise<Tool> {
  const baseFetch = options.fetch ?? fetch;
  const headers: Record<string, string> =
    options.auth && 'token' in options.auth
      ? { authorization: `Bearer ${options.auth.token}` }
      : { ...(options.auth && 'headers' in options.auth ? options.auth.headers : {}) };
  const fetchImpl: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [key, value] of Object.entries(headers)) merged.set(key, value);
    return baseFetch(input, { ...init, headers: merged });
  };
  const resolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } });
  let card: AgentCard;
  try {
    card = (await resolver.resolve(options.url)) as AgentCard;
  } catch (error) {
    throw new Error(
      `a2aAgentTool: could not read the agent card at ${options.url}/.well-known/agent-card.json (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const client: Client = await new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
  }).createFromAgentCard(card);
  const name = options.name ?? `ask_${card.name.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64);
  const contexts = new Map<string, string>();
  const waiting = new Map<string, Waiting>();
  const skills = card.skills.map((s) => `${s.name}: ${s.description}`).join('; ');

  return defineTool({
    name,
    description:
      `Asks the remote agent "${card.name}" (${card.description})${skills ? `. Its skills: ${skills}` : ''}. ` +
      'Send `message`; when it waits for approval of a call, call again with `approve` (and `reason` when declining).',
    parameters: z.object({
      message: z.string().optional().describe('what to ask the remote agent'),
      approve: z.boolean().optional().describe('answers the approval the remote agent waits for'),
      reason: z.string().optional().describe('why the remote call is declined'),
    }),
    // Approving a remote agent's call is the local user's decision.
    needsApproval: (args) => args.approve === true,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    execute: async (args, ctx) => {
      const pending = waiting.get(ctx.sessionId);
      let request: SendMessageRequest;
      if (args.approve !== undefined) {
        if (!pending) return `${card.name} is not waiting for an approval; send a message instead`;
        waiting.delete(ctx.sessionId);
        request = messageRequest(
          [{ data: { approved: args.approve, ...(args.reason ? { reason: args.reason } : {}) } }],
          { contextId: pending.contextId, taskId: pending.taskId },
        );
      } else {
        if (!args.message) return 'give `message` (what to ask) or `approve`';
        const contextId = contexts.get(ctx.sessionId);
        request = messageRequest([{ text: args.message }], contextId ? { contextId } : {});
      }
      const chosen = options.traceparent?.({ sessionId: ctx.sessionId, toolCallId: ctx.toolCallId });
      const trace =
        chosen === undefined ? traceCarrierOf(ctx.telemetry) : chosen ? { traceparent: chosen } : undefined;
      const abort = new AbortController();
      let taskId = request.message?.taskId ?? '';
      const onAbort = () => {
        abort.abort();
        if (taskId) void client.cancelTask({ tenant: '', id: taskId, metadata: undefined }).catch(() => {});
      };
      if (ctx.signal.aborted) throw new Error('interrupted before the remote agent was asked');
      ctx.signal.addEventListener('abort', onAbort);
      let answer = '';
      let last: StreamResponse | undefined;
      try {
        const stream = client.sendMessageStream(request, {
          signal: abort.signal,
          ...(trace ? { serviceParameters: { ...trace } } : {}),
        });
        for await (const event of stream) {
          last = event;
          const payload = event.payload;
          if (payload?.$case === 'task') {
            taskId = payload.value.id;
            contexts.set(ctx.sessionId, payload.value.contextId);
          } else if (payload?.$case === 'artifactUpdate') {
            const text = partsText(payload.value.artifact?.parts ?? []);
            if (payload.value.append) {
              answer += text;
              if (text) ctx.progress({ message: text, data: { taskId, text } });
            } else answer = text;
          } else if (payload?.$case === 'statusUpdate') {
            const state = stateName(payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
            // A `working` update that says something: the remote agent's own tool's progress, passed on.
            const said = state === 'working' ? partsText(payload.value.status?.message?.parts ?? []) : '';
            ctx.progress({ message: `${card.name}: ${said || state}`, data: { taskId, state } });
          }
        }
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
      }
      if (ctx.signal.aborted) throw new Error(`interrupted; the remote task ${taskId} was canceled`);
      const status = last?.payload?.$case === 'statusUpdate' ? last.payload.value.status : undefined;
      const state = status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
      const said = partsText(status?.message?.parts ?? []);
      if (state === TaskState.TASK_STATE_COMPLETED) return answer || said;
      if (state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        const calls = (status?.message?.parts ?? []).flatMap((part) => {
          const value =
            part.content?.$case === 'data' ? (part.content.value as Record<string, unknown>) : undefined;
          return value?.type === 'approval_request'
            ? [{ toolCallId: String(value.toolCallId), toolName: String(value.toolName), args: value.args }]
            : [];
        });
        const contextId = contexts.get(ctx.sessionId) ?? '';
        if (calls.length === 0) return `${card.name} asks: ${said}`;
        waiting.set(ctx.sessionId, { taskId, contextId, calls });
        const list = calls.map((c) => `${c.toolName} ${JSON.stringify(c.args)}`).join('; ');
        return (
          `${card.name} waits for approval before it runs: ${list}. Call ${name} with { "approve": true } to ` +
          `approve (the user is asked), or { "approve": false, "reason": "..." } to decline.`
        );
      }
      throw new Error(`${card.name} ended its task ${stateName(state)}${said ? `: ${said}` : ''}`);
    },
  });
}

function messageRequest(parts: Record<string, unknown>[], ids: { contextId?: string; taskId?: string }) {
  return SendMessageRequest.fromJSON({
    message: { messageId: `msg-${crypto.randomUUID()}`, role: 'ROLE_USER', parts, ...ids },
  });
}

function partsText(parts: { content?: { $case: string; value: unknown } | undefined }[]): string {
  return parts.flatMap((p) => (p.content?.$case === 'text' ? [String(p.content.value)] : [])).join('');
}
