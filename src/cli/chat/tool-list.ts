import type pc from 'picocolors';
import type { Agent } from '../../agent/agent.js';
import { type ApprovalPolicy, planToolCall } from '../../tools/tool-call.js';
import { oneLine } from '../terminal/event-printer.js';
import { terminalSafe } from '../terminal/terminal-safe.js';

type Colors = ReturnType<typeof pc.createColors>;

/**
 * `/tools`: the agent's tools, its own first, then each MCP server's (with the server's state), one
 * line each: the name, whether a call asks first (`asks`, by `policy` as the agent applies it, or
 * `allowed` for the rest of the session) and the description's first line.
 */
export function toolList(agent: Agent, c: Colors, policy?: ApprovalPolicy): string[] {
  const servers = agent.mcpServers;
  const fromServer = new Set(servers.flatMap((s) => s.tools));
  const describe = (name: string) => {
    const tool = agent.registry.get(name);
    if (!tool) return undefined;
    // The rule as planToolCall applies it to a call with no arguments.
    const asks = planToolCall({ id: 'list', name, argsText: '{}' }, agent.registry, policy).needsApproval;
    const allowed = agent.alwaysAllowed.has(name);
    const mark = allowed ? c.green('allowed') : asks ? c.yellow('asks') : c.dim('runs');
    const text = oneLine(terminalSafe(tool.description.split('\n')[0] ?? ''), 70);
    return `  ${c.cyan(terminalSafe(name))} ${mark} ${c.dim(text)}`;
  };
  const lines = [c.bold('Tools')];
  for (const name of agent.registry.names) {
    if (fromServer.has(name)) continue;
    const line = describe(name);
    if (line) lines.push(line);
  }
  for (const server of servers) {
    const state = server.state === 'ready' ? c.green(server.state) : c.yellow(server.state);
    lines.push(
      c.bold(`MCP server ${terminalSafe(server.name)} (${state}${c.bold(`, ${server.tools.length} tools)`)}`),
    );
    for (const name of server.tools) {
      const line = describe(name);
      if (line) lines.push(line);
    }
  }
  return lines;
}
