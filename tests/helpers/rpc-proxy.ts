/**
 * A fault-injecting JSON-RPC proxy for chain tests: sits between a chain client and the localnet and
 * misbehaves on demand, per RPC method name.
 *
 *   const proxy = await startRpcProxy(localnet.rpcUrl);
 *   const chain = createChain({ rpcUrl: proxy.url, ... });
 *   proxy.down();                                   // every request: connection reset (RPC outage)
 *   proxy.fault('sendTransaction', 'blackhole');    // accepted, never forwarded, never answered
 *   proxy.fault('getLatestBlockhash', 'delay', 500);
 *   proxy.up(); proxy.clear();
 *
 * Modes: `error` answers HTTP 503; `kill` resets the connection without forwarding; `blackhole`
 * neither forwards nor answers (the client times out; the transaction never reaches the chain);
 * `lose-reply` forwards and drops the answer (the chain executed it, the client never hears);
 * `delay` forwards after `ms`. A batch request is faulted when any of its methods is. `calls` counts
 * requests per method (also while faulted).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FaultMode = 'error' | 'kill' | 'blackhole' | 'lose-reply' | 'delay';

export interface RpcProxy {
  url: string;
  calls: Record<string, number>;
  /** every request resets its connection until `up()` */
  down(): void;
  up(): void;
  fault(method: string, mode: FaultMode, ms?: number): void;
  clear(method?: string): void;
  stop(): Promise<void>;
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const faults = new Map<string, { mode: FaultMode; ms: number }>();
  const calls: Record<string, number> = {};
  const sockets = new Set<Socket>();
  let isDown = false;

  const forward = async (body: string): Promise<{ status: number; text: string }> => {
    const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: res.status, text: await res.text() };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (isDown) return req.socket.destroy();
        const body = Buffer.concat(chunks).toString('utf8');
        let methods: string[] = [];
        try {
          const parsed = JSON.parse(body) as { method?: string } | Array<{ method?: string }>;
          methods = (Array.isArray(parsed) ? parsed : [parsed]).map((m) => String(m.method));
        } catch {
          /* not JSON: forwarded as is */
        }
        for (const m of methods) calls[m] = (calls[m] ?? 0) + 1;
        const f = methods.map((m) => faults.get(m)).find(Boolean);
        if (f?.mode === 'kill') return req.socket.destroy();
        if (f?.mode === 'blackhole') return; // the socket stays open until the client gives up
        if (f?.mode === 'error') {
          res.writeHead(503, { 'content-type': 'text/plain' }).end('injected fault');
          return;
        }
        if (f?.mode === 'delay') await new Promise((r) => setTimeout(r, f.ms));
        try {
          const out = await forward(body);
          if (f?.mode === 'lose-reply') return req.socket.destroy();
          res.writeHead(out.status, { 'content-type': 'application/json' }).end(out.text);
        } catch {
          req.socket.destroy();
        }
      })();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    down() {
      isDown = true;
      for (const s of sockets) s.destroy();
    },
    up() {
      isDown = false;
    },
    fault(method, mode, ms = 0) {
      faults.set(method, { mode, ms });
    },
    clear(method) {
      if (method) faults.delete(method);
      else faults.clear();
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
