/** Characters a tool name may not hold (the Chat Completions API's rule is `[A-Za-z0-9_-]{1,64}`). */
const OUTSIDE = /[^A-Za-z0-9_-]/g;

/**
 * The name a server's tool is offered to the model under: `<server>__<tool>`, every character outside
 * `[A-Za-z0-9_-]` replaced with `_`, cut to 64 characters.
 */
export function mcpToolName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(OUTSIDE, '_').slice(0, 64);
}
