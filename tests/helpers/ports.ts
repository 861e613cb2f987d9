/** Ports for tests that start their own servers. */
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; another process may take it later). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
