import type { Bmad6AgentSkill, Bmad6MenuItem } from './bmad6-agent-skill.js';

// The system prompt and greeting of a BMAD 6.12 agent skill. agentloop carries out the skill's
// "On Activation" steps itself (resolve the agent block, load config and persistent facts, greet,
// show the menu), so no script runs; the prompt says what was done and what is left to the model.

/** What the prompt is built from. */
export interface Bmad6PromptInput {
  agent: Bmad6AgentSkill;
  /** Config values (`{user_name}`, `{planning_artifacts}`, ...), resolved. */
  config: Record<string, string>;
  /** Config files read, for the prompt's note. */
  configFiles: string[];
  outputFolder: string;
  /** Fills `{variables}` in the agent's prose. */
  fill: (text: string) => string;
}

/** What a menu item does, in one line: the skill it activates or the prompt it runs. */
export function menuAction(item: Bmad6MenuItem): string {
  if (item.skill) return item.skill;
  const prompt = item.prompt ?? '';
  return prompt.length > 60 ? `${prompt.slice(0, 57).trimEnd()}...` : prompt;
}

/** The menu as the greeting shows it: `1. [PRD] description -> bmad-prd`. */
export function formatBmad6Menu(menu: Bmad6MenuItem[]): string {
  return menu
    .map((item, i) => `${i + 1}. [${item.code}] ${item.description} -> ${menuAction(item)}`)
    .join('\n');
}

/** The greeting agentloop shows when the agent starts: icon, persona, `user_name`, the menu, bmad-help. */
export function buildBmad6Greeting(agent: Bmad6AgentSkill, userName: string | undefined): string {
  const b = agent.block;
  const who = `${b.name}${b.title ? `, your ${b.title}` : ''}`;
  return [
    `${b.icon ? `${b.icon} ` : ''}Hello ${userName || 'there'}! I'm ${who}.`,
    'You can invoke the bmad-help skill at any time for advice on what to do next.',
    '',
    'What would you like to do? Pick a number or a code:',
    '',
    formatBmad6Menu(b.menu),
  ].join('\n');
}

function describeItem(item: Bmad6MenuItem, index: number): string {
  const head = `${index + 1}. [${item.code}] ${item.description}`;
  if (item.skill)
    return `${head}\n   Activate: activate_skill({ name: "${item.skill}" }), then follow that skill's instructions`;
  return `${head}\n   Do: ${(item.prompt ?? '').replace(/\n/g, '\n       ')}`;
}

function list(items: string[], fill: (t: string) => string): string {
  return items.map((i) => `- ${fill(i)}`).join('\n');
}

/**
 * The system prompt of a 6.12 agent: who the agent is (the merged `[agent]` block), what agentloop
 * already did of its activation, its SKILL.md, the config, the menu with the tool call each item maps
 * to, and the tool rules.
 */
export function buildBmad6Prompt(input: Bmad6PromptInput): string {
  const { agent, fill } = input;
  const b = agent.block;
  const icon = b.icon ? ` ${b.icon}` : '';
  const config = Object.entries(input.config)
    .map(([k, v]) => `- ${k}: ${v}`)
    .join('\n');
  const sections = [
    `You are ${b.name}${icon}, ${b.title}. You run as the BMAD agent skill ${agent.skill}.`,
    b.role && `ROLE\n${fill(b.role)}`,
    b.identity && `IDENTITY\n${fill(b.identity)}`,
    b.communicationStyle && `COMMUNICATION STYLE\n${fill(b.communicationStyle)}`,
    b.principles.length > 0 && `PRINCIPLES\n${list(b.principles, fill)}`,
    `ACTIVATION: ALREADY DONE BY AGENTLOOP
agentloop carried out the "On Activation" steps of your SKILL.md before this conversation: no script is needed and none is run.
- Step 1 (resolve the agent block): done. The block above and the menu below are customize.toml merged with the team and personal overrides (${agent.customizationFiles.join(', ')}). Do not run resolve_customization.py.
- Step 4 (persistent facts): ${b.persistentFacts.length > 0 ? 'loaded; they are in the messages before the conversation.' : 'there are none.'}
- Step 5 (config): loaded from ${input.configFiles.join(', ')}; the values are below.
- Step 6 (greet): the user has seen your greeting and the menu. Keep prefixing your messages with ${b.icon || 'your icon'}.
${b.activationStepsPrepend.length > 0 ? `- Step 2, still yours to do before your first answer, in order:\n${list(b.activationStepsPrepend, fill)}\n` : ''}${b.activationStepsAppend.length > 0 ? `- Step 7, still yours to do before showing the menu again, in order:\n${list(b.activationStepsAppend, fill)}\n` : ''}Any step of a skill that says to run a script (uv run, python, a shell command) is satisfied or done by hand with the tools below; say so instead of pretending a script ran.`,
    `YOUR SKILL.md (for reference; its activation steps are done)\n${agent.body.trim()}`,
    config && `CONFIG\n${config}`,
    `MENU\nThe user picks an item by number, by code (e.g. ${b.menu[0]?.code ?? 'PRD'}) or by a close match of its description. A skill item means: call activate_skill with its name, then follow what it returns, staying in persona.\n${b.menu.map(describeItem).join('\n')}`,
    `TOOLS: USE THEM, DO NOT PRETEND
- activate_skill({ name }) loads a skill's instructions; read_file({ file_path }) reads a file (a bare relative path starts in the active skill's folder); save_output({ file_path, content }) writes a file. Nothing else on the machine is reachable and no command can be run.
- Files are not in your context until a tool returns them. Never quote or summarize a file before read_file returned it.
- Write documents only with save_output, into the output folder ${input.outputFolder} (config values such as {planning_artifacts} resolve in paths, e.g. {planning_artifacts}/prds/prd.md). Never claim a file was saved unless save_output returned success.
- If a tool returns an error, tell the user plainly what went wrong, and correct the call or ask how to go on.`,
  ];
  return sections.filter(Boolean).join('\n\n');
}

/**
 * The message to send for a reply that is only a menu code (any case) or number: the reply kept as
 * typed, with the item and the call it maps to, so the choice does not rest on the model's reading.
 */
export function bmad6MenuChoice(menu: Bmad6MenuItem[], text: string): string | undefined {
  const typed = text.trim();
  const number = /^\d+$/.test(typed) ? Number(typed) : undefined;
  const item =
    number !== undefined ? menu[number - 1] : menu.find((m) => m.code.toLowerCase() === typed.toLowerCase());
  if (!item) return undefined;
  const action = item.skill
    ? `activate_skill({ name: "${item.skill}" }) and follow that skill`
    : `do what its prompt says: ${item.prompt}`;
  return `${typed}\n\n(Menu item ${item.code}, "${item.description}": ${action}.)`;
}
