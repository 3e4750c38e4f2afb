import { z } from 'zod';
import { defineTool, type Tool, type ToolProgress } from '../tools/define-tool.js';
import type { McpApproval } from './mcp-config.js';
import { mcpSdk } from './mcp-sdk.js';
import { mcpToolName } from './mcp-tool-name.js';

/** A tool as an MCP server lists it (`tools/list`), read defensively. */
export interface McpToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; title?: string };
}

/** How a listed tool is run: the server connection's call; `progress` hears the server's progress notifications. */
export type McpCall = (
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  progress?: (report: ToolProgress) => void,
) => Promise<string>;

/**
 * A server's tool as one of the agent's tools: named `<server>__<tool>`, the server's JSON Schema
 * sent as its parameters and checked (with the MCP SDK's Ajv validator) before any call goes out, so a
 * bad call gets an error result naming it; approval from the server's `approval` setting and the
 * tool's `readOnlyHint`; the server's progress notifications for a call are its progress
 * (`ctx.progress`). Throws when the schema does not compile (the caller reports the tool).
 */
export function mcpTool(
  server: string,
  definition: McpToolDefinition,
  approval: McpApproval,
  call: McpCall,
): Tool {
  const schema = objectSchema(definition.inputSchema);
  // Tools are listed by a running server, so the SDK is loaded.
  const validate = mcpSdk().validators.getValidator(schema);
  const parameters = z.looseObject({}).superRefine((args, ctx) => {
    const verdict = validate(args);
    if (!verdict.valid) {
      const why = (verdict.errorMessage ?? 'does not match the schema').replace(/\bdata\b/g, 'arguments');
      ctx.addIssue({ code: 'custom', message: why });
    }
  });
  const readOnly = definition.annotations?.readOnlyHint === true;
  const description =
    definition.description?.trim() ||
    definition.title ||
    definition.annotations?.title ||
    `The "${definition.name}" tool of the MCP server "${server}".`;
  return defineTool({
    name: mcpToolName(server, definition.name),
    description,
    parameters,
    jsonSchema: schema,
    needsApproval: approval === 'always' ? true : approval === 'never' ? false : !readOnly,
    // Read-only tools are safe to call again after a crash; so are those the server says are idempotent.
    idempotent: readOnly || definition.annotations?.idempotentHint === true,
    mcp: { server, tool: definition.name },
    // The server's `notifications/progress` for this call become the call's `tool_progress` events.
    execute: (args, ctx) => call(definition.name, args, ctx.signal, (report) => ctx.progress(report)),
  });
}

/** The schema as the API requires a function's parameters: a JSON Schema object (`type: 'object'`). */
function objectSchema(input: unknown): Record<string, unknown> {
  const schema =
    typeof input === 'object' && input !== null && !Array.isArray(input)
      ? (input as Record<string, unknown>)
      : {};
  const { $schema: _ignored, ...rest } = schema;
  return { ...rest, type: 'object', properties: rest.properties ?? {} };
}

/** Reads `tools/list` entries, keeping those with a usable name. */
export function toolDefinitions(listed: readonly unknown[]): McpToolDefinition[] {
  return listed.flatMap((raw) => {
    const t = raw as Partial<McpToolDefinition> | null;
    if (!t || typeof t.name !== 'string' || t.name === '') return [];
    const annotations =
      typeof t.annotations === 'object' && t.annotations !== null ? t.annotations : undefined;
    return [
      {
        name: t.name,
        ...(typeof t.title === 'string' ? { title: t.title } : {}),
        ...(typeof t.description === 'string' ? { description: t.description } : {}),
        inputSchema: (t.inputSchema ?? {}) as Record<string, unknown>,
        ...(annotations ? { annotations } : {}),
      },
    ];
  });
}

/** Longest progress message passed on from a server; the rest is cut (a UI line, not a document). */
const MAX_PROGRESS_MESSAGE = 1_000;

/**
 * An MCP `notifications/progress` payload as a tool's progress report, read defensively (a server may
 * send anything): numbers kept when finite, the message when it is text (cut to a UI line's length).
 */
export function progressOfNotification(params: unknown): ToolProgress {
  const { progress, total, message } = (
    typeof params === 'object' && params !== null ? params : {}
  ) as Record<string, unknown>;
  const report: ToolProgress = {};
  if (typeof progress === 'number' && Number.isFinite(progress)) report.progress = progress;
  if (typeof total === 'number' && Number.isFinite(total)) report.total = total;
  if (typeof message === 'string' && message !== '')
    report.message =
      message.length > MAX_PROGRESS_MESSAGE ? `${message.slice(0, MAX_PROGRESS_MESSAGE)}…` : message;
  return report;
}
