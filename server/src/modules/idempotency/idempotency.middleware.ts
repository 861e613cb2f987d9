/**
 * Idempotency-Key (IETF draft-ietf-httpapi-idempotency-key-header) as Express middleware.
 *
 * - no key: 400 `idempotency-key-missing` when the route requires one, else the request runs normally;
 * - first use: the key is recorded as running, the handler runs, its response (status, body,
 *   content-type, location) is stored before it is sent;
 * - same key + same fingerprint, first still running: 409 `idempotency-key-in-use` (Retry-After: 1);
 * - same key + same fingerprint, done: the stored response is replayed (header `Idempotent-Replayed: true`);
 * - same key + different fingerprint: 422 `idempotency-key-mismatch`;
 * - a 5xx answer is not stored (the key is freed so the client can retry);
 * - keys expire after `ttlSeconds` (default 24 h); an expired key is treated as new.
 *
 * Fingerprint = sha256 over method, path (with query), canonical JSON body and the principal.
 * Keys are scoped per principal: two users may use the same key independently.
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { idempotencyErrors } from './idempotency.errors.js';
import type { IdempotencyStore } from './idempotency.store.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyOptions {
  store: IdempotencyStore;
  required?: boolean;
  ttlSeconds?: number;
  now?: () => Date;
}

type PrincipalLike = { kind?: string; userId?: string | null; wallet?: string | null; apiKeyId?: string } | undefined;

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
  const now = opts.now ?? (() => new Date());
  const { store } = opts;

  return (req: Request, res: Response, next: NextFunction) => {
    const key = parseIdempotencyKey(req.get(IDEMPOTENCY_HEADER));
    if (key === undefined) return opts.required ? next(idempotencyErrors.missing()) : next();
    if (key === null) return next(idempotencyErrors.invalid());
    const scope = principalScope(req);
    const fingerprint = requestFingerprint(req, scope);

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
        res.set('Retry-After', '1');
        return next(idempotencyErrors.inUse());
      }
      replay(res, existing.responseStatus ?? 200, existing.responseBody, existing.responseHeaders);
    };

    const run = () => {
      const origSend = res.send.bind(res);
      let stored = false;
      res.send = ((body?: unknown) => {
        if (stored) return origSend(body as never);
        stored = true;
        const status = res.statusCode;
        const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : JSON.stringify(body ?? null);
        const headers: Record<string, string> = {};
        for (const h of ['content-type', 'location']) {
          const v = res.get(h);
          if (v) headers[h] = v;
        }
        const persist = status >= 500 ? store.remove(scope, key) : store.complete(scope, key, status, text, headers);
        persist.then(
          () => origSend(body as never),
          (err) => {
            (req as Request & { log?: { error: (...a: unknown[]) => void } }).log?.error({ err }, 'idempotency store failed');
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
