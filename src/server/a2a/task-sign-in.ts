import type { McpAuthOptions } from '../../mcp/mcp-auth.js';
import { textPart } from './task-messages.js';

/** The data part's `type` of a server waiting for sign-in in an `auth-required` status message. */
export const SIGN_IN_REQUEST = 'mcp_sign_in';

/** A remote MCP server of the agent that waits for the user to sign in, and where. */
export interface PendingSignIn {
  server: string;
  url: string;
}

/**
 * The sign-ins a task's agent meets while its MCP servers start: the `signIn` / `signedIn` hooks of
 * its `mcpAuth` (the source's own hooks are still called), the servers still waiting, and a promise
 * for when none is. The sign-in itself is agentloop's MCP OAuth flow: the browser comes back to a
 * loopback listener of the process holding the agent, which then exchanges the code and starts the
 * server again (src/mcp/mcp-connection.ts).
 */
export class SignInWatch {
  readonly #pending = new Map<string, string>();
  #wake = () => {};

  /** `own` with this watch's hooks added (both are called). */
  hooks(own: McpAuthOptions | undefined): McpAuthOptions {
    return {
      ...own,
      signIn: (server, url) => {
        this.#pending.set(server, url.href);
        own?.signIn?.(server, url);
      },
      signedIn: (server, tools) => {
        this.#pending.delete(server);
        if (this.#pending.size === 0) this.#wake();
        own?.signedIn?.(server, tools);
      },
    };
  }

  /** The servers still waiting for the user, in the order they asked. */
  get pending(): PendingSignIn[] {
    return [...this.#pending].map(([server, url]) => ({ server, url }));
  }

  /**
   * Resolves once no server waits, or after `graceMs` (a browser that came back a moment ago: its
   * code is being exchanged). Resolves at once when none waits.
   */
  settled(graceMs: number): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** The parts of an `auth-required` status message: a text naming each server and URL, then a data part each. */
export function signInParts(pending: readonly PendingSignIn[]): Record<string, unknown>[] {
  const lines = pending.map((p) => `MCP server "${p.server}" needs you to sign in: open ${p.url}`);
  return [
    textPart(`${lines.join('\n')}\nThen send a message on this task to go on.`),
    ...pending.map((p) => ({
      data: { type: SIGN_IN_REQUEST, server: p.server, url: p.url },
      mediaType: 'application/json',
    })),
  ];
}

/** The text of a task that failed because a server was still not signed in when the user went on. */
export function notSignedInText(pending: readonly PendingSignIn[]): string {
  const names = pending.map((p) => `"${p.server}"`).join(', ');
  return (
    `MCP server ${names} is still not signed in, so the task's message was not sent to the agent. ` +
    'Start a new task to get a new sign-in link, and sign in before answering it.'
  );
}
