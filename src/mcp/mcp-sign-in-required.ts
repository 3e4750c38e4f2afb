/** A server needs the user to sign in and nobody is there to (`run`, a worker, an embedder without `signIn`). */
export class McpSignInRequired extends Error {
  override readonly name = 'McpSignInRequired';
  constructor(readonly server: string) {
    super(`MCP server "${server}" needs you to sign in: run \`agentloop mcp login ${server}\``);
  }
}
