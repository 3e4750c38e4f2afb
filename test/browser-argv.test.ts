import { describe, expect, it } from 'vitest';
import { browserArgv } from '../src/cli/flags/mcp-sign-in.js';

// The sign-in link is opened without a shell on every platform: an authorization URL holds `&`,
// which `cmd /c start` would read as a command separator (running what follows it).
const link = new URL(
  'https://auth.example.com/authorize?response_type=code&client_id=abc&state=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback&calc=1&whoami',
);

describe('browserArgv', () => {
  it('on Windows: rundll32 url.dll,FileProtocolHandler with the whole link as one argument, no cmd', () => {
    const argv = browserArgv(link, {}, 'win32')!;
    expect(argv).toEqual(['rundll32.exe', 'url.dll,FileProtocolHandler', link.href]);
    expect(argv.some((a) => /^cmd(\.exe)?$/i.test(a) || a === '/c' || a === 'start')).toBe(false);
  });

  it('macOS open, Linux xdg-open with a display, $BROWSER first; the link is one argument', () => {
    expect(browserArgv(link, {}, 'darwin')).toEqual(['open', link.href]);
    expect(browserArgv(link, { DISPLAY: ':0' }, 'linux')).toEqual(['xdg-open', link.href]);
    expect(browserArgv(link, { BROWSER: 'firefox' }, 'win32')).toEqual(['firefox', link.href]);
    expect(browserArgv(link, {}, 'linux')).toBeUndefined();
  });

  it('opens nothing with AGENTLOOP_NO_BROWSER or CI, or for a link that is not http(s)', () => {
    expect(browserArgv(link, { AGENTLOOP_NO_BROWSER: '1' }, 'win32')).toBeUndefined();
    expect(browserArgv(link, { CI: 'true' }, 'darwin')).toBeUndefined();
    expect(browserArgv(new URL('file:///C:/Windows/System32/calc.exe'), {}, 'win32')).toBeUndefined();
  });
});
