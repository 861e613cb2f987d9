/**
 * Verification of the hash chain: walk every entry in seq order and check that its hash is the hash of its
 * fields (an edit shows here) and that its `prev_hash` is the previous entry's hash (a deleted, inserted or
 * reordered entry shows here). Stops at the first broken link and names it.
 *
 * What it cannot see alone: entries removed from the END of the log (the chain that remains is whole). The
 * answer carries the head (`seq`, `hash`, count): an operator who records it (a ticket, a log shipped
 * elsewhere) detects a truncated tail later, when the recorded hash is gone or no longer at that seq.
 */
import { entryHash, GENESIS_HASH } from './audit.chain.js';
import type { AuditRepo } from './audit.repo.js';

/** Why an entry breaks the chain. */
export type BrokenReason =
  /** the stored hash is not the hash of the entry's fields: the entry was edited (or its hash) */
  | 'hash_mismatch'
  /** prev_hash is not the previous entry's hash: an entry before it was deleted, inserted or edited with its hash recomputed */
  | 'prev_hash_mismatch';

export interface ChainVerification {
  /** true when every entry verified */
  ok: boolean;
  /** entries checked (all of them when ok; up to and including the broken one otherwise) */
  checked: number;
  /** the last entry of the log when ok (null for an empty log) */
  head: { seq: string; id: string; hash: string } | null;
  /** the first entry that breaks the chain, and how */
  first_broken: { seq: string; id: string; reason: BrokenReason; expected: string; found: string } | null;
}

/** Verify the whole chain, reading `batch` entries at a time (default 1 000). */
export async function verifyChain(repo: Pick<AuditRepo, 'readAfter'>, batch = 1_000): Promise<ChainVerification> {
  let prev = GENESIS_HASH;
  let after: bigint | null = null;
  let checked = 0;
  let head: ChainVerification['head'] = null;
  for (;;) {
    const rows = await repo.readAfter(after, batch);
    for (const r of rows) {
      checked++;
      const { seq, hash, ...fields } = r;
      if (r.prev_hash !== prev) {
        return { ok: false, checked, head: null, first_broken: { seq: seq.toString(), id: r.id, reason: 'prev_hash_mismatch', expected: prev, found: r.prev_hash } };
      }
      const computed = entryHash(fields);
      if (computed !== hash) {
        return { ok: false, checked, head: null, first_broken: { seq: seq.toString(), id: r.id, reason: 'hash_mismatch', expected: computed, found: hash } };
      }
      prev = hash;
      head = { seq: seq.toString(), id: r.id, hash };
    }
    if (rows.length < batch) break;
    after = rows[rows.length - 1]!.seq;
  }
  return { ok: true, checked, head, first_broken: null };
}
