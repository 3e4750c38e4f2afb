import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';

/** What a `tools/call` handler of the SDK gets besides the request: the call's signal, `_meta`, its channel back. */
export type ToolCallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * A tool whose calls skip `McpServer`'s schema checks: it takes the raw `arguments` (an object, or
 * undefined) and checks them itself, and answers with a result its own types make.
 */
export type OwnToolCall = (
  args: Record<string, unknown> | undefined,
  extra: ToolCallExtra,
) => Promise<CallToolResult>;

/**
 * Runs `register` (which registers tools on `server` with `registerTool`) so that calls of the tools
 * named in `own` go straight to their `OwnToolCall`, while every other tool call, and `tools/list`,
 * stay `McpServer`'s.
 *
 * Why: `McpServer` checks each call's arguments against the tool's input schema and its structured
 * content against the output schema (`safeParseAsync` both, cold code once a call), and it offers no
 * way to list a tool's schemas without checking every call against them. `ask_<agent>` checks its
 * arguments by hand (with errors that name the call) and builds its result with typed code, so both
 * checks are work for nothing (bench/README.md, "mcpfast35"). The SDK's `Server` under it still
 * checks the request and the result against `CallToolRequest` / `CallToolResult`.
 *
 * How, with the SDK's public API only: `McpServer` installs its `tools/call` handler on its `Server`
 * through `server.server.setRequestHandler`, once, at the first `registerTool` of a server made without
 * the `tools` capability. While `register` runs, that method (on this instance only) wraps the handler
 * it is given in a router by tool name; afterwards the instance's method is the SDK's again. Tools
 * registered later with `server.registerTool` (users' tools next to the agents) are McpServer's as
 * usual, and so is a task-augmented call. Should a later SDK install its handler some other way, the
 * router is not installed and the tools' calls go through `McpServer` as registered: slower, still right.
 */
export function withOwnToolCalls(
  server: McpServer,
  own: ReadonlyMap<string, OwnToolCall>,
  register: () => void,
): void {
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
    register();
  } finally {
    Reflect.deleteProperty(base, 'setRequestHandler'); // the prototype's method again
  }
}
