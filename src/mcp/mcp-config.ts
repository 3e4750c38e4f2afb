import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { McpConfigError } from './mcp-config-error.js';
import { fillServerPlaceholders, type PlaceholderEnv } from './mcp-placeholders.js';

export { McpConfigError } from './mcp-config-error.js';

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

/**
 * A remote server: over Streamable HTTP, or the older HTTP+SSE transport with `type: 'sse'`; without
 * a type, Streamable HTTP is tried first and SSE when the server answers as an SSE server.
 */
export interface McpHttpServerConfig {
  url: string;
  /** `http` (Streamable HTTP only), `sse` (the older HTTP+SSE transport); unset: either. */
  type?: 'http' | 'sse';
  /** Sent with every request (an `Authorization` header, for instance). */
  headers?: Record<string, string>;
  /** How to sign in when the server asks (OAuth): a pre-registered client, the scope to ask for. */
  oauth?: McpOAuthConfig;
  approval?: McpApproval;
}

/**
 * OAuth settings of a remote server. Without them a server that asks for sign-in gets a client
 * registered dynamically (when its authorization server offers it).
 */
export interface McpOAuthConfig {
  /** A client registered beforehand with the authorization server (no dynamic registration then). */
  clientId?: string;
  /** That client's secret, if it is a confidential client. */
  clientSecret?: string;
  /** The scope to ask for when the server does not say which. */
  scope?: string;
  /** An https URL of a client ID metadata document, used where the authorization server supports them. */
  clientMetadataUrl?: string;
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
  type: z.enum(['http', 'streamable-http', 'streamableHttp', 'sse']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  headers: stringRecord.optional(),
  oauth: z
    .strictObject({
      clientId: z.string().min(1).optional(),
      clientSecret: z.string().min(1).optional(),
      scope: z.string().optional(),
      clientMetadataUrl: z.url({ protocol: /^https$/, error: 'expected an https:// URL' }).optional(),
    })
    .optional(),
  approval: approval.optional(),
  disabled: z.boolean().optional(),
});

const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Checks an `mcpServers` object and returns the servers to start (those marked `disabled: true` are
 * left out), with `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`, `url` and `headers`
 * filled from `env` (default `process.env`). `source` names where it came from in errors (`mcp.json`,
 * `createAgent`).
 */
export function parseMcpServers(
  value: unknown,
  source = 'mcpServers',
  env: PlaceholderEnv = process.env,
): McpServersConfig {
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
    const given = raw as Record<string, unknown>;
    if (given.disabled === true) continue;
    const entry = fillServerPlaceholders(given, env, at);
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
    servers[name] = pickKnown(parsed.data);
  }
  return servers;
}

/** Only the fields this runtime acts on. */
function pickKnown(entry: Record<string, unknown>): McpServerConfig {
  const keys = ['command', 'args', 'env', 'cwd', 'url', 'headers', 'oauth', 'approval'];
  const known = Object.fromEntries(keys.filter((k) => entry[k] !== undefined).map((k) => [k, entry[k]]));
  // `type` only where it chooses something: `sse`, or Streamable HTTP alone (the other spellings).
  if ('url' in entry && entry.type !== undefined) known.type = entry.type === 'sse' ? 'sse' : 'http';
  return known as never;
}

/**
 * Reads an `mcp.json`-style file: a JSON object with an `mcpServers` object (placeholders filled from
 * `env`, default `process.env`).
 */
export async function loadMcpConfigFile(
  file: string,
  env: PlaceholderEnv = process.env,
): Promise<McpServersConfig> {
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
  return parseMcpServers(servers, `${file}: mcpServers`, env);
}

/** Whether a server is reached over HTTP. */
export function isHttpServer(config: McpServerConfig): config is McpHttpServerConfig {
  return 'url' in config;
}
