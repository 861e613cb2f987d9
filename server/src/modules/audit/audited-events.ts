/**
 * The event types that append an audit entry (issue 25 item 4): every money-moving event. `appendEvents`
 * (modules/events/outbox.ts) appends one entry per event of these types, in the same transaction and
 * under the same lock as the event. Operator actions: roles, moderation and the dispute desk's ruling.
 */
import type { EventType } from '@bazaar/contract';

export const AUDITED_EVENT_TYPES = [
  // funding seen (a wallet's fund transaction, a custodial funding, a milestone funded)
  'order.funded',
  'milestone.funded',
  // release by the buyer, auto-release (claim) by the crank
  'order.completed',
  'order.auto_released',
  'milestone.released',
  // refunds
  'order.refunded',
  'milestone.refunded',
  // the arbiter's split, and a split by agreement
  'order.resolved',
  'milestone.resolved',
  'settlement.accepted',
  // money to the seller outside the escrow
  'tip.received',
  // custody: deposits credited, withdrawals held, sent, failed (the hold released)
  'deposit.credited',
  'withdrawal.created',
  'withdrawal.confirmed',
  'withdrawal.failed',
  // operator actions (issue 25): role changes, moderation decisions, the arbiter's ruling with its rationale
  // (the split itself is order.resolved / milestone.resolved above); a report dismissal has no event and
  // appends through appendAudit (moderation.repo.ts)
  'user.role_granted',
  'user.role_revoked',
  'listing.taken_down',
  'listing.restored',
  'user.suspended',
  'user.banned',
  'user.reinstated',
  'dispute.resolved',
] as const satisfies readonly EventType[];

export type AuditedEventType = (typeof AUDITED_EVENT_TYPES)[number];

const audited: ReadonlySet<string> = new Set(AUDITED_EVENT_TYPES);

/** Does an event of `type` append an audit entry? */
export function isAuditedEvent(type: string): boolean {
  return audited.has(type);
}
