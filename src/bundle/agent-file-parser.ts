import { parse as parseYaml } from 'yaml';
import { BundleError } from './bundle-error.js';
import { child, children, parseXml, textOf, type XmlNode } from './xml-tree.js';

/**
 * `cmds`: `<critical-actions><i>` + `<cmds><c>`; `menu`: `<activation><step>` + `<menu><item>`;
 * `skill`: a BMAD 6.12 agent skill (SKILL.md + customize.toml's `[agent]` block).
 */
export type AgentDialect = 'cmds' | 'menu' | 'skill';

/** What a menu item does. `run-workflow` and `workflow` are both `workflow`; `skill` activates a skill. */
export type MenuKind =
  | 'skill'
  | 'help'
  | 'exit'
  | 'workflow'
  | 'validate-workflow'
  | 'exec'
  | 'action'
  | 'tmpl'
  | 'data'
  | 'text';

/** One target attribute of a menu item. */
export interface MenuTarget {
  kind: Exclude<MenuKind, 'help' | 'exit' | 'text'>;
  /** The attribute as written (`run-workflow`, `workflow`, ...). */
  attribute: string;
  /** The raw value, variables unresolved. */
  target: string;
}

/** One command of an agent, in file order. */
export interface MenuItem {
  /** The trigger, e.g. `*help`. */
  cmd: string;
  label: string;
  kind: MenuKind;
  /** The main target (the first of `targets`), raw. */
  target?: string;
  /** Every target attribute in precedence order (a `*retrospective` may run a workflow with `data`). */
  targets: MenuTarget[];
}

export interface AgentPersona {
  role: string;
  identity: string;
  communicationStyle: string;
  principles: string;
}

/** An agent file of either dialect, in one model. */
export interface AgentFile {
  file: string;
  id: string;
  name: string;
  title: string;
  icon: string;
  dialect: AgentDialect;
  /** The XML sat in a fenced code block. */
  fencedXml: boolean;
  frontMatter: Record<string, unknown> | undefined;
  persona: AgentPersona;
  /** `<critical-actions><i>` texts, or for the menu dialect the activation steps, which play that role. */
  criticalActions: string[];
  hasCriticalActionsElement: boolean;
  activationSteps: { n: string; text: string }[];
  rules: string[];
  menu: MenuItem[];
  /** `<prompts><prompt id>` bodies by id, for `action="#id"`. */
  prompts: Record<string, string>;
}

const TARGET_ATTRIBUTES: [string, MenuTarget['kind']][] = [
  ['run-workflow', 'workflow'],
  ['workflow', 'workflow'],
  ['validate-workflow', 'validate-workflow'],
  ['exec', 'exec'],
  ['action', 'action'],
  ['tmpl', 'tmpl'],
  ['data', 'data'],
];

function clean(text: string): string {
  return text.trim().replace(/[ \t]*\n[ \t]*/g, '\n');
}

/** Splits the front matter (YAML between `---` lines at the top) from the body. */
function splitFrontMatter(
  text: string,
  file: string,
): { frontMatter?: Record<string, unknown>; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { body: text };
  try {
    const data = parseYaml(match[1] ?? '') as unknown;
    const frontMatter = data && typeof data === 'object' ? (data as Record<string, unknown>) : undefined;
    return { frontMatter, body: text.slice(match[0].length) };
  } catch (error) {
    throw new BundleError('parse', `Invalid front matter in ${file}: ${(error as Error).message}`, { file });
  }
}

/** Finds the `<agent>` XML, fenced (```xml) or bare, and the line it starts on. */
function extractAgentXml(body: string, file: string): { xml: string; fenced: boolean; line: number } {
  const fence = /^([ \t]*)(```+|~~~+)[^\n]*\n([\s\S]*?)^\1\2[ \t]*$/gm;
  for (const match of body.matchAll(fence)) {
    const inner = match[3] ?? '';
    const start = inner.search(/<agent[\s>]/);
    if (start >= 0) {
      const end = inner.lastIndexOf('</agent>');
      const offset = (match.index ?? 0) + match[0].indexOf(inner) + start;
      const xml = end > start ? inner.slice(start, end + '</agent>'.length) : inner.slice(start);
      return { xml, fenced: true, line: body.slice(0, offset).split('\n').length };
    }
  }
  const start = body.search(/<agent[\s>]/);
  if (start < 0) throw new BundleError('parse', `No <agent> element in ${file}`, { file });
  const end = body.lastIndexOf('</agent>');
  const xml = end > start ? body.slice(start, end + '</agent>'.length) : body.slice(start);
  return { xml, fenced: false, line: body.slice(0, start).split('\n').length };
}

function parseMenu(container: XmlNode | undefined, itemName: string): MenuItem[] {
  return children(container, itemName).map((node) => {
    const cmd = (node.attrs.cmd ?? node.attrs.trigger ?? '').trim();
    const targets: MenuTarget[] = [];
    for (const [attribute, kind] of TARGET_ATTRIBUTES) {
      const value = node.attrs[attribute];
      if (value !== undefined) targets.push({ kind, attribute, target: value.trim() });
    }
    const first = targets[0];
    const lower = cmd.toLowerCase();
    const kind: MenuKind = first
      ? first.kind
      : lower === '*help' || lower === 'help'
        ? 'help'
        : lower === '*exit' || lower === 'exit'
          ? 'exit'
          : 'text';
    return { cmd, label: clean(textOf(node)), kind, target: first?.target, targets };
  });
}

function parseSteps(container: XmlNode | undefined): { n: string; text: string }[] {
  return children(container, 'step').map((step, index) => ({
    n: step.attrs.n ?? String(index + 1),
    text: clean(textOf(step)),
  }));
}

/**
 * Parses an agent `.md` (or bare XML) file of either dialect. Throws a {@link BundleError} naming the
 * file (and line) when there is no `<agent>` element or its XML is malformed.
 */
export function parseAgentFile(text: string, file: string): AgentFile {
  const { frontMatter, body } = splitFrontMatter(text.replace(/^\uFEFF/, ''), file);
  const { xml, fenced, line } = extractAgentXml(body, file);
  const parsed = parseXml(xml);
  if ('error' in parsed) {
    throw new BundleError(
      'parse',
      `Malformed agent XML in ${file} at line ${line + parsed.line - 1}: ${parsed.error}`,
      {
        file,
      },
    );
  }
  const agent = parsed.nodes.find((n) => n.name === 'agent');
  if (!agent) throw new BundleError('parse', `No <agent> element in ${file}`, { file });
  const activation = child(agent, 'activation');
  const init = child(activation, 'init');
  const criticalElement = child(agent, 'critical-actions');
  const menuElement = child(agent, 'menu');
  const cmdsElement = child(agent, 'cmds');
  const dialect: AgentDialect =
    menuElement && !cmdsElement ? 'menu' : criticalElement || cmdsElement ? 'cmds' : 'menu';
  const activationSteps = init ? parseSteps(init) : parseSteps(activation);
  const persona = child(agent, 'persona');
  const rulesNode = child(activation, 'rules') ?? child(agent, 'rules');
  const prompts: Record<string, string> = {};
  for (const prompt of children(child(agent, 'prompts'), 'prompt')) {
    if (prompt.attrs.id) prompts[prompt.attrs.id] = clean(textOf(prompt));
  }
  const id = agent.attrs.id?.trim() || file;
  return {
    file,
    id,
    name: agent.attrs.name?.trim() ?? '',
    title: agent.attrs.title?.trim() ?? '',
    icon: agent.attrs.icon?.trim() ?? '',
    dialect,
    fencedXml: fenced,
    frontMatter,
    persona: {
      role: clean(textOf(child(persona, 'role'))),
      identity: clean(textOf(child(persona, 'identity'))),
      communicationStyle: clean(textOf(child(persona, 'communication_style'))),
      principles: clean(textOf(child(persona, 'principles'))),
    },
    criticalActions: criticalElement
      ? children(criticalElement, 'i').map((i) => clean(textOf(i)))
      : activationSteps.map((s) => s.text),
    hasCriticalActionsElement: criticalElement !== undefined,
    activationSteps,
    rules: clean(textOf(rulesNode))
      .split('\n')
      .map((r) => r.replace(/^[-*]\s*/, '').trim())
      .filter(Boolean),
    menu: menuElement ? parseMenu(menuElement, 'item') : parseMenu(cmdsElement, 'c'),
    prompts,
  };
}

/** True when the text holds an `<agent>` element (and not only `<agent-config>` or `<agent-manifest>`). */
export function looksLikeAgentFile(text: string): boolean {
  return /<agent[\s>]/.test(text);
}
