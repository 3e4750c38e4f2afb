// Preloaded (node --import) into server-everything's Streamable HTTP mode, which listens on
// process.env.PORT (0: a port the OS picks) on every interface and prints the port it was given, not
// the one it got. This keeps it on 127.0.0.1 and prints the real port: `listening on 127.0.0.1:<port>`.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    const [port, ...rest] = args;
    const callback = typeof rest.at(-1) === 'function' ? rest.at(-1) : undefined;
    args = callback ? [Number(port), '127.0.0.1', callback] : [Number(port), '127.0.0.1'];
  }
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object') {
      process.stderr.write(`listening on ${address.address}:${address.port}\n`);
    }
  });
  return listen.apply(this, args);
};
