import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can be cut (what the app sees when the server stops): `cut()`
 * closes the listener and every connection through it, `restore()` listens again on the same port;
 * `connections` counts the connections accepted so far.
 */
export async function tcpProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  let connections = 0;
  const listen = async () => {
    server = net.createServer((client) => {
      connections += 1;
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => {
          sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  };
  await listen();
  return {
    get port() {
      return port;
    },
    get connections() {
      return connections;
    },
    url: (u: string) => {
      const x = new URL(u);
      x.hostname = '127.0.0.1';
      x.port = String(port);
      return x.toString();
    },
    async cut() {
      // close() waits for the open connections: cut them first (a server that dies does not wait)
      const closed = new Promise((r) => server!.close(r));
      for (const s of sockets) s.destroy();
      await closed;
    },
    restore: listen,
  };
}
