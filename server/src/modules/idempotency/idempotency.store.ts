/**
 * Storage port for Idempotency-Key records (one row per (scope, key)).
 * `scope` isolates keys per principal ("user:<id>" / "anon"), so two users may use the same key.
 */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  /** METHOD + path, informative */
  route?: string;
  /** sha256 of method + path + canonical body + principal */
  fingerprint: string;
  state: 'running' | 'done';
  responseStatus: number | null;
  responseBody: unknown;
  /** selected response headers worth replaying (e.g. location) */
  responseHeaders: Record<string, string> | null;
  createdAt: Date;
  expiresAt: Date;
  /**
   * `running` only: the request holding the key renews this lease while it runs; once it lapses (the
   * process died) another request may take the key over. null on records written before leases.
   */
  leaseExpiresAt?: Date | null;
  /** random token of the request holding the lease */
  leaseToken?: string | null;
}

export interface IdempotencyStore {
  /** Insert a `running` record; false when (scope, key) already exists (the unique constraint decides). */
  tryInsert(rec: IdempotencyRecord): Promise<boolean>;
  get(scope: string, key: string): Promise<IdempotencyRecord | null>;
  /**
   * Take over a `running` record whose lease lapsed (null or <= `now`): it gets `token` and a lease
   * until `leaseExpiresAt`. Atomic: of two requests taking over, one wins. false otherwise.
   */
  takeOver(scope: string, key: string, token: string, leaseExpiresAt: Date, now: Date): Promise<boolean>;
  /** Extend the lease while the holder (`token`) still runs; false when it lost the key. */
  renew(scope: string, key: string, token: string, leaseExpiresAt: Date): Promise<boolean>;
  /** Store the response; only the lease holder's (`token`) is stored when given. */
  complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string> | null, token?: string): Promise<void>;
  /** Remove a record (after a 5xx so the client can retry, or when expired); only the holder's when `token` is given. */
  remove(scope: string, key: string, token?: string): Promise<void>;
  /** Delete expired records; returns how many. */
  purgeExpired(now: Date): Promise<number>;
}

/** In-memory store: for unit tests and single-process development only. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private rows = new Map<string, IdempotencyRecord>();
  private k(scope: string, key: string) {
    return `${scope}\u0000${key}`;
  }
  async tryInsert(rec: IdempotencyRecord) {
    const id = this.k(rec.scope, rec.key);
    if (this.rows.has(id)) return false;
    this.rows.set(id, { ...rec });
    return true;
  }
  async get(scope: string, key: string) {
    const r = this.rows.get(this.k(scope, key));
    return r ? { ...r } : null;
  }
  async takeOver(scope: string, key: string, token: string, leaseExpiresAt: Date, now: Date) {
    const r = this.rows.get(this.k(scope, key));
    if (!r || r.state !== 'running' || (r.leaseExpiresAt && r.leaseExpiresAt > now)) return false;
    Object.assign(r, { leaseToken: token, leaseExpiresAt });
    return true;
  }
  async renew(scope: string, key: string, token: string, leaseExpiresAt: Date) {
    const r = this.rows.get(this.k(scope, key));
    if (!r || r.state !== 'running' || r.leaseToken !== token) return false;
    r.leaseExpiresAt = leaseExpiresAt;
    return true;
  }
  async complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string> | null, token?: string) {
    const r = this.rows.get(this.k(scope, key));
    if (r && (token === undefined || r.leaseToken === token)) {
      Object.assign(r, { state: 'done', responseStatus: status, responseBody: body, responseHeaders: headers, leaseExpiresAt: null });
    }
  }
  async remove(scope: string, key: string, token?: string) {
    const r = this.rows.get(this.k(scope, key));
    if (r && (token === undefined || r.leaseToken === token)) this.rows.delete(this.k(scope, key));
  }
  async purgeExpired(now: Date) {
    let n = 0;
    for (const [id, r] of this.rows) if (r.expiresAt <= now) (this.rows.delete(id), n++);
    return n;
  }
}
