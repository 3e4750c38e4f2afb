import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadMcpConfigFile, type McpServersConfig } from '../../mcp/mcp-config.js';
import { projectAuthDir } from './mcp-sign-in.js';

/** The `parseArgs` option of `--mcp-config <file>` (`run` and `chat`; given more than once, every file is read). */
export const MCP_CONFIG_FLAG = { 'mcp-config': { type: 'string', multiple: true } } as const;

/** The file the project's own servers are read from, when it exists. */
export const PROJECT_MCP_FILE = '.mcp.json';

/** The servers of the project's `.mcp.json` and the `--mcp-config` files, and where they came from. */
export interface McpFlag {
  /** The `--mcp-config` files (absolute), in order, for the session record. */
  files: string[];
  /** The project's `.mcp.json` (absolute), when it was read. */
  project?: string;
  servers: McpServersConfig;
}

/**
 * The servers of `<projectRoot>/.mcp.json` (when present) and of each `--mcp-config` file, in that
 * order: a server named again replaces the earlier one, so a file given on the command line wins over
 * the project's.
 */
export async function mcpServersFlag(
  files: readonly string[] | string | undefined,
  projectRoot?: string,
): Promise<McpFlag> {
  const given = (typeof files === 'string' ? [files] : (files ?? [])).map((f) => path.resolve(f));
  const projectFile = projectRoot === undefined ? undefined : path.resolve(projectRoot, PROJECT_MCP_FILE);
  const project =
    projectFile && !given.includes(projectFile) && existsSync(projectFile) ? projectFile : undefined;
  let servers: McpServersConfig = {};
  for (const file of project ? [project, ...given] : given) {
    servers = { ...servers, ...(await loadMcpConfigFile(file)) };
  }
  return { files: given, ...(project ? { project } : {}), servers };
}

/** One line naming the config files read (`MCP servers from .mcp.json (project), tools.json`), or undefined. */
export function mcpSourcesLine(flag: McpFlag, cwd = process.cwd()): string | undefined {
  const names = [
    ...(flag.project ? [`${path.relative(cwd, flag.project) || PROJECT_MCP_FILE} (project)`] : []),
    ...flag.files.map((f) => path.relative(cwd, f) || f),
  ];
  if (names.length === 0) return undefined;
  const count = Object.keys(flag.servers).length;
  return `MCP servers from ${names.join(', ')}: ${count === 0 ? 'none' : Object.keys(flag.servers).join(', ')}`;
}

/**
 * What a service (`agentloop worker`, with or without `--engine`) gives its agent of the servers of
 * {@link mcpServersFlag}, once `say` has named where they came from; `{}` when there are none. No one
 * is there to sign in: a server that needs it is reported (agentloop mcp login <name>).
 */
export async function serviceMcpOptions(
  files: readonly string[] | string | undefined,
  projectRoot: string,
  say: (line: string) => void,
): Promise<{ mcpServers?: McpServersConfig; mcpAuth?: { dir: string } }> {
  const mcp = await mcpServersFlag(files, projectRoot);
  const sources = mcpSourcesLine(mcp);
  if (sources) say(sources);
  return Object.keys(mcp.servers).length > 0
    ? { mcpServers: mcp.servers, mcpAuth: { dir: projectAuthDir(projectRoot) } }
    : {};
}
