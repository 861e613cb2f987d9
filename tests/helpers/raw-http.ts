/**
 * A raw TCP exchange with an HTTP server: connect to 127.0.0.1:`port`, write `data` (nothing when undefined),
 * collect what comes back until the server closes the connection or `waitMs` passes (then `closed: false`).
 * `ms`: time from connect to close (or to giving up).
 */
import net from 'node:net';

export function rawExchange(port: number, data?: string, waitMs = 10_000): Promise<{ closed: boolean; text: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = net.connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ closed: false, text, ms: Date.now() - started });
    }, waitMs);
    sock.on('connect', () => data !== undefined && sock.write(data));
    sock.on('data', (d) => (text += d));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ closed: true, text, ms: Date.now() - started });
    });
  });
}
