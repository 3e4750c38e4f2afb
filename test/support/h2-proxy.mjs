// An HTTP/2 proxy in front of several Restate endpoints, as a load balancer would be: the one
// address registered with Restate while the endpoints behind it are killed and restarted (the
// engine chaos run). Plain JS so that the chaos scripts, which run without a TypeScript loader, share
// it with the tests.
import http2 from 'node:http2';

/**
 * Starts the proxy on 127.0.0.1 (an OS-chosen port). `pick(headers)` names the port of a live endpoint
 * for each request (undefined: none, answered 503). A request whose endpoint goes away before its
 * response ended (the process killed, its connection cut) is reset toward the caller, so that Restate
 * sees the attempt fail and retries it; without that, the caller's stream stayed open and the
 * invocation waited for Restate's abort timeout (10 minutes). `drop(port)` ends the connection to an
 * endpoint known dead. `log`, when given, hears each request's events (for debugging a run).
 */
export async function startH2Proxy({ pick, log }) {
  /** One connection per endpoint port, made on first use and again after it closed. */
  const sessions = new Map();
  const connect = (port) => {
    let session = sessions.get(port);
    if (!session || session.destroyed || session.closed) {
      session = http2.connect(`http://127.0.0.1:${port}`);
      session.on('error', () => {});
      sessions.set(port, session);
    }
    return session;
  };
  let proxied = 0;
  const h2 = http2.createServer();
  h2.on('stream', (stream, headers) => {
    const port = pick(headers);
    if (port === undefined) {
      stream.respond({ ':status': 503 });
      stream.end();
      return;
    }
    const session = connect(port);
    const forwarded = {};
    for (const [name, value] of Object.entries(headers)) if (name !== ':authority') forwarded[name] = value;
    const request = session.request(forwarded);
    const n = ++proxied;
    const tell = (event) => log?.(`#${n} ${headers[':path']} -> ${port} ${event}`);
    tell('open');
    stream.pipe(request);
    request.on('response', (answer) => {
      tell('response');
      if (stream.destroyed) return;
      stream.respond(answer);
      request.pipe(stream);
    });
    request.on('error', (error) => {
      tell(`error ${error.code ?? error.message}`);
      stream.destroy();
    });
    request.on('close', () => {
      tell(`close (${session.destroyed ? 'connection gone' : `rst ${request.rstCode}`})`);
      // The endpoint's stream closed while the caller's is open: when its connection went (a killed
      // process ends its streams with no error, even with an 'end') or it ended without a response,
      // reset the caller's stream; a finished response leaves it to close on its own.
      if (stream.closed || stream.destroyed) return;
      if (session.destroyed || !request.readableEnded) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    stream.on('error', () => request.destroy());
    stream.on('close', () => {
      tell('caller closed');
      request.destroy();
    });
  });
  const open = new Set();
  h2.on('session', (s) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  await new Promise((resolve) => h2.listen(0, '127.0.0.1', resolve));
  return {
    port: h2.address().port,
    drop(port) {
      sessions.get(port)?.destroy();
      sessions.delete(port);
    },
    close() {
      h2.close();
      for (const s of open) s.destroy();
      for (const s of sessions.values()) s.destroy();
    },
  };
}
