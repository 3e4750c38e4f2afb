import { spawn } from 'node:child_process';
import path from 'node:path';
import { defaultAuthDir } from '../../mcp/mcp-auth-store.js';

/** The `auth/` folder beside a sessions folder (where the CLI keeps MCP servers' tokens). */
export function authDirBeside(sessionsDir: string): string {
  return path.join(path.dirname(sessionsDir), 'auth');
}

/** The auth folder of a project (`<project>/.agentloop/auth`, or `$AGENTLOOP_HOME/auth`). */
export function projectAuthDir(projectRoot: string): string {
  return defaultAuthDir({ projectRoot });
}

/**
 * The `signIn` of a CLI command with a terminal: prints the link to open (through `write`, one line)
 * and opens it in a browser when one is available (`$BROWSER`, or the platform's opener on macOS,
 * Windows, or Linux with a display); never when `AGENTLOOP_NO_BROWSER` is set.
 */
export function terminalSignIn(
  write: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): (server: string, url: URL) => void {
  return (server, url) => {
    write(`MCP server ${server} needs you to sign in: open ${url.href}`);
    const [command, ...args] = browserCommand(env) ?? [];
    if (!command) return;
    try {
      const child = spawn(command, [...args, url.href], { stdio: 'ignore', detached: true });
      child.on('error', () => {});
      child.unref();
    } catch {
      // No browser after all: the printed link is enough.
    }
  };
}

/** The command that opens a URL in a browser here, if there is one. */
function browserCommand(env: NodeJS.ProcessEnv): string[] | undefined {
  if (env.AGENTLOOP_NO_BROWSER || env.CI) return undefined;
  if (env.BROWSER) return [env.BROWSER];
  if (process.platform === 'darwin') return ['open'];
  if (process.platform === 'win32') return ['cmd', '/c', 'start', '""'];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ['xdg-open'];
  return undefined;
}
