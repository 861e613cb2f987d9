/**
 * The `after` of an audited event when its writer passes none: the money-relevant fields of the event's
 * snapshot (the resource as the API returns it), not the whole snapshot (the event row keeps that, for
 * EVENTS_RETENTION_DAYS; the audit entry is kept for ever and should stay small).
 */
const SUMMARY_FIELDS = [
  'status',
  'order_status',
  'milestone_index',
  'currency',
  'amount_base_units',
  'fee_base_units',
  'total_debited_base_units',
  'payment_source',
  'buyer_wallet',
  'seller_wallet',
  'destination',
  'resolution',
  'settled_by',
  'payout',
  'failure_reason',
] as const;

/** The fields of SUMMARY_FIELDS that `data` has (an object), or null when it has none or is not an object. */
export function summaryOf(data: unknown): Record<string, unknown> | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const d = data as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of SUMMARY_FIELDS) if (d[k] !== undefined) out[k] = d[k];
  return Object.keys(out).length ? out : null;
}
