/** An element of an instructions file. Unknown tags are not elements: they stay in the text. */
export interface InstructionNode {
  /** Tag name (`action`, `ask`, `check`, `step`, ...) or `#text`. */
  tag: string;
  attrs: Record<string, string>;
  children: InstructionNode[];
  /** Text nodes only. */
  text?: string;
}

/** One `<step>` (or `<substep>`), attributes kept as written: `n` is a string (`"2a"`, `"7.5"`). */
export interface InstructionStep {
  n: string;
  goal?: string;
  title?: string;
  optional: boolean;
  if?: string;
  repeat?: string;
  /** The step's own tags in order (nested steps excluded). */
  tags: InstructionNode[];
  substeps: InstructionStep[];
}

/** What an instructions file yields; parsing never throws. */
export interface ParsedInstructions {
  /** Top-level steps in file order (also those inside `<workflow>` or `<task><flow>`). */
  steps: InstructionStep[];
  /** Tags outside any step (`<critical>`, `<llm>`, `<halt>`, ...). */
  preamble: InstructionNode[];
  /** `workflow`, `task` or `plain` (no wrapping element). */
  form: 'workflow' | 'task' | 'plain';
  /** The body was wrapped in a fenced code block. */
  fenced: boolean;
  root: InstructionNode;
}

/** Tags the parser treats as elements; any other `<...>` is text (placeholders such as `<epic>`). */
export const INSTRUCTION_TAGS = new Set([
  'workflow',
  'task',
  'llm',
  'flow',
  'step',
  'substep',
  'action',
  'ask',
  'check',
  'goto',
  'invoke-workflow',
  'invoke-task',
  'template-output',
  'critical',
  'elicit-required',
  'i',
  'halt',
  'notes',
  'note',
  'output',
  'guideline',
  'guidelines',
  'for-each',
  'loop',
  'break',
  'continue',
  'example',
  'format',
  'if',
]);

const TAG = /<(\/?)([A-Za-z][\w-]*)((?:\s+[\w:.-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'))?)*)\s*(\/?)>/g;
const ATTR = /([\w:.-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'))?/g;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decode(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos);/g, (_, name: string) => ENTITIES[name] ?? '');
}

function parseAttrs(source: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of source.matchAll(ATTR)) if (m[1]) attrs[m[1]] = decode(m[2] ?? m[3] ?? '');
  return attrs;
}

function textNode(text: string): InstructionNode {
  return { tag: '#text', attrs: {}, children: [], text };
}

/** Removes the fence lines around a fenced body (```xml ... ```), keeping what is inside. */
function unfence(source: string): { body: string; fenced: boolean } {
  const lines = source.split('\n');
  const fenceLines = lines.filter((l) => /^\s*```/.test(l)).length;
  const opening = lines.findIndex((l) => /^\s*```\s*xml\s*$/i.test(l));
  if (opening < 0 || fenceLines < 1) return { body: source, fenced: false };
  let closing = -1;
  for (let i = lines.length - 1; i > opening; i--) {
    if (/^\s*```\s*$/.test(lines[i] ?? '')) {
      closing = i;
      break;
    }
  }
  const kept = lines.filter((_, i) => i !== opening && i !== closing);
  return { body: kept.join('\n'), fenced: true };
}

/**
 * Builds the element tree leniently: a closing tag closes the nearest open element of that name
 * (elements left open inside it turn back into text, their children kept); a closing tag with no
 * open element, a `<` that starts no tag, and unknown tags are text.
 */
function buildTree(body: string): InstructionNode {
  const root: InstructionNode = { tag: '#root', attrs: {}, children: [] };
  const stack: { node: InstructionNode; raw: string }[] = [{ node: root, raw: '' }];
  const top = () => stack[stack.length - 1]!.node;
  const pushText = (text: string) => {
    if (!text) return;
    const siblings = top().children;
    const last = siblings[siblings.length - 1];
    if (last?.tag === '#text') last.text += decode(text);
    else siblings.push(textNode(decode(text)));
  };
  const unwind = (to: number) => {
    while (stack.length - 1 > to) {
      const { node, raw } = stack.pop()!;
      const parent = top().children;
      parent.pop();
      pushText(raw);
      for (const c of node.children) {
        if (c.tag === '#text') pushText(c.text ?? '');
        else parent.push(c);
      }
    }
  };
  let last = 0;
  for (const m of body.matchAll(TAG)) {
    const [raw, closing, name = '', attrs = '', selfClosing] = m;
    if (!INSTRUCTION_TAGS.has(name)) continue;
    pushText(body.slice(last, m.index));
    last = (m.index ?? 0) + raw.length;
    if (closing) {
      let at = -1;
      for (let i = stack.length - 1; i > 0; i--) {
        if (stack[i]!.node.tag === name) {
          at = i;
          break;
        }
      }
      if (at < 0) {
        pushText(raw);
        continue;
      }
      unwind(at);
      stack.pop();
      continue;
    }
    const node: InstructionNode = { tag: name, attrs: parseAttrs(attrs), children: [] };
    top().children.push(node);
    if (!selfClosing) stack.push({ node, raw });
  }
  pushText(body.slice(last));
  unwind(0);
  return root;
}

function toStep(node: InstructionNode, index: number): InstructionStep {
  const a = node.attrs;
  return {
    n: a.n ?? String(index + 1),
    goal: a.goal,
    title: a.title,
    optional: a.optional === 'true' || a.optional === '',
    if: a.if,
    repeat: a.repeat,
    tags: node.children.filter((c) => c.tag !== 'substep' && c.tag !== 'step'),
    substeps: node.children.filter((c) => c.tag === 'substep' || c.tag === 'step').map(toStep),
  };
}

/** Collects steps depth-first, not descending into steps (their substeps are kept on them). */
function collect(
  node: InstructionNode,
  steps: InstructionNode[],
  preamble: InstructionNode[],
  top: boolean,
): void {
  for (const c of node.children) {
    if (c.tag === 'step') steps.push(c);
    else if (c.tag === 'workflow' || c.tag === 'task' || c.tag === 'flow') collect(c, steps, preamble, false);
    else if (c.tag !== '#text' || (top && c.text?.trim())) preamble.push(c);
  }
}

/** Parses a BMAD `instructions*.md` (or task) file. Lenient: never throws, on any input. */
export function parseInstructions(source: string): ParsedInstructions {
  const { body, fenced } = unfence(source);
  const root = buildTree(body);
  const steps: InstructionNode[] = [];
  const preamble: InstructionNode[] = [];
  collect(root, steps, preamble, true);
  const form = root.children.some((c) => c.tag === 'workflow')
    ? 'workflow'
    : root.children.some((c) => c.tag === 'task')
      ? 'task'
      : 'plain';
  return { steps: steps.map(toStep), preamble, form, fenced, root };
}

/** Every element of a given tag anywhere in the tree. */
export function findTags(node: InstructionNode, tag: string): InstructionNode[] {
  const found: InstructionNode[] = [];
  const walk = (n: InstructionNode) => {
    for (const c of n.children) {
      if (c.tag === tag) found.push(c);
      walk(c);
    }
  };
  walk(node);
  return found;
}

/** All text below a node. */
export function instructionText(node: InstructionNode): string {
  return node.text ?? node.children.map(instructionText).join('');
}
