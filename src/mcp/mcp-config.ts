import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/**
 * Which calls of a server's tools ask the user first: `readonly` (default) asks for every tool not
 * annotated `readOnlyHint: true`; `always` asks for every call; `never` for none. A session policy
 * (`approval: 'never'`, the CLI's `--yes`) still overrides it.
 */
export type McpApproval = 'always' | 'never' | 'readonly';

/** A local server: a command started as a child process, spoken to over stdio. */
export interface McpStdioServerConfig {
  command: string;
  args?: string[];
  /** Added to a small safe default environment (PATH, HOME, ...), as the MCP SDK does. */
  env?: Record<string, string>;
  cwd?: string;
  approval?: McpApproval;
}

/** A remote server, spoken to over Streamable HTTP. */
export interface McpHttpServerConfig {
  url: string;
  /** Sent with every request (an `Authorization` header, for instance). */
  headers?: Record<string, string>;
  approval?: McpApproval;
}

/** One server of an `mcpServers` config. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** Servers by name, in the shape of the `mcpServers` object of an `mcp.json`. */
export type McpServersConfig = Record<string, McpServerConfig>;

const approval = z.enum(['always', 'never', 'readonly']);
const stringRecord = z.record(z.string(), z.string());

// Other keys that mcp.json files carry (`type`, `description`, `disabled`, ...) are allowed; those
// this runtime acts on are checked.
const stdioServer = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1, 'expected the command to start'),
  args: z.array(z.string()).optional(),
  env: stringRecord.optional(),
  cwd: z.string().optional(),
  approval: approval.optional(),
  disabled: z.boolean().optional(),
});

const httpServer = z.looseObject({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  headers: stringRecord.optional(),
  approval: approval.optional(),
  disabled: z.boolean().optional(),
});

const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** An `mcpServers` config that cannot be used: the message names the file (if any) and the key. */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}

/**
 * Checks an `mcpServers` object and returns the servers to start (those marked `disabled: true` are
 * left out). `source` names where it came from in errors (`mcp.json`, `createAgent`).
 */
export function parseMcpServers(value: unknown, source = 'mcpServers'): McpServersConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new McpConfigError(`${source}: expected an object of servers by name`);
  }
  const servers: McpServersConfig = {};
  for (const [name, raw] of Object.entries(value)) {
    const at = `${source}.${name}`;
    if (!SERVER_NAME.test(name)) {
      throw new McpConfigError(`${at}: a server name is 1-64 letters, digits, "_", "-" or "."`);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new McpConfigError(`${at}: expected an object with "command" (stdio) or "url" (HTTP)`);
    }
    const entry = raw as Record<string, unknown>;
    if (entry.type === 'sse') {
      throw new McpConfigError(`${at}.type: the SSE transport is not supported; use Streamable HTTP ("url")`);
    }
    const isHttp = 'url' in entry;
    if (isHttp && 'command' in entry) {
      throw new McpConfigError(`${at}: give either "command" (stdio) or "url" (HTTP), not both`);
    }
    if (!isHttp && !('command' in entry)) {
      throw new McpConfigError(
        `${at}: expected "command" (a local server over stdio) or "url" (Streamable HTTP)`,
      );
    }
    const parsed = (isHttp ? httpServer : stdioServer).safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const key = issue.path.length ? `.${issue.path.join('.')}` : '';
      throw new McpConfigError(`${at}${key}: ${issue.message}`);
    }
    if (parsed.data.disabled === true) continue;
    servers[name] = pickKnown(parsed.data);
  }
  return servers;
}

/** Only the fields this runtime acts on. */
function pickKnown(entry: Record<string, unknown>): McpServerConfig {
  const keys = ['command', 'args', 'env', 'cwd', 'url', 'headers', 'approval'];
  return Object.fromEntries(keys.filter((k) => entry[k] !== undefined).map((k) => [k, entry[k]])) as never;
}

/** Reads an `mcp.json`-style file: a JSON object with an `mcpServers` object. */
export async function loadMcpConfigFile(file: string): Promise<McpServersConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new McpConfigError(
      code === 'ENOENT' ? `MCP config file not found: ${file}` : `cannot read ${file}: ${String(error)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  const servers = (value as { mcpServers?: unknown } | null)?.mcpServers;
  if (servers === undefined) throw new McpConfigError(`${file}: expected an "mcpServers" object`);
  return parseMcpServers(servers, `${file}: mcpServers`);
}

/** Whether a server is reached over HTTP. */
export function isHttpServer(config: McpServerConfig): config is McpHttpServerConfig {
  return 'url' in config;
}
