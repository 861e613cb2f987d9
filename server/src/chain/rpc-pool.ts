/**
 * Several Solana RPC providers behind one web3.js Connection (issue 27 items 5-6): a pool-aware
 * `fetch` for `new Connection(url, { fetch })`, so every JSON-RPC call of the service (escrow client,
 * listings, custody, tips, recorded sends) goes through the pool without knowing it.
 *
 * Why a custom fetch and not one Connection per provider: every module already holds "the" Connection
 * (and escrow.ts is edited by other work); web3.js 1.x lets the transport be replaced (`fetch` option),
 * and at that level one place sees every request and every answer: which provider to ask, what to do
 * when it fails, and whether its answer is recent enough to be trusted.
 *
 * Providers are named in preference order (`SOLANA_RPC_URLS`). Each request goes to the first healthy
 * one; when that attempt fails at the transport (refused, reset, no answer within `attemptTimeoutMs`;
 * the last healthy provider gets the rest of the request's time instead, so a slow but working provider
 * is not cut off in favour of one known to be failing),
 * answers HTTP 429 / 5xx, answers a JSON-RPC "node is behind" error (-32005) or "minimum context slot
 * not reached" (-32016), or answers with a stale context slot (below, "stale"), the same request is
 * sent to the next provider: first the other healthy ones in order, then the unhealthy ones as a last
 * resort. A JSON-RPC error of any other kind is an answer (e.g. a preflight rejection) and is returned.
 * When the connection to the last healthy provider fails (refused, reset: not a timeout), it is asked once
 * more before the unhealthy ones: a passing reset should not leave the request to a provider known to fail.
 *
 * Transactions: `sendTransaction` carries signed bytes; the same bytes sent to another provider are the
 * same transaction (the signature is its id, and recorded-send.ts records it before the first send), so
 * a send that failed over is not a second payment: the cluster executes a signature at most once. A
 * send goes to ONE provider at a time (never broadcast); its confirmation (`getSignatureStatuses`)
 * is read through whichever provider is selected then ("send once, confirm anywhere").
 *
 * Health (only with two or more providers): every `healthIntervalMs` (default 500) a check starts on every
 * provider that has none in flight: `getHealth` and `getSlot` (at the pool's commitment), at most
 * `healthTimeoutMs` (default 1000) each. The ticks do not wait for a slow check, so a hanging provider
 * does not slow the checks of the others. Each check is judged as it ends. A provider is taken OUT:
 *  - when a check fails (transport error, HTTP error, getHealth not "ok"): at once;
 *  - when a check went unanswered for `healthTimeoutMs` while another provider answered, within that time,
 *    a check started no earlier ("hung": the others answer, so the service itself is not what is slow). A
 *    check that no provider answered in time takes nobody out: then the service (a blocked event loop,
 *    its own network) is the likelier cause; nor does a timeout take out the last healthy provider. The
 *    selected provider (requests wait on it) is out on its first such check, another one on its second
 *    in a row (nothing waits on a standby; briefly slow, it keeps its place as the next choice). A
 *    provider slow but within `healthTimeoutMs` stays in;
 *  - when its checks reported the same slot for `staleAfterMs` (default 1000) while another provider's
 *    slot went from at most that slot to at least STALL_SLOTS (2) past it ("stuck": the cluster moved on
 *    without it). A cluster whose slot stops everywhere takes nobody out (nobody moved on), nor does a
 *    provider a slot behind the others that keeps advancing, nor one whose checks time out (no answer
 *    says its slot stood still);
 *  - when its slot lags the highest slot known by more than `maxSlotLag` (a provider that advances but
 *    slowly), when one of its answers carried a stale context slot, or when its recent requests failed too
 *    often (at least `errorMinCount` failures and at least `errorRateOut` of the last `errorWindow`
 *    requests).
 * Taking a provider out aborts the requests waiting on it (each is asked of the next provider at once,
 * instead of after its `attemptTimeoutMs`). It comes back IN after `recoverAfter` consecutive good checks
 * (hysteresis: a flapping provider is not selected on its first good answer). The error rate never takes
 * out the last healthy provider, and when every provider is out the selection stays where it was
 * (requests still try them all, that one first).
 *
 * Why these figures: the goal is reads and the payment subscription on a healthy provider within 2 s of a
 * fault. A fault is seen by the first check that starts after it (within one interval, 500 ms), then
 * judged after 1 s (hang: the check's timeout; stuck: the slot standing still while the cluster moves 2
 * slots, 800 ms on a 400 ms-slot cluster): out within 1.5 s, the subscription's reconnection inside the
 * rest. One second of silence or standing still is more than a healthy provider shows (a slot every 400 ms,
 * answers in milliseconds to tens of them); a provider that is slower than that, for a second, is not one
 * the service should wait on. The cost: four requests a second per provider (two per check).
 *
 * Stale answers ("is it paid?" must not be answered by a node that has not seen the payment yet): an
 * answer that carries `result.context.slot` (getAccountInfo, getMultipleAccounts, getSignatureStatuses,
 * getBalance, getLatestBlockhash, isBlockhashValid, getProgramAccounts withContext, ...) below the
 * reference slot minus `maxSlotLag` (plus FINALIZED_EXTRA_LAG for a `finalized` read) is rejected and the
 * request is asked elsewhere; the reference slot
 * is the highest slot of the last health round and of the answers accepted since (monotonic). When
 * every provider is stale the request fails (web3.js reports it, the service answers chain-unavailable)
 * rather than trusting an old answer. `getSignatureStatuses` ("did it land?", recorded-send.ts reads it
 * right after the block height to decide that a transaction is dead) is held to more: its context slot
 * must be at least the highest slot the pool knew when the request started, so a provider a few slots
 * behind (within the lag allowed for other reads) cannot say "never seen" about a transaction another
 * provider already showed landed; such an answer is asked elsewhere without taking the provider out. The localnet does not implement `minContextSlot`, so the check
 * is made on the answer's context, which every provider returns; methods without a context (getBlockHeight,
 * getTransaction) rely on the health check having taken a stale provider out.
 *
 * With one provider (`SOLANA_RPC_URL`) there is no health loop and no failover: the pool is a
 * pass-through with today's timeout.
 */
import type { Commitment } from '@solana/web3.js';
import type { Log } from '../lib/log.js';
import { websocketUrlFor } from '../lib/rpc-url.js';

/** One provider as configured: its JSON-RPC URL and PubSub websocket URL (null: none). */
export interface RpcProviderConfig {
  url: string;
  wsUrl?: string | null;
}

/** The transport the pool sends with (the global fetch; tests pass fakes). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface RpcPoolOptions {
  /** preference order; at least one */
  providers: RpcProviderConfig[];
  /** ms between the starts of health checks (default 500); a provider whose check is in flight is skipped */
  healthIntervalMs?: number;
  /** ms a health check may take; unanswered this long while another provider answers: out (default 1000) */
  healthTimeoutMs?: number;
  /** ms a provider's slot may stand still while another provider moves STALL_SLOTS past it (default 1000) */
  staleAfterMs?: number;
  /** ms one attempt on one provider may take when another provider could still be asked (default 2000) */
  attemptTimeoutMs?: number;
  /** ms a whole request may take across providers (default 15 000) */
  requestTimeoutMs?: number;
  /** slots a provider may lag the highest known slot before it is stale (default 10 = 4 s of 400 ms slots) */
  maxSlotLag?: number;
  /** consecutive good health checks before an unhealthy provider is selectable again (default 3) */
  recoverAfter?: number;
  /** recent requests per provider kept for the error rate (default 20) */
  errorWindow?: number;
  /** failures among them that take a provider out, at least (default 5) */
  errorMinCount?: number;
  /** failed fraction of the window that takes a provider out (default 0.5) */
  errorRateOut?: number;
  /** commitment of the health check's getSlot (default 'confirmed') */
  commitment?: Commitment;
  fetch?: FetchLike;
  /** the clock the health rules measure with, ms (default performance.now; tests pass a fake) */
  now?: () => number;
  log?: Pick<Log, 'info' | 'warn'>;
}

/** A provider's state as the pool sees it (metrics, /readyz, logs). `label` never carries the URL's path or query (API keys). */
export interface RpcProviderStatus {
  label: string;
  healthy: boolean;
  selected: boolean;
  /** last slot its health check reported (null before the first) */
  slot: number | null;
  /** why it is out (null when healthy) */
  reason: string | null;
  /** requests answered and failed since start */
  requests: number;
  failures: number;
}

/** The PubSub endpoint of the selected provider, followed as the selection changes (chain/pubsub.ts). */
export interface WsEndpoint {
  /** the websocket URL to connect to now */
  current(): string;
  /** `listener` runs when `current()` changes; returns the unsubscribe */
  onSwitch(listener: () => void): () => void;
}

/** JSON-RPC error codes that mean "this node cannot answer now; ask another" (Agave's rpc custom errors). */
export const NODE_BEHIND_CODES: ReadonlySet<number> = new Set([-32005, -32016]);

interface Provider {
  readonly url: string;
  readonly wsUrl: string | null;
  readonly label: string;
  healthy: boolean;
  reason: string | null;
  slot: number | null;
  okStreak: number;
  /** the health check in flight (null: none) */
  inFlight: Promise<void> | null;
  /** start of the last check while it is unanswered (in flight or timed out); null once it answered */
  unansweredSince: number | null;
  /** the last check timed out (unanswered for `healthTimeoutMs` as its own timer counted) */
  timedOut: boolean;
  /** consecutive checks that timed out */
  slowStreak: number;
  /** start of the newest check this provider answered within `healthTimeoutMs` (-Infinity: none) */
  answeredStart: number;
  /** start of the first check that reported `slot`, and the highest slot of the others then (or `slot` when higher) */
  slotSince: number;
  slotBase: number;
  /** start of the latest check answered in time that still reported `slot` (so the span is seen, not assumed) */
  slotSeen: number;
  /** the request attempts waiting on this provider (aborted when it is taken out) */
  attempts: Set<AbortController>;
  window: boolean[];
  requests: number;
  failures: number;
}

class AttemptFailed extends Error {
  constructor(
    message: string,
    /** the connection failed (refused, reset), as opposed to a timeout or an unusable answer */
    readonly transport = false,
  ) {
    super(message);
  }
}

/** The reason an attempt is aborted with when its provider is taken out. */
class ProviderOut extends Error {}

/** Methods whose answer must be at least as recent as the newest slot known when the request started. */
const STRICT_METHODS: ReadonlySet<string> = new Set(['getSignatureStatuses']);

/** Slots the others must move past a provider's standing slot, within `staleAfterMs`, for it to be stuck. */
export const STALL_SLOTS = 2;

/** Extra slots a `finalized` read's context may lag (the root trails the tip by ~32 slots on mainnet). */
export const FINALIZED_EXTRA_LAG = 64;

/** A label for a provider URL: host[:port], `#n` appended when two providers share a host. */
function labelsFor(urls: string[]): string[] {
  const hosts = urls.map((u) => {
    try {
      return new URL(u).host;
    } catch {
      return 'invalid';
    }
  });
  return hosts.map((h, i) => (hosts.filter((x) => x === h).length > 1 ? `${h}#${i + 1}` : h));
}

export class RpcPool {
  private readonly list: Provider[];
  private readonly o: Required<Omit<RpcPoolOptions, 'providers' | 'log'>> & Pick<RpcPoolOptions, 'log'>;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** aborts the checks in flight when the loop stops (a hanging provider does not hold the shutdown) */
  private stopping = new AbortController();
  private referenceSlot = 0;
  private lastSelected: Provider;
  private readonly switchListeners = new Set<() => void>();

  constructor(opts: RpcPoolOptions) {
    if (!opts.providers.length) throw new Error('an RPC pool needs at least one provider');
    this.o = {
      healthIntervalMs: opts.healthIntervalMs ?? 500,
      healthTimeoutMs: opts.healthTimeoutMs ?? 1_000,
      staleAfterMs: opts.staleAfterMs ?? 1_000,
      attemptTimeoutMs: opts.attemptTimeoutMs ?? 2_000,
      requestTimeoutMs: opts.requestTimeoutMs ?? 15_000,
      maxSlotLag: opts.maxSlotLag ?? 10,
      recoverAfter: opts.recoverAfter ?? 3,
      errorWindow: opts.errorWindow ?? 20,
      errorMinCount: opts.errorMinCount ?? 5,
      errorRateOut: opts.errorRateOut ?? 0.5,
      commitment: opts.commitment ?? 'confirmed',
      fetch: opts.fetch ?? ((url, init) => fetch(url, init)),
      now: opts.now ?? (() => performance.now()),
      log: opts.log,
    };
    const labels = labelsFor(opts.providers.map((p) => p.url));
    this.list = opts.providers.map((p, i) => ({
      url: p.url,
      wsUrl: p.wsUrl === undefined ? websocketUrlFor(p.url) : p.wsUrl,
      label: labels[i]!,
      healthy: true,
      reason: null,
      slot: null,
      okStreak: 0,
      inFlight: null,
      unansweredSince: null,
      timedOut: false,
      slowStreak: 0,
      answeredStart: -Infinity,
      slotSince: 0,
      slotBase: 0,
      slotSeen: 0,
      attempts: new Set<AbortController>(),
      window: [],
      requests: 0,
      failures: 0,
    }));
    this.lastSelected = this.list[0]!;
  }

  /** Number of providers. */
  get size(): number {
    return this.list.length;
  }

  /** The highest slot known (health rounds and accepted answers); 0 before any. */
  get highestSlot(): number {
    return this.referenceSlot;
  }

  /** Start the health loop (two or more providers only; a no-op otherwise or when running). */
  start(): void {
    if (this.running || this.list.length < 2) return;
    this.running = true;
    const tick = () => {
      if (!this.running) return;
      this.startChecks();
      this.timer = setTimeout(tick, this.o.healthIntervalMs);
      this.timer.unref?.();
    };
    tick();
  }

  /** Stop the health loop; aborts the checks in flight and resolves when they ended. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const stopping = this.stopping;
    this.stopping = new AbortController();
    stopping.abort(new Error('health loop stopped'));
    await Promise.all(this.list.map((p) => p.inFlight));
  }

  /**
   * The provider requests go to first: the first healthy one in preference order; when none is healthy,
   * the one selected last (sticky: the selection, and the payment subscription with it, does not flap
   * back to a preferred provider that is down just because the others are out too).
   */
  private selectedProvider(): Provider {
    return this.list.find((p) => p.healthy) ?? this.lastSelected;
  }

  /** Label of the selected provider. */
  selected(): string {
    return this.selectedProvider().label;
  }

  /** Every provider's state, in preference order. */
  status(): RpcProviderStatus[] {
    const sel = this.selectedProvider();
    return this.list.map((p) => ({
      label: p.label,
      healthy: p.healthy,
      selected: p === sel,
      slot: p.slot,
      reason: p.reason,
      requests: p.requests,
      failures: p.failures,
    }));
  }

  /** The PubSub endpoint following the selected provider (null when the selected provider has none). */
  wsEndpoint(): WsEndpoint | null {
    if (!this.list.some((p) => p.wsUrl)) return null;
    return {
      current: () => (this.selectedProvider().wsUrl ?? this.list.find((p) => p.wsUrl)!.wsUrl!),
      onSwitch: (listener) => {
        this.switchListeners.add(listener);
        return () => this.switchListeners.delete(listener);
      },
    };
  }

  /**
   * One health round by hand (tests, start-up): a check starts on every provider that has none in flight;
   * resolves when every check in flight has ended and been judged (never rejects).
   */
  async checkNow(): Promise<void> {
    this.startChecks();
    await Promise.all(this.list.map((p) => p.inFlight));
  }

  /** Start a check on every provider without one in flight. */
  private startChecks(): void {
    // one start time for the round: "another provider answered a check started no earlier" holds within a round
    const started = this.o.now();
    for (const p of this.list) {
      if (p.inFlight) continue;
      p.unansweredSince = started;
      p.timedOut = false;
      const stopped = this.stopping.signal;
      p.inFlight = this.check(p, stopped)
        .then((r) => (stopped.aborted ? undefined : this.judge(p, started, r)))
        .catch((err: unknown) => this.o.log?.warn({ err: String(err), provider: p.label }, 'RPC health check could not be judged'))
        .finally(() => {
          p.inFlight = null;
        });
    }
  }

  /** Judge one ended check of `p` (started at `started`), then the hang rule for every provider. */
  private judge(p: Provider, started: number, r: { slot: number } | { error: string; timedOut?: boolean }): void {
    const answeredIn = this.o.now() - started;
    if ('error' in r) {
      if (!r.timedOut) {
        // an answer, if a bad one: the provider (not the service) is what fails
        p.unansweredSince = null;
        this.markOut(p, r.error);
      } else {
        p.timedOut = true;
        p.slowStreak += 1;
        if (!p.healthy) p.okStreak = 0;
      }
      this.judgeHangs();
      return;
    }
    p.unansweredSince = null;
    p.slowStreak = 0;
    // answered late (the service was slow to read it: a blocked event loop) proves nothing about the others
    const inTime = answeredIn < this.o.healthTimeoutMs;
    if (inTime) p.answeredStart = Math.max(p.answeredStart, started);
    this.judgeSlot(p, r.slot, started, inTime);
    this.judgeHangs();
  }

  /**
   * The slot rules (stuck, lagging) on the slot a check of `p` started at `started` reported; counts a good
   * check towards coming back. The time a slot stood still is measured between checks that reported it
   * (a check that timed out says nothing), from the start of the first to the start of the latest answered
   * in time: a slot read late (the service slow to read the answer) does not stretch it.
   */
  private judgeSlot(p: Provider, slot: number, started: number, inTime: boolean): void {
    const now = this.o.now();
    if (p.slot === null || slot > p.slot) {
      p.slotSince = inTime ? started : now;
      p.slotSeen = p.slotSince;
      p.slotBase = Math.max(slot, this.othersSlot(p));
    } else if (slot === p.slot && inTime) {
      p.slotSeen = Math.max(p.slotSeen, started);
    }
    p.slot = slot;
    this.referenceSlot = Math.max(this.referenceSlot, slot);
    const stale = this.staleReason(p);
    if (stale) return this.markOut(p, stale);
    p.okStreak += 1;
    if (!p.healthy && p.okStreak >= this.o.recoverAfter) {
      p.healthy = true;
      p.reason = null;
      p.window = [];
      this.o.log?.info({ provider: p.label, slot: p.slot }, 'RPC provider healthy again');
      this.noteSelection();
    }
    // a newer slot may show the others behind or stuck now, without waiting for their next check
    for (const o of this.list) {
      if (o === p || !o.healthy || o.slot === null) continue;
      const r = this.staleReason(o);
      if (r) this.markOut(o, r);
    }
  }

  /** Why `p`'s last checked slot is stale (lagging past `maxSlotLag`, or stuck), or null. */
  private staleReason(p: Provider): string | null {
    const lag = this.referenceSlot - p.slot!;
    if (lag > this.o.maxSlotLag) return `stale: ${lag} slots behind`;
    const still = p.slotSeen - p.slotSince;
    const others = this.othersSlot(p);
    if (still >= this.o.staleAfterMs && others >= p.slotBase + STALL_SLOTS) {
      return `stale: slot ${p.slot} for ${Math.round(still)} ms while another provider reached ${others}`;
    }
    return null;
  }

  /** The highest slot the other providers' checks reported (0: none yet). */
  private othersSlot(p: Provider): number {
    return Math.max(0, ...this.list.filter((o) => o !== p && o.slot !== null).map((o) => o.slot!));
  }

  /**
   * The hang rule: out, a provider whose check has gone unanswered for `healthTimeoutMs` while another
   * provider answered, in time, a check started no earlier. Nobody answering in time takes nobody out, and
   * a timeout never takes out the last healthy provider (the one answering may be out for another reason,
   * e.g. stale: it is no better a choice).
   */
  private judgeHangs(): void {
    const now = this.o.now();
    for (const p of this.list) {
      const since = p.unansweredSince;
      if (since === null || (!p.timedOut && now - since < this.o.healthTimeoutMs)) continue;
      if (!this.list.some((o) => o !== p && o.answeredStart >= since)) continue;
      if (!p.healthy) {
        p.okStreak = 0;
        continue;
      }
      if (!this.list.some((o) => o !== p && o.healthy)) continue;
      // requests wait on the selected provider: out on its first such check; a standby on its second in a row
      // (nothing waits on it, and a briefly slow one keeps its place as the next choice)
      const waitedOn = p === this.selectedProvider();
      if (waitedOn || p.slowStreak >= 2) this.markOut(p, 'getHealth: timed out');
    }
  }

  private async check(p: Provider, stopped: AbortSignal): Promise<{ slot: number } | { error: string; timedOut?: boolean }> {
    const signal = AbortSignal.any([AbortSignal.timeout(this.o.healthTimeoutMs), stopped]);
    try {
      const [health, slot] = await Promise.all([
        this.call(p, 'getHealth', [], signal),
        this.call(p, 'getSlot', [{ commitment: this.o.commitment }], signal),
      ]);
      if (health !== 'ok') return { error: `getHealth: ${JSON.stringify(health)}` };
      if (typeof slot !== 'number') return { error: 'getSlot: not a number' };
      return { slot };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err), timedOut: signal.aborted };
    }
  }

  /** A single JSON-RPC call to one provider (health checks). Throws on any failure, incl. a JSON-RPC error. */
  private async call(p: Provider, method: string, params: unknown[], signal: AbortSignal): Promise<unknown> {
    let res: Response;
    try {
      res = await this.o.fetch(p.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        signal,
      });
    } catch (err) {
      throw new Error(`${method}: ${signal.aborted ? 'timed out' : transportError(err)}`);
    }
    if (!res.ok) throw new Error(`${method}: HTTP ${res.status}`);
    const body = (await res.json()) as { result?: unknown; error?: { code?: number; message?: string } };
    if (body.error) throw new Error(`${method}: ${body.error.code ?? ''} ${body.error.message ?? ''}`.trim());
    return body.result;
  }

  private markOut(p: Provider, reason: string): void {
    p.okStreak = 0;
    p.reason = reason;
    if (p.healthy) {
      p.healthy = false;
      this.o.log?.warn({ provider: p.label, reason }, 'RPC provider out');
      // the requests waiting on it go to the next provider now, not after their attempt timeout
      for (const c of p.attempts) c.abort(new ProviderOut(`${p.label}: taken out (${reason})`));
    }
    this.noteSelection();
  }

  private noteSelection(): void {
    const sel = this.selectedProvider();
    if (sel === this.lastSelected) return;
    const from = this.lastSelected;
    this.lastSelected = sel;
    this.o.log?.warn({ from: from.label, to: sel.label }, 'RPC provider switched');
    for (const l of this.switchListeners) {
      try {
        l();
      } catch {
        /* a listener's failure is its own */
      }
    }
  }

  /** Count one request outcome against `p`; too many failures take it out. */
  private record(p: Provider, ok: boolean): void {
    p.requests += 1;
    if (!ok) p.failures += 1;
    p.window.push(ok);
    if (p.window.length > this.o.errorWindow) p.window.shift();
    if (ok || this.list.length < 2) return;
    const failed = p.window.filter((x) => !x).length;
    // the last healthy provider stays in on its error rate: taking it out would leave nothing better
    if (!this.list.some((o) => o !== p && o.healthy)) return;
    if (p.healthy && failed >= this.o.errorMinCount && failed / p.window.length >= this.o.errorRateOut) {
      this.markOut(p, `error rate: ${failed} of the last ${p.window.length} requests failed`);
    }
  }

  /**
   * The pool-aware fetch for web3.js (`new Connection(url, { fetch: pool.fetch })`): the URL web3.js
   * passes is ignored (the pool picks the provider); the body (a JSON-RPC request or batch) is sent
   * per the rules in the module docs. Resolves with the accepted answer; rejects with the last
   * transport error when no provider gave one (web3.js: a network error -> chain-unavailable).
   */
  readonly fetch = async (_input: unknown, init?: RequestInit): Promise<Response> => {
    const body = typeof init?.body === 'string' ? init.body : init?.body ? String(init.body) : '';
    const headers = init?.headers;
    const deadline = Date.now() + this.o.requestTimeoutMs;
    const outer = init?.signal ?? undefined;
    if (this.list.length === 1) {
      const signal = outer ? AbortSignal.any([outer, AbortSignal.timeout(this.o.requestTimeoutMs)]) : AbortSignal.timeout(this.o.requestTimeoutMs);
      return this.o.fetch(this.list[0]!.url, { method: 'POST', headers, body, signal });
    }
    const healthy = this.list.filter((p) => p.healthy);
    const sticky = healthy.length ? null : this.lastSelected;
    const order = sticky ? [sticky, ...this.list.filter((p) => p !== sticky)] : [...healthy, ...this.list.filter((p) => !p.healthy)];
    const wasHealthy = new Set(healthy);
    /** the attempts to make, in order; one may be added (a retry of the last healthy provider) */
    const queue = order.map((p) => ({ p, retry: false }));
    const strictFrom = methodsOf(body).some((m) => STRICT_METHODS.has(m)) ? this.referenceSlot : 0;
    // a `finalized` read answers as of the last root, ~32 slots behind the tip by design: allowed that much more
    const lag = this.o.maxSlotLag + (/"commitment":"finalized"/.test(body) ? FINALIZED_EXTRA_LAG : 0);
    let lastError: unknown = null;
    let lastAnswer: Response | null = null;
    for (let i = 0; i < queue.length; i++) {
      const { p, retry } = queue[i]!;
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      // the last healthy provider (when none is healthy: the one selected last, asked first) gets the rest of the
      // request's time: a slow but working provider is not cut off for a last resort that is known to be failing
      const later = queue.slice(i + 1);
      const patient = later.length === 0 || (sticky ? i === 0 : wasHealthy.has(p) && !later.some((e) => wasHealthy.has(e.p)));
      const timeout = AbortSignal.timeout(patient ? remaining : Math.min(remaining, this.o.attemptTimeoutMs));
      // taken out while this attempt waits (health check, another request's stale answer): ask the next now
      const out = new AbortController();
      const signal = AbortSignal.any(outer ? [outer, timeout, out.signal] : [timeout, out.signal]);
      p.attempts.add(out);
      try {
        const res = await this.attempt(p, body, headers, signal, strictFrom, lag);
        this.record(p, true);
        return res;
      } catch (err) {
        if (outer?.aborted) throw err;
        if (err instanceof BehindAnswer) {
          // a few slots behind the newest known: asked elsewhere; not a failure of the provider
          lastError = err;
          continue;
        }
        this.record(p, false);
        if (err instanceof StaleAnswer) {
          this.markOut(p, err.message);
          lastError = err;
        } else if (err instanceof HttpAnswer) {
          lastAnswer = err.response;
          lastError = err;
        } else {
          lastError = err;
          // the last healthy provider's connection failed (reset, refused; not a timeout): asked once more before
          // the providers known to be failing, which would otherwise be all that is left for the rest of the time
          if (err instanceof AttemptFailed && err.transport && !retry && p.healthy && !later.some((e) => e.p.healthy)) {
            queue.splice(i + 1, 0, { p, retry: true });
          }
        }
      } finally {
        p.attempts.delete(out);
      }
    }
    if (lastAnswer) return lastAnswer;
    // "fetch failed" as undici says it: the service's error translation (./errors.ts) reads it as the RPC
    // being unreachable (503 chain-unavailable, retried), whatever web3.js wraps around it
    const last = lastError instanceof Error ? lastError.message : 'no provider was asked';
    throw new Error(`fetch failed: no RPC provider gave a usable answer (last: ${last})`, { cause: lastError });
  };

  private async attempt(p: Provider, body: string, headers: RequestInit['headers'], signal: AbortSignal, strictFrom: number, lag: number): Promise<Response> {
    let res: Response;
    let text: string;
    try {
      res = await this.o.fetch(p.url, { method: 'POST', headers, body, signal });
      text = await res.text();
    } catch (err) {
      if (signal.reason instanceof ProviderOut) throw new AttemptFailed(signal.reason.message);
      if (signal.aborted) throw new AttemptFailed(`${p.label}: no answer in time (aborted due to timeout)`);
      throw new AttemptFailed(`${p.label}: ${transportError(err)}`, true);
    }
    if (res.status === 429 || res.status >= 500) {
      throw new HttpAnswer(p.label, new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers }));
    }
    if (res.ok) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new AttemptFailed(`${p.label}: not JSON`);
      }
      let newest = 0;
      for (const one of Array.isArray(parsed) ? parsed : [parsed]) {
        const m = one as { error?: { code?: number; message?: string }; result?: { context?: { slot?: unknown } } };
        if (m?.error && typeof m.error.code === 'number' && NODE_BEHIND_CODES.has(m.error.code)) {
          throw new AttemptFailed(`${p.label}: ${m.error.code} ${m.error.message ?? ''}`);
        }
        const slot = m?.result?.context?.slot;
        if (typeof slot === 'number') {
          if (slot < this.referenceSlot - lag) {
            throw new StaleAnswer(`stale: answered at slot ${slot}, ${this.referenceSlot - slot} behind`);
          }
          if (slot < strictFrom) throw new BehindAnswer(`${p.label}: answered at slot ${slot}, before slot ${strictFrom} already seen`);
          newest = Math.max(newest, slot);
        }
      }
      if (newest > this.referenceSlot) this.referenceSlot = newest;
    }
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  }
}

class StaleAnswer extends Error {}

class BehindAnswer extends Error {}

/** The JSON-RPC method names of a request body (one or a batch); [] when it is not JSON. */
function methodsOf(body: string): string[] {
  try {
    const parsed = JSON.parse(body) as { method?: unknown } | Array<{ method?: unknown }>;
    return (Array.isArray(parsed) ? parsed : [parsed]).map((m) => String(m?.method));
  } catch {
    return [];
  }
}

class HttpAnswer extends Error {
  constructor(
    label: string,
    readonly response: Response,
  ) {
    super(`${label}: HTTP ${response.status}`);
  }
}

function transportError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/**
 * The providers named by the configuration: `urls` in preference order, each with its websocket URL
 * (`wsUrls[i]`; absent -> derived from the RPC URL as web3.js does; `null` list -> no websockets).
 */
export function providersFrom(urls: string[], wsUrls: Array<string> | null | undefined): RpcProviderConfig[] {
  return urls.map((url, i) => ({ url, wsUrl: wsUrls === null ? null : (wsUrls?.[i] ?? websocketUrlFor(url)) }));
}
