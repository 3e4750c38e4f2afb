import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** A plain XML element: what the agent file parser walks. Text nodes have the name `#text`. */
export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  /** Set on text nodes only. */
  text?: string;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  allowBooleanAttributes: true,
  preserveOrder: true,
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: true,
  htmlEntities: true,
  cdataPropName: '#cdata',
  commentPropName: '#comment',
});

type OrderedNode = Record<string, unknown> & { ':@'?: Record<string, unknown> };

function convert(nodes: OrderedNode[]): XmlNode[] {
  const out: XmlNode[] = [];
  for (const node of nodes) {
    const name = Object.keys(node).find((key) => key !== ':@');
    if (!name || name === '#comment') continue;
    const value = node[name];
    if (name === '#text') {
      out.push({ name, attrs: {}, children: [], text: String(value) });
    } else if (name === '#cdata') {
      const inner = convert(value as OrderedNode[]);
      out.push({ name: '#text', attrs: {}, children: [], text: inner.map((n) => n.text ?? '').join('') });
    } else {
      const attrs: Record<string, string> = {};
      for (const [key, attr] of Object.entries(node[':@'] ?? {}))
        attrs[key] = attr === true ? '' : String(attr);
      out.push({ name, attrs, children: convert((value as OrderedNode[]) ?? []), text: undefined });
    }
  }
  return out;
}

/** Escapes a bare `&` or a `<` that cannot start a tag, the two slips real agent files make. */
function repair(xml: string): string {
  return xml.replace(/&(?!#?[A-Za-z0-9]+;)/g, '&amp;').replace(/<(?![A-Za-z_/!?])/g, '&lt;');
}

/**
 * Parses well-formed XML into {@link XmlNode}s. A document that is not well-formed even after escaping
 * stray `&` and `<` yields `{ error }` with a line number instead of a tree.
 */
export function parseXml(xml: string): { nodes: XmlNode[] } | { error: string; line: number } {
  let source = xml;
  let check = XMLValidator.validate(source, { allowBooleanAttributes: true });
  if (check !== true) {
    source = repair(xml);
    check = XMLValidator.validate(source, { allowBooleanAttributes: true });
  }
  if (check !== true) return { error: check.err.msg, line: check.err.line };
  return { nodes: convert(parser.parse(source) as OrderedNode[]) };
}

/** The first child element called `name`. */
export function child(node: XmlNode | undefined, name: string): XmlNode | undefined {
  return node?.children.find((c) => c.name === name);
}

/** All child elements called `name`. */
export function children(node: XmlNode | undefined, name: string): XmlNode[] {
  return node?.children.filter((c) => c.name === name) ?? [];
}

/** All text below `node`, in document order. */
export function textOf(node: XmlNode | undefined): string {
  if (!node) return '';
  if (node.text !== undefined) return node.text;
  return node.children.map(textOf).join('');
}
