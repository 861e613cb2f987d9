/**
 * The hash chain of the audit log. Each entry's `hash` is the SHA-256 (hex) of the RFC 8785 (JSON
 * Canonicalization Scheme) serialization of the entry without `hash` and with `prev_hash`, the previous
 * entry's hash (by seq; `GENESIS_HASH` for the first). Changing any field of an entry changes its hash;
 * deleting an entry leaves the next one pointing at a hash no entry has. RFC 8785 by the `canonicalize`
 * package (by one of the RFC's authors; pinned): keys sorted by UTF-16 code units, ECMAScript number
 * serialization, no whitespace, so the bytes hashed are the same in any implementation that reads the row.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** `prev_hash` of the first entry: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields an entry's hash covers (snake_case, as stored and as the API returns them). */
export interface ChainedEntry {
  id: string;
  /** ISO 8601 UTC with milliseconds (the column's precision) */
  created_at: string;
  actor_type: string;
  actor_id: string;
  actor_user_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string | null;
  signature: string | null;
  event_id: string | null;
  prev_hash: string;
}

/** The canonical bytes of `e` (RFC 8785), versioned so the covered fields can grow later. */
export function canonicalEntry(e: ChainedEntry): string {
  const out = canonicalize({ v: 1, ...e });
  if (out === undefined) throw new Error('audit entry has no JSON form');
  return out;
}

/** sha256 hex of the canonical entry. */
export function entryHash(e: ChainedEntry): string {
  return createHash('sha256').update(canonicalEntry(e), 'utf8').digest('hex');
}

/**
 * A JSON value as it reads back from a jsonb column: what `JSON.stringify` keeps (undefined members dropped,
 * Dates as ISO strings); null for undefined. Hashing this, not the writer's object, makes the stored row
 * verify. Throws on a bigint (the API's JSON never holds one: base units are strings).
 */
export function asStoredJson(v: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (v === undefined || v === null) return null;
  return JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
}
