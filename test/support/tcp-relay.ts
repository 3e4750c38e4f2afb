import net from 'node:net';

/** A TCP relay on 127.0.0.1 to `target` (PostgreSQL): `cut()` closes every connection and refuses new ones, `restore()` listens again on the same port. */
export async function relay(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  let accepted = 0;
  const open = async () => {
    server = net.createServer((socket) => {
      accepted++;
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(socket).add(upstream);
      for (const s of [socket, upstream]) {
        s.on('error', () => {});
        s.on('close', () => {
          socket.destroy();
          upstream.destroy();
          sockets.delete(s);
        });
      }
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  };
  await open();
  return {
    port: () => port,
    /** Connections accepted by the relay so far (open or closed). */
    accepted: () => accepted,
    async cut() {
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    restore: open,
  };
}
