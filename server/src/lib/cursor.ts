/**
 * Opaque keyset cursors: base64url(JSON) of the sort key of the last row of a page plus its id,
 * bound to the sort and filters the page was read with.
 *
 *   { v: 1, s: <sort name>, f: <filter fingerprint>, k: [<sort key values>], id: <uuid> }
 *
 * Key values are JSON scalars (strings for timestamps, base units and decimals, so nothing is lost
 * to floating point) or null. Every cursor is validated before use: wrong encoding, wrong shape, a
 * different sort or different filters -> DomainError('validation-error') on `query.cursor`. Values
 * end up as bound query parameters, never in SQL text.
 */
import { createHash } from 'node:crypto';
import { DomainError } from '../errors.js';

export type CursorValue = string | number | null;

/** What a cursor must look like for one sort: a validator per key position. */
export interface CursorSpec {
  sort: string;
  /** canonical filters the cursor is bound to (undefined values are ignored) */
  filters: Record<string, unknown>;
  /** one validator per sort key position */
  keys: ReadonlyArray<(v: unknown) => boolean>;
}

export interface DecodedCursor {
  keys: CursorValue[];
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Stable short fingerprint of filters: sorted keys, undefined dropped, bigint as text. */
export function fingerprint(filters: Record<string, unknown>): string {
  const canonical = Object.keys(filters)
    .filter((k) => filters[k] !== undefined && filters[k] !== null)
    .sort()
    .map((k) => [k, typeof filters[k] === 'bigint' ? String(filters[k]) : filters[k]]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 16);
}

export function encodeCursor(spec: Pick<CursorSpec, 'sort' | 'filters'>, keys: CursorValue[], id: string): string {
  const payload = { v: 1, s: spec.sort, f: fingerprint(spec.filters), k: keys, id };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

export function invalidCursor(message: string): DomainError {
  return new DomainError('validation-error', `Invalid cursor: ${message}.`, {
    errors: [{ path: 'query.cursor', message, code: 'invalid_cursor' }],
  });
}

/** Decode and validate a cursor against the spec; throws validation-error on any mismatch. */
export function decodeCursor(raw: string, spec: CursorSpec): DecodedCursor {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw invalidCursor('not a cursor issued by this service');
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('not a cursor issued by this service');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw invalidCursor('not a cursor issued by this service');
  }
  const p = payload as Record<string, unknown>;
  if (p.v !== 1 || typeof p.s !== 'string' || typeof p.f !== 'string' || !Array.isArray(p.k) || typeof p.id !== 'string') {
    throw invalidCursor('not a cursor issued by this service');
  }
  if (p.s !== spec.sort) throw invalidCursor(`issued for sort "${p.s}", not "${spec.sort}"`);
  if (p.f !== fingerprint(spec.filters)) throw invalidCursor('issued for different filters');
  if (!UUID.test(p.id)) throw invalidCursor('malformed id');
  if (p.k.length !== spec.keys.length || !spec.keys.every((ok, i) => ok((p.k as unknown[])[i]))) {
    throw invalidCursor('malformed sort key');
  }
  return { keys: p.k as CursorValue[], id: p.id };
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BIGINT_MAX = 9223372036854775807n;

/**
 * Key validators for CursorSpec.keys. They accept exactly what this service writes into cursors, and
 * only values PostgreSQL accepts for the key's type: a cursor is client input, and a value JavaScript
 * parses but PostgreSQL refuses ("0" or "2026-02-30" as a timestamp, a count past 2^63) must be a 400
 * here, not a database error later.
 */
export const cursorKey = {
  /** UTC timestamp as Date.toISOString() writes it (YYYY-MM-DDTHH:MM:SS.sssZ), a real calendar date */
  timestamp: (v: unknown) => typeof v === 'string' && ISO_MS.test(v) && !Number.isNaN(Date.parse(v)) && new Date(v).toISOString() === v,
  /** unsigned integer text that fits a PostgreSQL bigint (counts) */
  uint: (v: unknown) => typeof v === 'string' && /^(0|[1-9]\d{0,18})$/.test(v) && BigInt(v) <= BIGINT_MAX,
  /** decimal text (a rank or average rounded in SQL, base units): at most 20 digits each side */
  decimal: (v: unknown) => typeof v === 'string' && /^-?\d{1,20}(\.\d{1,20})?$/.test(v),
} as const;

/** One page of a list: the items and the cursor of the next page (null on the last one). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Cut a `limit + 1` keyset read (newest first) into a page: the first `limit` rows, and when more
 * exist a cursor holding (created_at, id) of the last row, bound to `spec`'s sort and filters.
 */
export function newestPage<T extends { createdAt: Date; id: string }>(
  rows: T[],
  limit: number,
  spec: Pick<CursorSpec, 'sort' | 'filters'>,
): Page<T> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor(spec, [last.createdAt.toISOString()], last.id) : null;
  return { items, nextCursor };
}
