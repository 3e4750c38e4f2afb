import path from 'node:path';
import { loadMcpConfigFile, type McpServersConfig } from '../mcp/mcp-config.js';

/** The `parseArgs` option of `--mcp-config <file>` (`run` and `chat`). */
export const MCP_CONFIG_FLAG = { 'mcp-config': { type: 'string' } } as const;

/** The servers of an `--mcp-config` file, and the file (absolute) for the session record. */
export interface McpFlag {
  file?: string;
  servers: McpServersConfig;
}

/** The `--mcp-config` flag's servers (none without it). */
export async function mcpServersFlag(file: string | undefined): Promise<McpFlag> {
  if (file === undefined) return { servers: {} };
  const abs = path.resolve(file);
  return { file: abs, servers: await loadMcpConfigFile(abs) };
}
