import type { AgentFile } from './agent-file-parser.js';

/** The text the CLI prints when an agent starts: a greeting in persona and the numbered menu. */
export function buildGreeting(
  agent: Pick<AgentFile, 'name' | 'title' | 'icon' | 'menu'>,
  userName?: string,
): string {
  const who = `${agent.icon ? `${agent.icon} ` : ''}${agent.name}${agent.title ? `, ${agent.title}` : ''}`;
  const hello = userName ? `Hello ${userName}! I'm ${who}.` : `Hello! I'm ${who}.`;
  const menu = agent.menu.map((item, i) => `${i + 1}. ${item.cmd} - ${item.label}`).join('\n');
  return `${hello}\n\nWhat would you like to do? Pick a number or type a command:\n\n${menu}`;
}
