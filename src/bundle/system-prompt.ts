import type { AgentPersona, MenuItem } from './agent-file-parser.js';

/** What the system prompt is built from (an agent file plus its session). */
export interface SystemPromptInput {
  name: string;
  title: string;
  icon?: string;
  persona: AgentPersona;
  /** The agent's own rules (`<rules>`), variables filled. */
  rules?: string[];
  menu: MenuItem[];
  /** `<prompts>` bodies by id, for `action="#id"` commands. */
  prompts?: Record<string, string>;
  /** The output folder's path, shown so the model knows where `save_output` writes. */
  outputFolder?: string;
  /** Fills `{variables}` in the agent's prose; identity by default. */
  fill?: (text: string) => string;
}

const TOOL_RULES = `TOOLS: USE THEM, DO NOT PRETEND
- You have three tools: read_file, execute_workflow and save_output. Files are not in your context until a tool returns them.
- When an instruction says to load or read a file, call read_file. Never say a file is loaded, and never quote or summarize its content, before the tool result is in front of you.
- When the user picks a command that runs a workflow, call execute_workflow with the workflow path shown below, wait for the result, then follow its instructions.
- Write documents only with save_output, into the output folder. Never claim a file was saved unless save_output returned success.
- Paths may use {bundle-root}, {core-root}, {project-root}, {output_folder}, {config_source}:key and the config variables; the tools resolve them.
- If a tool returns an error, read it, tell the user plainly what went wrong, and correct the call or ask how to go on.`;

const STYLE_RULES = `CONVERSATION STYLE
For guided workflows (instructions with <step n="..."> elements):
- Start each step by showing its number and goal, e.g. "Step 2: Refine the problem statement", with a line of context on where the user stands.
- Where an <action> asks you to suggest, guide or prompt, you may offer several related items as a list: they are ideas for the user to weigh, not questions to answer one by one.
- Where an <ask> wants input from the user, ask exactly one clear question and wait for the answer.
- Honour optional steps (optional="true"), conditions (if="...") and repeats (repeat="...") as written; follow <goto> and <check> as control flow.
- At a <template-output>, fill that section of the template from what you learned, show it, and save with save_output when the instructions say to save.
In every conversation:
- Keep replies focused: two to four sentences unless the step needs more.
- Ask one direct question at a time.
- Be warm and conversational, not a form to fill in; paraphrase the user's answer before moving on.
- When something is unclear, ask a follow-up question before going further.`;

/** A menu target marked "todo": the command exists but does nothing yet. */
export function isTodo(target: string): boolean {
  return target.trim().toLowerCase() === 'todo';
}

/** A workflow file (`workflow.yaml`, `workflow-create-prd.md`): `exec=` of one runs through execute_workflow. */
export function isWorkflowFile(target: string): boolean {
  return /(^|\/)workflow[^/]*\.(ya?ml|md)$/i.test(target.trim());
}

function describeCommand(item: MenuItem, index: number, prompts: Record<string, string>): string {
  const head = `${index + 1}. ${item.cmd} - ${item.label}`;
  const lines = [head];
  for (const t of item.targets) {
    if (isTodo(t.target)) {
      lines.push('   Not implemented yet ("todo"): tell the user so; do not call a tool for it.');
      continue;
    }
    if (t.kind === 'exec' && isWorkflowFile(t.target)) {
      lines.push(`   Runs workflow: execute_workflow({ workflow_path: "${t.target}" })`);
      continue;
    }
    switch (t.kind) {
      case 'workflow':
        lines.push(`   Runs workflow: execute_workflow({ workflow_path: "${t.target}" })`);
        break;
      case 'validate-workflow':
        lines.push(`   Validates with: execute_workflow({ workflow_path: "${t.target}", mode: "validate" })`);
        break;
      case 'exec':
        lines.push(`   Executes: read_file("${t.target}") and carry out what it says, exactly`);
        break;
      case 'tmpl':
        lines.push(`   Template: read_file("${t.target}")`);
        break;
      case 'data':
        lines.push(`   Data: read_file("${t.target}") and use it as {data}`);
        break;
      case 'action': {
        const id = t.target.startsWith('#') ? t.target.slice(1) : undefined;
        const body = id ? prompts[id] : t.target;
        lines.push(
          id && body === undefined
            ? `   Prompt #${id} is missing from the agent file`
            : `   Do: ${body?.replace(/\n/g, '\n       ')}`,
        );
        break;
      }
    }
  }
  if (item.kind === 'help') lines.push('   Show this numbered command list again');
  if (item.kind === 'exit') lines.push('   Say goodbye and leave the persona (ask for confirmation first)');
  return lines.join('\n');
}

/**
 * The system prompt of a bundle agent: persona, tool-usage rules, its commands with the tool call
 * each one maps to, and the conversational rules for guided workflows (spec §6, §6.1).
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const fill = input.fill ?? ((t: string) => t);
  const p = input.persona;
  const prompts = input.prompts ?? {};
  const sections = [
    `You are ${input.name}${input.icon ? ` ${input.icon}` : ''}, ${input.title}.`,
    p.role && `ROLE\n${fill(p.role)}`,
    p.identity && `IDENTITY\n${fill(p.identity)}`,
    p.communicationStyle && `COMMUNICATION STYLE\n${fill(p.communicationStyle)}`,
    p.principles && `PRINCIPLES\n${fill(p.principles)}`,
    input.rules?.length ? `RULES\n${input.rules.map((r) => `- ${fill(r)}`).join('\n')}` : '',
    TOOL_RULES,
    `COMMANDS\nThe user picks a command by number, by its trigger (e.g. ${input.menu[0]?.cmd ?? '*help'}) or by a close match of its text. Stay in character until *exit.\n${input.menu
      .map((item, i) => describeCommand(item, i, prompts))
      .join('\n')}`,
    `RUNNING A WORKFLOW
1. Take the workflow path from the command above and call execute_workflow with it.
2. Wait for the result: the resolved config, the instructions and the template.
3. Follow the instructions in order, one step at a time, with the user.
4. Save what the workflow produces with save_output${input.outputFolder ? ` (output folder: ${input.outputFolder})` : ''}.`,
    STYLE_RULES,
  ];
  return sections.filter(Boolean).join('\n\n');
}
