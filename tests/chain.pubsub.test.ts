/**
 * chain/pubsub.ts ProgramSubscription against a scripted PubSub server (a `ws` WebSocketServer):
 * the request it sends, the notifications it passes on, and how it survives its socket: closed by
 * the server, a refused subscription, a peer that stops answering pings; plus websocketUrlFor.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const WebSocketServer = WebSocket.Server;
type WebSocketServer = WebSocket.Server;
import { ProgramSubscription, websocketUrlFor, type ProgramAccountChange } from '../server/src/chain/pubsub.js';
import { eventually } from './helpers/eventually';

const PROGRAM = 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r';

interface Server {
  url: string;
  wss: WebSocketServer;
  /** every request received, in order */
  requests: Array<{ id: number; method: string; params: unknown[] }>;
  /** the connections, newest last */
  sockets: WebSocket[];
  /** answer the next programSubscribe with an error instead of an id */
  refuseNext: boolean;
  close(): Promise<void>;
}

const servers: Server[] = [];
const subs: ProgramSubscription[] = [];
afterEach(async () => {
  await Promise.all(subs.splice(0).map((s) => s.stop()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function startServer(): Promise<Server> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  const s: Server = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    wss,
    requests: [],
    sockets: [],
    refuseNext: false,
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };
  let nextSub = 40;
  wss.on('connection', (ws: WebSocket) => {
    s.sockets.push(ws);
    ws.on('message', (raw: WebSocket.Data) => {
      const req = JSON.parse(String(raw));
      s.requests.push(req);
      if (s.refuseNext) {
        s.refuseNext = false;
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: req.id, error: { code: -32602, message: 'Invalid params' } }));
        return;
      }
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: req.id, result: nextSub++ }));
    });
  });
  servers.push(s);
  return s;
}

const notification = (subscription: number, pubkey: string, data: Buffer, slot = 7) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'programNotification',
    params: {
      subscription,
      result: {
        context: { slot },
        value: { pubkey, account: { data: [data.toString('base64'), 'base64'], executable: false, lamports: 1234, owner: PROGRAM, rentEpoch: 0, space: data.length } },
      },
    },
  });

function subscription(server: Server, extra: Partial<ConstructorParameters<typeof ProgramSubscription>[0]> = {}) {
  const log = { changes: [] as ProgramAccountChange[], up: 0, down: [] as string[] };
  const sub = new ProgramSubscription({
    wsUrl: server.url,
    programId: PROGRAM,
    filters: [{ memcmp: { offset: 0, bytes: '3xYz' } }],
    onChange: (c) => log.changes.push(c),
    onSubscribed: () => (log.up += 1),
    onDown: (reason) => log.down.push(reason),
    backoff: { initialMs: 20, maxMs: 100 },
    ...extra,
  });
  subs.push(sub);
  return { sub, log };
}

describe('ProgramSubscription', () => {
  it('subscribes with the standard params and passes on its own notifications only', async () => {
    const server = await startServer();
    const { sub, log } = subscription(server);
    expect(sub.state).toBe('stopped');
    sub.start();
    await eventually(() => sub.state === 'subscribed', { what: 'subscribed', timeoutMs: 5_000, intervalMs: 10 });
    expect(log.up).toBe(1);
    expect(server.requests).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'programSubscribe', params: [PROGRAM, { encoding: 'base64', commitment: 'confirmed', filters: [{ memcmp: { offset: 0, bytes: '3xYz' } }] }] },
    ]);
    const ws = server.sockets[0]!;
    ws.send(notification(99, 'Other111111111111111111111111111111111111', Buffer.from([9]))); // not ours
    ws.send(notification(40, 'Acct1111111111111111111111111111111111111', Buffer.from([1, 2, 3]), 55));
    await eventually(() => log.changes.length > 0, { what: 'a change', timeoutMs: 5_000, intervalMs: 10 });
    expect(log.changes).toEqual([{ pubkey: 'Acct1111111111111111111111111111111111111', data: Buffer.from([1, 2, 3]), lamports: 1234, slot: 55 }]);
  });

  it('closed by the server: onDown, then reconnected with back-off and subscribed again', async () => {
    const server = await startServer();
    const { sub, log } = subscription(server);
    sub.start();
    await eventually(() => sub.state === 'subscribed', { what: 'subscribed', timeoutMs: 5_000, intervalMs: 10 });
    server.sockets[0]!.terminate();
    await eventually(() => log.down.length === 1, { what: 'onDown', timeoutMs: 5_000, intervalMs: 10 });
    expect(sub.state).not.toBe('subscribed');
    await eventually(() => sub.state === 'subscribed' && log.up === 2, { what: 'resubscribed', timeoutMs: 5_000, intervalMs: 10 });
    expect(server.sockets).toHaveLength(2);
    expect(server.requests.map((r) => r.method)).toEqual(['programSubscribe', 'programSubscribe']);
    // the new subscription's notifications flow (id 41 now)
    server.sockets[1]!.send(notification(41, 'Acct1111111111111111111111111111111111111', Buffer.from([4])));
    await eventually(() => log.changes.length === 1, { what: 'a change after resubscription', timeoutMs: 5_000, intervalMs: 10 });
  });

  it('a refused programSubscribe is retried; the server away at start is retried until it listens', async () => {
    const server = await startServer();
    server.refuseNext = true;
    const { sub, log } = subscription(server);
    sub.start();
    await eventually(() => sub.state === 'subscribed', { what: 'subscribed after a refusal', timeoutMs: 5_000, intervalMs: 10 });
    expect(server.requests).toHaveLength(2);
    expect(log.down).toEqual([]); // it was never live before

    const port = Number(new URL(server.url).port);
    await server.close();
    servers.length = 0;
    await eventually(() => log.down.length === 1, { what: 'onDown', timeoutMs: 5_000, intervalMs: 10 });
    await new Promise((r) => setTimeout(r, 300)); // several refused connections (nothing listens)
    expect(sub.state).toBe('retrying');
    const again = new WebSocketServer({ port, host: '127.0.0.1' });
    again.on('connection', (ws: WebSocket) => ws.on('message', (raw: WebSocket.Data) => ws.send(JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(String(raw)).id, result: 1 }))));
    try {
      await eventually(() => sub.state === 'subscribed' && log.up === 2, { what: 'subscribed to the returning server', timeoutMs: 5_000, intervalMs: 10 });
    } finally {
      await sub.stop();
      for (const c of again.clients) c.terminate();
      await new Promise((r) => again.close(r));
    }
  });

  it('a peer that stops answering pings is dropped by the heartbeat and replaced', async () => {
    const server = await startServer();
    const { sub, log } = subscription(server, { heartbeatMs: 100 });
    sub.start();
    await eventually(() => sub.state === 'subscribed', { what: 'subscribed', timeoutMs: 5_000, intervalMs: 10 });
    // freeze the server side of the connection: no pong, no close
    (server.sockets[0] as unknown as { _socket: { pause(): void } })._socket.pause();
    await eventually(() => log.down.length === 1, { what: 'the heartbeat to notice', timeoutMs: 3_000, intervalMs: 10 });
    await eventually(() => log.up === 2, { what: 'a new subscription', timeoutMs: 3_000, intervalMs: 10 });
    expect(server.sockets).toHaveLength(2);
  });

  it('stop() closes the socket and never reconnects', async () => {
    const server = await startServer();
    const { sub, log } = subscription(server);
    sub.start();
    await eventually(() => sub.state === 'subscribed', { what: 'subscribed', timeoutMs: 5_000, intervalMs: 10 });
    await sub.stop();
    expect(sub.state).toBe('stopped');
    await new Promise((r) => setTimeout(r, 300));
    expect(server.sockets).toHaveLength(1);
    expect(log.down).toEqual([]);
  });
});

describe('websocketUrlFor (web3.js makeWebsocketUrl rules)', () => {
  it.each([
    ['http://127.0.0.1:8899', 'ws://127.0.0.1:8900'],
    ['https://api.devnet.solana.com', 'wss://api.devnet.solana.com'],
    ['https://rpc.example.com:443/key/abc', 'wss://rpc.example.com:444/key/abc'],
    ['http://[::1]:8899/', 'ws://[::1]:8900/'],
  ])('%s -> %s', (rpc, ws) => {
    expect(websocketUrlFor(rpc)).toBe(ws);
  });
});

describe('ProgramSubscription following the RPC pool (issue 27 item 5)', () => {
  it('the selected provider switches: the subscription leaves the old websocket and subscribes on the new one at once (onDown, then onSubscribed)', async () => {
    const first = await startServer();
    const second = await startServer();
    let current = first.url;
    const listeners = new Set<() => void>();
    const endpoint = {
      current: () => current,
      onSwitch: (l: () => void) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };
    // a back-off far longer than the test: only the switch itself can reconnect this fast
    const { sub, log } = subscription(first, { wsUrl: endpoint, backoff: { initialMs: 60_000, maxMs: 60_000 } });
    sub.start();
    await eventually(() => sub.state === 'subscribed', { what: 'subscribed on the first', timeoutMs: 5_000, intervalMs: 10 });
    expect(first.requests).toHaveLength(1);
    current = second.url;
    for (const l of listeners) l();
    // connecting to the second already: not waiting for the first socket's close (an event-loop turn)
    expect(sub.state).toBe('connecting');
    await eventually(() => second.requests.length === 1 && sub.state === 'subscribed', { what: 'subscribed on the second', timeoutMs: 5_000, intervalMs: 10 });
    expect(log.down).toEqual(['socket closed']);
    expect(log.up).toBe(2);
    second.sockets[0]!.send(notification(40, 'Acct1111111111111111111111111111111111111', Buffer.from([4]), 77));
    await eventually(() => log.changes.length === 1, { what: 'a change from the second', timeoutMs: 5_000, intervalMs: 10 });
    await sub.stop();
    expect(listeners.size).toBe(0);
  });
});
