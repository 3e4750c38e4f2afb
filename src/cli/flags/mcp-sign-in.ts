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
    const [command, ...args] = browserArgv(url, env) ?? [];
    if (!command) return;
    try {
      // Never through a shell: an authorization URL holds `&`, which cmd.exe reads as a separator.
      const child = spawn(command, args, { stdio: 'ignore', detached: true, shell: false });
      child.on('error', () => {});
      child.unref();
    } catch {
      // No browser after all: the printed link is enough.
    }
  };
}

/**
 * The program and arguments that open `url` in a browser here (run without a shell), if there is
 * one; only http and https links are opened. Windows hands the link to its URL handler through
 * `rundll32 url.dll,FileProtocolHandler` (as `start` would, without cmd.exe parsing it).
 */
export function browserArgv(
  url: URL,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): string[] | undefined {
  if (env.AGENTLOOP_NO_BROWSER || env.CI) return undefined;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (env.BROWSER) return [env.BROWSER, url.href];
  if (platform === 'darwin') return ['open', url.href];
  if (platform === 'win32') return ['rundll32.exe', 'url.dll,FileProtocolHandler', url.href];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ['xdg-open', url.href];
  return undefined;
}
