import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/** The path the browser is sent back to on the loopback listener. */
const CALLBACK_PATH = '/callback';

const page = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text}</p>`;

/**
 * The loopback redirect of one sign-in: an HTTP listener on 127.0.0.1 on a port the OS picks, where
 * the authorization server sends the browser back with `code` and `state`. A request whose `state` is
 * not the one sent is refused (400) and the wait goes on; an `error` from the authorization server
 * ends the wait with that error. Nothing from the request is echoed into the page or logged.
 */
export class LoopbackRedirect {
  readonly #server: Server;
  #port = 0;
  #expected: string | undefined;
  #settle: { resolve(code: string): void; reject(error: Error): void } | undefined;
  /** The code, once the right redirect came (or the error that ended the wait). */
  readonly code: Promise<string>;

  private constructor() {
    this.code = new Promise<string>((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    this.code.catch(() => {});
    this.#server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      const state = url.searchParams.get('state') ?? '';
      if (!this.#expected || !sameText(state, this.#expected)) {
        res
          .writeHead(400, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            page('Sign-in refused', 'This sign-in answer does not belong to the sign-in agentloop started.'),
          );
        return;
      }
      const error = url.searchParams.get('error');
      const code = url.searchParams.get('code');
      if (error || !code) {
        // The error is the authorization server's text: kept out of the page (it would be HTML on a
        // local origin) and stripped of control characters for the terminal.
        const why = error
          ? `the authorization server answered "${printable(error).slice(0, 100)}"`
          : 'no code came back';
        res
          .writeHead(400, { 'content-type': 'text/html; charset=utf-8' })
          .end(page('Sign-in failed', 'The sign-in failed. agentloop says why in the terminal.'));
        this.#settle?.reject(new Error(`sign-in failed: ${why}`));
        return;
      }
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(page('Signed in', 'Signed in. You can close this tab and go back to agentloop.'));
      this.#settle?.resolve(code);
    });
  }

  /** Starts listening on 127.0.0.1 (a port the OS picks). */
  static async open(): Promise<LoopbackRedirect> {
    const redirect = new LoopbackRedirect();
    await new Promise<void>((resolve, reject) => {
      redirect.#server.once('error', reject);
      redirect.#server.listen(0, '127.0.0.1', () => resolve());
    });
    redirect.#port = (redirect.#server.address() as { port: number }).port;
    redirect.#server.unref();
    return redirect;
  }

  /** `http://127.0.0.1:<port>/callback`. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}${CALLBACK_PATH}`;
  }

  /** The `state` the authorization request carries; only a redirect with it is taken. */
  expect(state: string): void {
    this.#expected = state;
  }

  /** Stops listening; a wait still open ends with `reason`. */
  close(reason = 'the sign-in was abandoned'): void {
    this.#settle?.reject(new Error(reason));
    this.#server.close();
    this.#server.closeAllConnections();
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `text` without control characters (a hostile server's escape sequences). */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}
