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
}

export interface IdempotencyStore {
  /** Insert a `running` record; false when (scope, key) already exists (the unique constraint decides). */
  tryInsert(rec: IdempotencyRecord): Promise<boolean>;
  get(scope: string, key: string): Promise<IdempotencyRecord | null>;
  complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string> | null): Promise<void>;
  /** Remove a record (after a 5xx so the client can retry, or when expired). */
  remove(scope: string, key: string): Promise<void>;
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
  async complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string> | null) {
    const r = this.rows.get(this.k(scope, key));
    if (r) Object.assign(r, { state: 'done', responseStatus: status, responseBody: body, responseHeaders: headers });
  }
  async remove(scope: string, key: string) {
    this.rows.delete(this.k(scope, key));
  }
  async purgeExpired(now: Date) {
    let n = 0;
    for (const [id, r] of this.rows) if (r.expiresAt <= now) (this.rows.delete(id), n++);
    return n;
  }
}
