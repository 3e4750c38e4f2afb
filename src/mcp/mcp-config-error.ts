/** An `mcpServers` config that cannot be used: the message names the file (if any) and the key. */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}
