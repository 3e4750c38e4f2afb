import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AnySchema } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';

/** What a `tools/call` handler of the SDK gets besides the request: the call's signal, `_meta`, its channel back. */
export type ToolCallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * The part of a call's `extra` an own tool uses: the cancel signal, the request's `_meta` (its
 * `progressToken`), and notifications and requests tied to the call. The `Protocol` passes its whole
 * extra; the stdio lane (own-call-lane.ts) builds these four from the raw request.
 */
export type OwnCallExtra = Pick<ToolCallExtra, 'signal' | '_meta' | 'sendNotification' | 'sendRequest'>;

/**
 * A tool whose calls skip `McpServer`'s schema checks: it takes the raw `arguments` (an object, or
 * undefined) and checks them itself, and answers with a result its own types make.
 */
export type OwnToolCall = (
  args: Record<string, unknown> | undefined,
  extra: OwnCallExtra,
) => Promise<CallToolResult>;

/** One own tool: what `tools/list` shows of it (McpServer lists it from these schemas) and its call. */
export interface OwnTool {
  name: string;
  config: {
    title?: string;
    description?: string;
    inputSchema: AnySchema;
    outputSchema?: AnySchema;
    annotations?: ToolAnnotations;
  };
  call: OwnToolCall;
}

/** Each server's own tools by name, as `registerOwnTools` registered them (what the stdio lane routes by). */
const ownCalls = new WeakMap<McpServer, ReadonlyMap<string, OwnToolCall>>();

/** The calls `registerOwnTools` registered on `server`, by tool name (none: an empty map). */
export function ownToolCallsOf(server: McpServer): ReadonlyMap<string, OwnToolCall> {
  return ownCalls.get(server) ?? new Map();
}

/**
 * Registers `tools` on `server` with `registerTool` (so `McpServer` lists them, with their schemas as
 * JSON Schema) so that their calls go straight to their `OwnToolCall`, while every other tool call,
 * and `tools/list`, stay `McpServer`'s. The same list is recorded as the server's own calls
 * (`ownToolCallsOf`), which the stdio lane answers below the `Protocol` (own-call-lane.ts): what is
 * listed and what is routed come from one registration and cannot disagree.
 *
 * Why: `McpServer` checks each call's arguments against the tool's input schema and its structured
 * content against the output schema (`safeParseAsync` both, cold code once a call), and it offers no
 * way to list a tool's schemas without checking every call against them. `ask_<agent>` checks its
 * arguments by hand (with errors that name the call) and builds its result with typed code, so both
 * checks are work for nothing (bench/README.md, "mcpfast35"). On this path the SDK's `Server` still
 * checks the request and the result against `CallToolRequest` / `CallToolResult`.
 *
 * How, with the SDK's public API only: `McpServer` installs its `tools/call` handler on its `Server`
 * through `server.server.setRequestHandler`, once, at the first `registerTool` of a server made without
 * the `tools` capability. While the tools are registered, that method (on this instance only) wraps the
 * handler it is given in a router by tool name; afterwards the instance's method is the SDK's again.
 * Tools registered later with `server.registerTool` (users' tools next to the agents) are McpServer's
 * as usual, and so is a task-augmented call. Should a later SDK install its handler some other way, the
 * router is not installed and the tools' calls go through `McpServer` as registered: slower, still right.
 */
export function registerOwnTools(server: McpServer, tools: readonly OwnTool[]): void {
  const own = new Map(tools.map((tool) => [tool.name, tool.call]));
  const base = server.server;
  const install = base.setRequestHandler.bind(base);
  type Install = typeof base.setRequestHandler;
  const routed = (schema: Parameters<Install>[0], handler: Parameters<Install>[1]): void => {
    if (schema !== (CallToolRequestSchema as unknown)) {
      install(schema, handler);
      return;
    }
    const sdk = handler as unknown as (
      request: CallToolRequest,
      extra: ToolCallExtra,
    ) => Promise<CallToolResult>;
    install(CallToolRequestSchema, (request, extra) => {
      const call = own.get(request.params.name);
      return call && request.params.task === undefined
        ? call(request.params.arguments, extra)
        : sdk(request, extra);
    });
  };
  base.setRequestHandler = routed as Install;
  try {
    for (const tool of tools) {
      server.registerTool(tool.name, tool.config, (args: unknown, extra: ToolCallExtra) =>
        tool.call(args as Record<string, unknown> | undefined, extra),
      );
    }
  } finally {
    Reflect.deleteProperty(base, 'setRequestHandler'); // the prototype's method again
  }
  const before = ownCalls.get(server);
  ownCalls.set(server, before ? new Map([...before, ...own]) : own);
}
