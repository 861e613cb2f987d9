/**
 * Idempotency-Key (IETF draft-ietf-httpapi-idempotency-key-header) as Express middleware.
 *
 * - no key: 400 `idempotency-key-missing` when the route requires one, else the request runs normally;
 * - first use: the key is recorded as running with a lease (`leaseMs`, default 10 s) that the
 *   request renews every leaseMs/3 while its handler runs; the response (status, body, content-type,
 *   location) is stored before it is sent;
 * - same key + same fingerprint, first still running: 409 `idempotency-key-in-use` with Retry-After =
 *   the seconds left on its lease;
 * - same key + same fingerprint, running but its lease lapsed (the process died mid-request, as
 *   Stripe's in-flight keys): the new request takes the key over (atomically: one taker wins) and
 *   runs; the handler is expected to find what the dead request created (orders carry their key);
 * - same key + same fingerprint, done: the stored response is replayed (header `Idempotent-Replayed: true`);
 * - same key + different fingerprint: 422 `idempotency-key-mismatch`;
 * - a 5xx answer is not stored (the key is freed so the client can retry);
 * - keys expire after `ttlSeconds` (default 24 h); an expired key is treated as new.
 *
 * Fingerprint = sha256 over method, path (with query), canonical JSON body and the principal.
 * Keys are scoped per principal: two users may use the same key independently.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { idempotencyErrors } from './idempotency.errors.js';
import type { IdempotencyStore } from './idempotency.store.js';
import type { Principal } from '../auth/index.js';
import type { Log } from '../../lib/log.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** lease of a running key (milliseconds): how long a key whose request died stays blocked */
export const DEFAULT_IDEMPOTENCY_LEASE_MS = 10_000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/**
 * The renewal timers of the running requests of one process. `stopAll` is what a process death does
 * to them (tests simulate a crash with it; shutdown calls it after the last request).
 */
export class IdempotencyLeases {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** renew every `everyMs` until the returned stop function is called */
  start(renew: () => Promise<unknown>, everyMs: number): () => void {
    if (this.stopped) return () => undefined;
    const timer = setInterval(() => void renew().catch(() => undefined), everyMs);
    timer.unref?.();
    this.timers.add(timer);
    return () => {
      clearInterval(timer);
      this.timers.delete(timer);
    };
  }
  stopAll(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
  }
}

export interface IdempotencyOptions {
  store: IdempotencyStore;
  required?: boolean;
  ttlSeconds?: number;
  /** lease of a running key, renewed every leaseMs/3 (default DEFAULT_IDEMPOTENCY_LEASE_MS) */
  leaseMs?: number;
  /** the process's renewal timers (default: private to this middleware) */
  leases?: IdempotencyLeases;
  now?: () => Date;
}

type PrincipalLike = Principal | undefined;

/** Keys are scoped per user; a service API key (no user) is its own scope. */
export function principalScope(req: Request): string {
  const p = (req as Request & { principal?: PrincipalLike }).principal;
  if (!p) return 'anon';
  if (p.userId) return `user:${p.userId}`;
  if (p.apiKeyId) return `api_key:${p.apiKeyId}`;
  return `${p.kind ?? 'principal'}:${p.wallet ?? 'unknown'}`;
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` fingerprint alike. */
export function canonicalJson(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

export function requestFingerprint(req: Request, scope: string): string {
  const body = req.body && typeof req.body === 'object' && Object.keys(req.body).length ? req.body : null;
  return createHash('sha256')
    .update([req.method.toUpperCase(), req.originalUrl, canonicalJson(body), scope].join('\n'))
    .digest('hex');
}

/** The draft defines the key as an sf-string ("..."); bare tokens are accepted as well. */
export function parseIdempotencyKey(raw: string | undefined): string | null | undefined {
  if (raw === undefined) return undefined;
  let k = raw.trim();
  if (k.length >= 2 && k.startsWith('"') && k.endsWith('"')) k = k.slice(1, -1);
  return KEY_RE.test(k) ? k : null;
}

export function idempotency(opts: IdempotencyOptions): RequestHandler {
  const ttl = (opts.ttlSeconds ?? DEFAULT_IDEMPOTENCY_TTL_SECONDS) * 1000;
  const leaseMs = opts.leaseMs ?? DEFAULT_IDEMPOTENCY_LEASE_MS;
  const leases = opts.leases ?? new IdempotencyLeases();
  const now = opts.now ?? (() => new Date());
  const { store } = opts;

  return (req: Request, res: Response, next: NextFunction) => {
    const key = parseIdempotencyKey(req.get(IDEMPOTENCY_HEADER));
    if (key === undefined) return opts.required ? next(idempotencyErrors.missing()) : next();
    if (key === null) return next(idempotencyErrors.invalid());
    const scope = principalScope(req);
    const fingerprint = requestFingerprint(req, scope);

    const token = randomUUID();
    const begin = async (attempt: number): Promise<void> => {
      const t = now();
      const inserted = await store.tryInsert({
        scope,
        key,
        route: `${req.method.toUpperCase()} ${req.baseUrl}${req.path}`,
        fingerprint,
        state: 'running',
        responseStatus: null,
        responseBody: null,
        responseHeaders: null,
        createdAt: t,
        expiresAt: new Date(t.getTime() + ttl),
        leaseExpiresAt: new Date(t.getTime() + leaseMs),
        leaseToken: token,
      });
      if (inserted) return run();
      const existing = await store.get(scope, key);
      if (!existing || existing.expiresAt <= t) {
        if (existing) await store.remove(scope, key);
        if (attempt < 2) return begin(attempt + 1);
        return next(idempotencyErrors.inUse());
      }
      if (existing.fingerprint !== fingerprint) return next(idempotencyErrors.mismatch());
      if (existing.state === 'running') {
        const lease = existing.leaseExpiresAt ?? null;
        // the request holding the key died (its lease lapsed): take it over and run
        if ((!lease || lease <= t) && (await store.takeOver(scope, key, token, new Date(t.getTime() + leaseMs), t))) return run();
        const left = lease ? Math.ceil((lease.getTime() - t.getTime()) / 1000) : 1;
        res.set('Retry-After', String(Math.max(1, left)));
        return next(idempotencyErrors.inUse());
      }
      replay(res, existing.responseStatus ?? 200, existing.responseBody, existing.responseHeaders);
    };

    const run = () => {
      const origSend = res.send.bind(res);
      let stored = false;
      // renew the lease while the handler runs (a dead process stops renewing: the key is taken over)
      const stopRenewing = leases.start(() => store.renew(scope, key, token, new Date(now().getTime() + leaseMs)), Math.max(50, Math.floor(leaseMs / 3)));
      res.send = ((body?: unknown) => {
        if (stored) return origSend(body as never);
        stored = true;
        stopRenewing();
        const status = res.statusCode;
        const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : JSON.stringify(body ?? null);
        const headers: Record<string, string> = {};
        for (const h of ['content-type', 'location']) {
          const v = res.get(h);
          if (v) headers[h] = v;
        }
        // only the lease holder writes: a request that lost its key to a taker leaves the taker's record alone
        const persist = status >= 500 ? store.remove(scope, key, token) : store.complete(scope, key, status, text, headers, token);
        persist.then(
          () => origSend(body as never),
          (err) => {
            (req as Request & { log?: Pick<Log, 'error'> }).log?.error({ err }, 'idempotency store failed');
            origSend(body as never);
          },
        );
        return res;
      }) as Response['send'];
      next();
    };

    begin(0).catch(next);
  };
}

function replay(res: Response, status: number, body: unknown, headers: Record<string, string> | null) {
  res.status(status);
  for (const [h, v] of Object.entries(headers ?? {})) res.set(h, v);
  res.set('Idempotent-Replayed', 'true');
  res.send(typeof body === 'string' ? body : JSON.stringify(body));
}
