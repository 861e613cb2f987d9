/**
 * Prometheus metrics (issue 25 part 5): one `prom-client` Registry per app (tests build several apps
 * in one process; `npm start` builds one), served as the Prometheus text exposition format 0.0.4 by
 * http/metrics.ts (`GET /metrics`, not a contract route: METRICS_PORT and/or METRICS_TOKEN).
 *
 * Why prom-client (15.x, pinned): the de-facto Node client, maintained, implements the text format,
 * histograms and collect() callbacks; writing the format by hand is where escaping bugs live.
 *
 * Two kinds of metrics:
 * - counted on the path where the thing happens, cheaply (a counter increment): HTTP requests and
 *   their latency (http/metrics.ts), escrow volume (orders repo, after the commit), webhook attempts
 *   (webhooks worker);
 * - read at scrape time by a collect() callback from state the process already holds (database pool,
 *   leader lease, payment watcher) or from bounded, indexed queries, cached for `scrapeCacheMs`
 *   (webhook backlog, attention flags): a scrape never scans a table.
 *
 * Labels are bounded: the route label is the contract route's path template (`/api/v1/listings/:id`,
 * never the raw URL), `(unmatched)` for anything no route matched; currencies are the configured ones;
 * flag kinds are the fixed reasons of the code that raises them.
 *
 * Other modules add their own: `metrics.registerGauge({ name, help, labelNames, collect })` (a gauge
 * whose values collect() sets at scrape time) and `metrics.addAttentionFlags(source)` (a source of
 * counts per flag kind, summed into `bazaar_attention_flags{kind}`; the dispute desk adds its
 * unresolved-dispute flag this way).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Metric names start with this. */
export const METRIC_PREFIX = 'bazaar_';

/** Latency buckets of `bazaar_http_request_duration_seconds`, seconds. */
export const HTTP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The route label of a request no route matched (404s of arbitrary paths must not grow the label set). */
export const UNMATCHED_ROUTE = '(unmatched)';

/** Counts per kind from one source of attention flags (e.g. `{ 'escrow-vanished': 2 }`). */
export type AttentionSource = () => Promise<Record<string, number>> | Record<string, number>;

/** A money movement of an escrow: `baseUnits` of `currency` (code) entered (`funded`) or left it. */
export interface EscrowMovement {
  currency: string;
  direction: 'funded' | 'released' | 'refunded' | 'resolved';
  baseUnits: bigint;
}

export interface GaugeSpec<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  /** sets the gauge's values at scrape time (reset before each call); may be async */
  collect: (gauge: Gauge<L>) => void | Promise<void>;
}

export interface MetricsOptions {
  /** also the process metrics (`process_*`, `nodejs_*`: CPU, memory, event-loop delay): once per process (main.ts) */
  processMetrics?: boolean;
  /** how long a value read by a database query is reused by the next scrapes, ms (default 10 000) */
  scrapeCacheMs?: number;
}

/**
 * A value computed by `read` at most every `ms` milliseconds; a failed read keeps the previous value
 * (null before the first success). Concurrent scrapes share one read.
 */
export function cachedRead<T>(ms: number, read: () => Promise<T>): () => Promise<T | null> {
  let value: T | null = null;
  let at = -Infinity;
  let inflight: Promise<T | null> | null = null;
  return () => {
    if (performance.now() - at < ms) return Promise.resolve(value);
    inflight ??= read()
      .then((v) => {
        value = v;
        at = performance.now();
        return v;
      })
      .catch(() => value)
      .finally(() => {
        inflight = null;
      });
    return inflight;
  };
}

/** The app's metrics: the registry and the instruments the modules feed. */
export class Metrics {
  readonly registry = new Registry();
  readonly scrapeCacheMs: number;
  /** requests answered, by method, route template and status code */
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  /** time from the request's arrival to the response's last byte handed to the socket, seconds */
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** base units that entered or left escrow, by currency code and direction */
  readonly escrowVolume: Counter<'currency' | 'direction'>;
  /** webhook delivery attempts by outcome: delivered, retry (failed, retried later), failed (given up) */
  readonly webhookAttempts: Counter<'outcome'>;
  /** Solana JSON-RPC calls the service waited for, by method and outcome (ok, error), seconds */
  readonly rpcDuration: Histogram<'method' | 'outcome'>;
  private readonly attention = new Set<AttentionSource>();

  constructor(opts: MetricsOptions = {}) {
    this.scrapeCacheMs = opts.scrapeCacheMs ?? 10_000;
    const registers = [this.registry];
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: `${METRIC_PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by method, route template (the contract path, `(unmatched)` when no route matched) and status code',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    });
    this.httpDuration = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'HTTP request latency in seconds (arrival to the end of the response), by method, route template and status code',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: HTTP_DURATION_BUCKETS,
      registers,
    });
    this.escrowVolume = new Counter({
      name: `${METRIC_PREFIX}escrow_volume_base_units_total`,
      help: 'Escrowed money in base units of the currency (lamports for SOL, 10^-6 USDC for USDC: the mint\'s smallest unit), counted when the order change committed: direction funded (entered escrow), released (paid to the seller, incl. auto-release), refunded (back to the buyer), resolved (split by the arbiter or a settlement)',
      labelNames: ['currency', 'direction'] as const,
      registers,
    });
    this.webhookAttempts = new Counter({
      name: `${METRIC_PREFIX}webhook_attempts_total`,
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retry (failed, another attempt is scheduled), failed (failed and given up: the delivery is failed)',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.rpcDuration = new Histogram({
      name: `${METRIC_PREFIX}rpc_request_duration_seconds`,
      help: 'Solana JSON-RPC calls the service made, seconds from the request to its answer (with SOLANA_RPC_URLS: across the providers tried, as the caller waited), by JSON-RPC method (comma-joined for a batch) and outcome: ok (an HTTP answer) or error (no answer: refused, timed out)',
      labelNames: ['method', 'outcome'] as const,
      buckets: HTTP_DURATION_BUCKETS,
      registers,
    });
    const sources = this.attention;
    this.registerGauge({
      name: `${METRIC_PREFIX}attention_flags`,
      help: 'Open attention flags raised for an operator, by kind (orders: the reconciler\'s reasons, e.g. escrow-vanished; other modules add their kinds)',
      labelNames: ['kind'] as const,
      async collect(g) {
        const all = await Promise.all([...sources].map((s) => Promise.resolve(s()).catch(() => ({}) as Record<string, number>)));
        for (const counts of all) for (const [kind, n] of Object.entries(counts)) g.inc({ kind }, n);
      },
    });
  }

  /**
   * A gauge set at scrape time by `spec.collect` (values are reset first, so a label that disappears
   * is not exported stale). Returns the gauge. Throws when the name is taken.
   */
  registerGauge<L extends string>(spec: GaugeSpec<L>): Gauge<L> {
    const g: Gauge<L> = new Gauge<L>({
      name: spec.name,
      help: spec.help,
      labelNames: (spec.labelNames ?? []) as L[],
      registers: [this.registry],
      async collect() {
        g.reset();
        await spec.collect(g);
      },
    });
    return g;
  }

  /**
   * A counter whose value is read at scrape time from a monotonic count the process already keeps
   * (`read()`: e.g. db/statement-counter.ts, incremented on the hot path without touching prom-client).
   * Returns the counter. Throws when the name is taken.
   */
  registerCounter(spec: { name: string; help: string; read: () => number }): Counter {
    const c: Counter = new Counter({
      name: spec.name,
      help: spec.help,
      registers: [this.registry],
      collect() {
        c.reset();
        c.inc(spec.read());
      },
    });
    return c;
  }

  /** Add a source of attention-flag counts per kind (summed into `bazaar_attention_flags`); returns its removal. */
  addAttentionFlags(source: AttentionSource): () => void {
    this.attention.add(source);
    return () => this.attention.delete(source);
  }

  /** Count a committed escrow movement (no-op for 0 or a negative amount). */
  recordEscrow(m: EscrowMovement): void {
    if (m.baseUnits <= 0n) return;
    // counters are doubles: exact up to 2^53 base units per increment (9e15: 9 billion USDC)
    this.escrowVolume.inc({ currency: m.currency, direction: m.direction }, Number(m.baseUnits));
  }

  /** The text exposition of every metric. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** A fresh Metrics (one per app). */
export function createMetrics(opts: MetricsOptions = {}): Metrics {
  return new Metrics(opts);
}

/** One RPC provider's state for the gauges (chain/rpc-pool.ts `RpcPool.status()`; metrics.ts does not import the chain). */
export interface RpcProviderGaugeState {
  /** host[:port] of the provider's URL, never its path or query (API keys live there) */
  label: string;
  healthy: boolean;
  selected: boolean;
  slot: number | null;
}

/**
 * The RPC provider gauges (issue 27 item 5), registered when the service runs with several providers
 * (`SOLANA_RPC_URLS`): `bazaar_rpc_provider_up{provider}` (1 healthy, 0 taken out by the health
 * checks), `bazaar_rpc_provider_selected{provider}` (1 for the provider requests go to first) and
 * `bazaar_rpc_provider_slot{provider}` (the slot its last health check reported). The label set is the
 * configured providers (bounded).
 */
export function registerRpcProviderGauges(metrics: Metrics, status: () => RpcProviderGaugeState[]): void {
  const p = METRIC_PREFIX;
  metrics.registerGauge({
    name: `${p}rpc_provider_up`,
    help: 'Solana RPC provider health as the pool sees it: 1 healthy, 0 taken out (failed or unanswered health check, slot standing still while the others move on, slot lag past SOLANA_RPC_MAX_SLOT_LAG, stale answer, error rate); by provider host',
    labelNames: ['provider'] as const,
    collect(g) {
      for (const s of status()) g.set({ provider: s.label }, s.healthy ? 1 : 0);
    },
  });
  metrics.registerGauge({
    name: `${p}rpc_provider_selected`,
    help: 'The Solana RPC provider requests and the payment subscription go to first: 1 for the selected one (the first healthy in SOLANA_RPC_URLS order), 0 for the others',
    labelNames: ['provider'] as const,
    collect(g) {
      for (const s of status()) g.set({ provider: s.label }, s.selected ? 1 : 0);
    },
  });
  metrics.registerGauge({
    name: `${p}rpc_provider_slot`,
    help: 'Slot reported by the last health check of each Solana RPC provider (absent before the first check)',
    labelNames: ['provider'] as const,
    collect(g) {
      for (const s of status()) if (s.slot !== null) g.set({ provider: s.label }, s.slot);
    },
  });
}

/** The standby reads state for the gauges (db/read-routing.ts `ReadRouter`; metrics.ts does not import the db layer). */
export interface StandbyReadGaugeState {
  /** the last measured replay lag of the standby client's server, ms; null: unknown */
  lagMs: number | null;
  /** where an anonymous public read goes now */
  pool: 'primary' | 'standby';
  /** the standby client's server was a hot standby at the last sample (false: prefer-standby fell back to the primary); null: no sample */
  inRecovery: boolean | null;
  /** public reads routed since start, by pool */
  served: Record<'primary' | 'standby', number>;
}

/**
 * The standby reads metrics (issue 27 item 4), registered when `DATABASE_STANDBY_READS=on`:
 * `bazaar_db_standby_replay_lag_seconds` (the last lag sample; absent while unknown),
 * `bazaar_db_standby_in_recovery` (the standby pool's server is a hot standby), `bazaar_db_public_read_pool{pool}` (1 for the pool anonymous search and listing reads go to now, 0 for the
 * other) and `bazaar_db_public_reads_total{pool}` (those reads since start, by the pool that served them).
 */
export function registerStandbyReadGauges(metrics: Metrics, state: () => StandbyReadGaugeState): void {
  const p = METRIC_PREFIX;
  metrics.registerGauge({
    name: `${p}db_standby_replay_lag_seconds`,
    help: 'Replay lag of the standby that public reads may use, sampled every second on the standby (0 when everything received is replayed); absent while unknown. Past DATABASE_STANDBY_MAX_LAG_MS reads go to the primary',
    collect(g) {
      const s = state();
      if (s.lagMs !== null) g.set(s.lagMs / 1000);
    },
  });
  metrics.registerGauge({
    name: `${p}db_standby_in_recovery`,
    help: 'Whether the server the standby reads pool is on was a hot standby at the last sample: 1 yes, 0 it is a primary (no standby answered, or it was promoted); absent before the first sample',
    collect(g) {
      const s = state();
      if (s.inRecovery !== null) g.set(s.inRecovery ? 1 : 0);
    },
  });
  metrics.registerGauge({
    name: `${p}db_public_read_pool`,
    help: 'Where anonymous search and listing reads go now: 1 for the serving pool (primary or standby), 0 for the other',
    labelNames: ['pool'] as const,
    collect(g) {
      const s = state();
      g.set({ pool: 'standby' }, s.pool === 'standby' ? 1 : 0);
      g.set({ pool: 'primary' }, s.pool === 'primary' ? 1 : 0);
    },
  });
  const reads: Counter<'pool'> = new Counter<'pool'>({
    name: `${p}db_public_reads_total`,
    help: 'Search and listing reads that may use the standby, by the pool that served them (credentialed, write and background reads count as primary)',
    labelNames: ['pool'] as const,
    registers: [metrics.registry],
    collect() {
      const s = state();
      reads.reset();
      reads.inc({ pool: 'primary' }, s.served.primary);
      reads.inc({ pool: 'standby' }, s.served.standby);
    },
  });
}
