/** One content item of an MCP tool result, as far as it is read here (servers are not trusted). */
interface ContentItem {
  type?: unknown;
  text?: unknown;
  mimeType?: unknown;
  data?: unknown;
  uri?: unknown;
  name?: unknown;
  resource?: { uri?: unknown; mimeType?: unknown; text?: unknown; blob?: unknown };
}

/** An MCP `tools/call` result as read here. */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

/**
 * The text the model reads for an MCP tool result: text content joined with newlines, structured
 * content as JSON (unless a text item already is that JSON), images, audio and resources as a short
 * note each. `isError` says the server reported the call failed.
 */
export function mcpResultText(result: McpCallResult): { text: string; isError: boolean } {
  const items = Array.isArray(result.content) ? (result.content as ContentItem[]) : [];
  const parts: string[] = [];
  for (const item of items) {
    const note = describeItem(item);
    if (note !== undefined) parts.push(note);
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) {
    const json = JSON.stringify(result.structuredContent);
    if (!parts.some((part) => sameJson(part, json))) parts.push(json);
  }
  return { text: parts.join('\n'), isError: result.isError === true };
}

function describeItem(item: ContentItem): string | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const mime = typeof item.mimeType === 'string' ? item.mimeType : 'unknown type';
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? item.text : undefined;
    case 'image':
    case 'audio':
      return `[${item.type}: ${mime}, ${base64Bytes(item.data)} bytes, not shown]`;
    case 'resource_link':
      return `[resource link: ${String(item.uri)}${typeof item.name === 'string' ? ` (${item.name})` : ''}]`;
    case 'resource': {
      const r = item.resource ?? {};
      const type = typeof r.mimeType === 'string' ? `, ${r.mimeType}` : '';
      const size =
        typeof r.text === 'string' ? `${r.text.length} characters` : `${base64Bytes(r.blob)} bytes`;
      return `[resource: ${String(r.uri)}${type}, ${size}, not shown]`;
    }
    default:
      return `[${String(item.type)} content, not shown]`;
  }
}

/** Decoded size of base64 data. */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function sameJson(text: string, json: string): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === json;
  } catch {
    return false;
  }
}
