/**
 * A stand-in RPC provider for the RPC failover test (tests/rpc-failover.ts): a JSON-RPC HTTP proxy and a
 * PubSub websocket proxy (raw TCP) in front of the localnet, which fails on demand the three ways
 * providers fail in production:
 *
 *  - `refuse`: both listeners closed: connections are refused (the provider's host is down);
 *  - `hang`: connections accepted, requests never answered, websocket traffic no longer forwarded
 *    (an overloaded or half-dead node; the client only has its timeouts);
 *  - `stale`: answers, but as a node stuck at the slot it had when the fault began: getSlot and
 *    getBlockHeight frozen, getHealth still "ok" (a lagging node often says so), every context slot
 *    rewritten to the frozen slot, getSignatureStatuses answered "never seen", getAccountInfo /
 *    getMultipleAccounts / getLatestBlockhash answered from what it answered before the fault for the
 *    same request (or the live value with the frozen slot), getTransaction null; sendTransaction is
 *    still forwarded (a lagging node still forwards to the leader); no websocket notifications.
 *
 * `up()` ends the fault (listeners reopened on the same ports). `calls` counts requests by method.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export type ProviderFault = 'refuse' | 'hang' | 'stale';

export interface FaultProvider {
  name: string;
  rpcUrl: string;
  wsUrl: string;
  calls: Record<string, number>;
  fault(mode: ProviderFault): Promise<void>;
  up(): Promise<void>;
  /** the slot a stale provider is stuck at (null when not stale) */
  frozenSlot(): number | null;
  stop(): Promise<void>;
}

const CACHED = new Set(['getAccountInfo', 'getMultipleAccounts', 'getLatestBlockhash']);

export async function startFaultProvider(name: string, target: { rpcUrl: string; wsUrl: string }): Promise<FaultProvider> {
  const calls: Record<string, number> = {};
  let mode: ProviderFault | null = null;
  let frozen: { slot: number; height: number } | null = null;
  const cache = new Map<string, unknown>();
  const httpSockets = new Set<Socket>();
  const pairs = new Set<{ client: Socket; upstream: Socket | null }>();
  const wsTarget = new URL(target.wsUrl);

  const forward = async (body: string): Promise<unknown> => {
    const res = await fetch(target.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return res.json();
  };
  const rpc = async (method: string): Promise<number> => ((await forward(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }))) as { result: number }).result;

  type Req = { jsonrpc: string; id: unknown; method: string; params?: unknown[] };
  type Ans = { jsonrpc: string; id: unknown; result?: { context?: { slot: number }; value?: unknown } | unknown; error?: unknown };
  const staleAnswer = async (req: Req): Promise<Ans> => {
    const f = frozen!;
    const ok = (result: unknown): Ans => ({ jsonrpc: '2.0', id: req.id, result });
    const key = `${req.method} ${JSON.stringify(req.params ?? [])}`;
    switch (req.method) {
      case 'getHealth':
        return ok('ok');
      case 'getSlot':
        return ok(f.slot);
      case 'getBlockHeight':
        return ok(f.height);
      case 'getTransaction':
        return ok(null);
      case 'getSignatureStatuses':
        return ok({ context: { slot: f.slot }, value: ((req.params?.[0] as string[]) ?? []).map(() => null) });
    }
    const cachedKey = req.method === 'getLatestBlockhash' ? req.method : key;
    const known = CACHED.has(req.method) ? cache.get(cachedKey) : undefined;
    const live = known === undefined ? ((await forward(JSON.stringify(req))) as Ans) : { jsonrpc: '2.0', id: req.id, result: structuredClone(known) };
    const r = live.result as { context?: { slot: number } } | undefined;
    if (r && typeof r === 'object' && r.context) r.context.slot = f.slot;
    return { ...live, id: req.id };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let parsed: Req | Req[];
        try {
          parsed = JSON.parse(body) as Req | Req[];
        } catch {
          res.writeHead(400).end();
          return;
        }
        const list = Array.isArray(parsed) ? parsed : [parsed];
        for (const m of list) calls[m.method] = (calls[m.method] ?? 0) + 1;
        if (mode === 'hang') return; // never answered; the socket is destroyed when the fault ends
        try {
          let answers: Ans[];
          if (mode === 'stale') {
            answers = await Promise.all(list.map((m) => staleAnswer(m)));
          } else {
            const out = (await forward(body)) as Ans | Ans[];
            answers = Array.isArray(out) ? out : [out];
            list.forEach((m, i) => {
              const a = answers[i];
              if (a && CACHED.has(m.method) && a.result !== undefined) {
                cache.set(m.method === 'getLatestBlockhash' ? m.method : `${m.method} ${JSON.stringify(m.params ?? [])}`, structuredClone(a.result));
              }
            });
          }
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
        } catch {
          req.socket.destroy();
        }
      })();
    });
  });
  server.on('connection', (s) => {
    httpSockets.add(s);
    s.on('close', () => httpSockets.delete(s));
  });

  const wsServer = net.createServer((client) => {
    const pair: { client: Socket; upstream: Socket | null } = { client, upstream: null };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => {
      pairs.delete(pair);
      pair.upstream?.destroy();
    });
    if (mode === 'hang' || mode === 'stale') return; // accepted, never connected upstream
    const upstream = net.connect(Number(wsTarget.port), wsTarget.hostname);
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });

  const listen = (s: net.Server, port: number) =>
    new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        s.off('error', reject);
        resolve();
      });
    });
  const close = (s: net.Server) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()));
  await listen(server, 0);
  const httpPort = (server.address() as AddressInfo).port;
  await listen(wsServer, 0);
  const wsPort = (wsServer.address() as AddressInfo).port;
  const dropAll = () => {
    for (const s of httpSockets) s.destroy();
    for (const p of pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
  };

  return {
    name,
    rpcUrl: `http://127.0.0.1:${httpPort}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    calls,
    async fault(m) {
      if (m === 'stale') {
        const [slot, height] = await Promise.all([rpc('getSlot'), rpc('getBlockHeight')]);
        frozen = { slot, height };
      }
      mode = m;
      if (m === 'refuse') {
        const closing = [close(server), close(wsServer)];
        dropAll();
        await Promise.all(closing);
      } else {
        // live websockets stop forwarding (a hung or lagging node sends nothing); the service's
        // heartbeat or the pool's switch ends them
        for (const p of pairs) {
          p.client.unpipe();
          p.upstream?.unpipe();
          p.upstream?.pause();
          p.client.pause();
        }
      }
    },
    async up() {
      const was = mode;
      mode = null;
      frozen = null;
      if (was === 'refuse') {
        await listen(server, httpPort);
        await listen(wsServer, wsPort);
      } else {
        dropAll(); // the hung requests and sockets end; clients reconnect
      }
    },
    frozenSlot: () => frozen?.slot ?? null,
    async stop() {
      mode = null;
      dropAll();
      await Promise.all([close(server), close(wsServer)]);
    },
  };
}
