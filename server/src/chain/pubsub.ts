/**
 * A Solana PubSub `programSubscribe` that survives its socket: one websocket (the `ws` library) to
 * the RPC's PubSub endpoint, one subscription, resubscribed with exponential back-off whenever the
 * socket drops, and a ping heartbeat that detects a dead connection nobody closed.
 *
 * Why not web3.js's `Connection.onProgramAccountChange`: it resubscribes too (every second, for
 * ever), but says nothing when the subscription goes down or comes back, and a watcher needs both:
 * notifications missed while the socket was down must be caught up (`onSubscribed` after a gap), and
 * its fallback poll must run fast while nothing is being notified (`onDown`).
 *
 * Wire format: Solana JSON-RPC PubSub (https://solana.com/docs/rpc/websocket/programsubscribe):
 * request `programSubscribe [program, {encoding: "base64", commitment, filters}]`, answer the
 * subscription id, notifications `programNotification {result: {context: {slot}, value: {pubkey,
 * account: {data: [base64, "base64"], lamports, owner, ...}}}, subscription}`.
 *
 * Several providers (./rpc-pool.ts): `wsUrl` may be a WsEndpoint that follows the pool's selected
 * provider; when the selection switches, the subscription connects at once (no back-off, and without
 * waiting for the old socket's close) to the new provider's websocket, reporting `onDown` and then `onSubscribed` as for any
 * gap, so the watcher catches up what it may have missed.
 */
import WebSocket from 'ws';
import type { Commitment } from '@solana/web3.js';
import type { Log } from '../lib/log.js';
import type { WsEndpoint } from './rpc-pool.js';

/** Where a subscription stands: `subscribed` = the RPC confirmed it and notifications flow. */
export type SubscriptionState = 'stopped' | 'connecting' | 'subscribed' | 'retrying';

/** getProgramAccounts-style filters (memcmp bytes base58). */
export type ProgramFilter = { memcmp: { offset: number; bytes: string } } | { dataSize: number };

/** One program account change: account address (base58), its data, lamports, and the slot it was written in. */
export interface ProgramAccountChange {
  pubkey: string;
  data: Buffer;
  lamports: number;
  slot: number;
}

export interface ProgramSubscriptionOptions {
  /** PubSub endpoint, `ws://` or `wss://`, or one that follows the RPC pool's selected provider */
  wsUrl: string | WsEndpoint;
  /** program id (base58) */
  programId: string;
  filters?: ProgramFilter[];
  /** default 'confirmed' */
  commitment?: Commitment;
  onChange: (change: ProgramAccountChange) => void;
  /** the subscription is (again) live: changes between the last notification and now were not seen */
  onSubscribed?: () => void;
  /** a live subscription was lost (socket closed, heartbeat missed, RPC error); retrying */
  onDown?: (reason: string) => void;
  /** reconnect delays, ms: `initialMs` doubling up to `maxMs`, ±20 % jitter (default 250 .. 30 000) */
  backoff?: { initialMs: number; maxMs: number };
  /** ping period, ms: a socket that has not answered the previous ping is closed (default 10 000) */
  heartbeatMs?: number;
  log?: Pick<Log, 'info' | 'warn'>;
}

const SUBSCRIBE_ID = 1;

export class ProgramSubscription {
  private ws: WebSocket | null = null;
  private current: SubscriptionState = 'stopped';
  private subscriptionId: number | null = null;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private closed: Promise<void> = Promise.resolve();
  private connectedTo: string | null = null;
  private unfollow: (() => void) | null = null;

  constructor(private readonly o: ProgramSubscriptionOptions) {}

  private url(): string {
    return typeof this.o.wsUrl === 'string' ? this.o.wsUrl : this.o.wsUrl.current();
  }

  /**
   * The endpoint switched (pool): connect to the new provider now, without waiting for the old socket's
   * `close` (one event-loop turn, long on a busy service); the old socket is dropped and closed aside.
   */
  private onSwitch(): void {
    if (this.current === 'stopped' || this.url() === this.connectedTo) return;
    this.o.log?.info({ from: this.connectedTo, to: this.url() }, 'program subscription: moving to the selected RPC provider');
    const ws = this.ws;
    const wasLive = this.current === 'subscribed';
    this.attempt = 0;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (ws) {
      this.ws = null; // its 'close' is then ignored
      this.stopHeartbeat();
      ws.terminate();
    }
    if (wasLive) this.o.onDown?.('socket closed');
    this.connect();
  }

  get state(): SubscriptionState {
    return this.current;
  }

  /** Connect and subscribe (a no-op when already started). Never throws: failures are retried. */
  start(): void {
    if (this.current !== 'stopped') return;
    this.attempt = 0;
    if (typeof this.o.wsUrl !== 'string') this.unfollow = this.o.wsUrl.onSwitch(() => this.onSwitch());
    this.connect();
  }

  /** Close the socket and stop retrying; resolves once the socket is closed. */
  async stop(): Promise<void> {
    this.current = 'stopped';
    this.unfollow?.();
    this.unfollow = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.stopHeartbeat();
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      ws.terminate();
    }
    await this.closed;
  }

  private connect(): void {
    this.current = 'connecting';
    this.subscriptionId = null;
    const url = this.url();
    this.connectedTo = url;
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, { handshakeTimeout: 10_000 });
    } catch (err) {
      this.o.log?.warn({ err, ws_url: url }, 'program subscription: bad websocket URL');
      this.retry('bad websocket URL');
      return;
    }
    this.ws = ws;
    this.closed = new Promise((resolve) => ws.once('close', () => resolve()));
    let alive = true;
    ws.on('open', () => {
      if (this.ws !== ws) return; // dropped (moved to another provider)
      const config = { encoding: 'base64', commitment: this.o.commitment ?? 'confirmed', ...(this.o.filters?.length ? { filters: this.o.filters } : {}) };
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: SUBSCRIBE_ID, method: 'programSubscribe', params: [this.o.programId, config] }));
      this.heartbeat = setInterval(() => {
        if (!alive) {
          ws.terminate(); // no pong since the last ping: the connection is dead
          return;
        }
        alive = false;
        ws.ping();
      }, this.o.heartbeatMs ?? 10_000);
      this.heartbeat.unref?.();
    });
    ws.on('pong', () => {
      alive = true;
    });
    ws.on('message', (raw) => {
      if (this.ws === ws) this.onMessage(ws, String(raw));
    });
    ws.on('error', (err) => {
      if (this.ws === ws) this.o.log?.warn({ err: String(err), ws_url: url }, 'program subscription socket error');
    });
    ws.on('close', () => {
      if (this.ws !== ws) return; // stopped, or replaced
      this.ws = null;
      this.stopHeartbeat();
      const wasLive = this.current === 'subscribed';
      this.retry(wasLive ? 'socket closed' : 'could not subscribe');
    });
  }

  private onMessage(ws: WebSocket, text: string): void {
    let msg: {
      id?: number;
      result?: unknown;
      error?: { message?: string };
      method?: string;
      params?: { subscription?: number; result?: { context?: { slot?: number }; value?: { pubkey?: string; account?: { data?: [string, string]; lamports?: number } } } };
    };
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg.id === SUBSCRIBE_ID) {
      if (typeof msg.result === 'number') {
        this.subscriptionId = msg.result;
        this.current = 'subscribed';
        this.attempt = 0;
        this.o.log?.info({ ws_url: this.connectedTo, program: this.o.programId }, 'program subscription live');
        this.o.onSubscribed?.();
      } else {
        this.o.log?.warn({ error: msg.error, ws_url: this.connectedTo }, 'programSubscribe refused');
        ws.terminate(); // retried with back-off
      }
      return;
    }
    if (msg.method !== 'programNotification' || msg.params?.subscription !== this.subscriptionId) return;
    const value = msg.params?.result?.value;
    const data = value?.account?.data;
    if (!value?.pubkey || !Array.isArray(data) || data[1] !== 'base64') return;
    this.o.onChange({
      pubkey: value.pubkey,
      data: Buffer.from(data[0], 'base64'),
      lamports: value.account?.lamports ?? 0,
      slot: msg.params?.result?.context?.slot ?? 0,
    });
  }

  /** Schedule the next connection: `initialMs * 2^attempt`, at most `maxMs`, ±20 % jitter. */
  private retry(reason: string): void {
    if (this.current === 'stopped') return;
    const wasLive = this.current === 'subscribed';
    this.current = 'retrying';
    if (wasLive) this.o.onDown?.(reason);
    const { initialMs, maxMs } = this.o.backoff ?? { initialMs: 250, maxMs: 30_000 };
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(this.attempt, 30));
    const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
    this.attempt += 1;
    if (!wasLive) this.o.log?.warn({ ws_url: this.connectedTo, reason, retry_in_ms: delay }, 'program subscription unavailable; retrying');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.current === 'retrying') this.connect();
    }, delay);
    this.retryTimer.unref?.();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}

/** The PubSub endpoint of an RPC URL (lib/rpc-url.ts: text only, so config.ts can use it without the chain client). */
export { websocketUrlFor } from '../lib/rpc-url.js';
