import type * as AuthModule from '@modelcontextprotocol/sdk/client/auth.js';
import type * as ClientModule from '@modelcontextprotocol/sdk/client/index.js';
import type * as SseModule from '@modelcontextprotocol/sdk/client/sse.js';
import type * as StdioModule from '@modelcontextprotocol/sdk/client/stdio.js';
import type * as HttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import type * as AjvModule from '@modelcontextprotocol/sdk/validation/ajv';

/** The parts of the MCP SDK agentloop uses, loaded on first use. */
export interface McpSdk {
  Client: typeof ClientModule.Client;
  StdioClientTransport: typeof StdioModule.StdioClientTransport;
  StreamableHTTPClientTransport: typeof HttpModule.StreamableHTTPClientTransport;
  StreamableHTTPError: typeof HttpModule.StreamableHTTPError;
  SSEClientTransport: typeof SseModule.SSEClientTransport;
  /** The SDK's OAuth client flow (discovery, registration, PKCE, refresh) driven by a provider. */
  auth: typeof AuthModule.auth;
  UnauthorizedError: typeof AuthModule.UnauthorizedError;
  ErrorCode: typeof TypesModule.ErrorCode;
  McpError: typeof TypesModule.McpError;
  ToolListChangedNotificationSchema: typeof TypesModule.ToolListChangedNotificationSchema;
  validators: InstanceType<typeof AjvModule.AjvJsonSchemaValidator>;
}

/** What a user without the SDK reads when an agent has `mcpServers`. */
export const MISSING_MCP_SDK =
  'MCP servers need the optional dependency @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk';

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

/**
 * Loads the MCP SDK once, when an agent first starts an MCP server. It is an optional peer
 * dependency: agents without `mcpServers` never load it (it is most of the install and a third of
 * the import time of the main entry), and without it a server fails to start with
 * {@link MISSING_MCP_SDK}.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= (async () => {
    try {
      const [client, stdio, http, sse, auth, types, ajv] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/stdio.js'),
        import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
        import('@modelcontextprotocol/sdk/client/sse.js'),
        import('@modelcontextprotocol/sdk/client/auth.js'),
        import('@modelcontextprotocol/sdk/types.js'),
        import('@modelcontextprotocol/sdk/validation/ajv'),
      ]);
      loaded = {
        Client: client.Client,
        StdioClientTransport: stdio.StdioClientTransport,
        StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
        StreamableHTTPError: http.StreamableHTTPError,
        SSEClientTransport: sse.SSEClientTransport,
        auth: auth.auth,
        UnauthorizedError: auth.UnauthorizedError,
        ErrorCode: types.ErrorCode,
        McpError: types.McpError,
        ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
        validators: new ajv.AjvJsonSchemaValidator(),
      };
      return loaded;
    } catch (error) {
      loading = undefined;
      if (isMissingSdk(error)) throw new Error(MISSING_MCP_SDK, { cause: error });
      throw error;
    }
  })();
  return loading;
}

/** The SDK once {@link loadMcpSdk} has resolved (a server has started); throws before. */
export function mcpSdk(): McpSdk {
  if (!loaded) throw new Error('the MCP SDK is not loaded yet (loadMcpSdk() first)');
  return loaded;
}

function isMissingSdk(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    message.includes('@modelcontextprotocol/sdk')
  );
}
