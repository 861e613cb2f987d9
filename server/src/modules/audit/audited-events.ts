/**
 * The event types that append an audit entry (issue 25 item 4): every money-moving event. `appendEvents`
 * (modules/events/outbox.ts) appends one entry per event of these types, in the same transaction and
 * under the same lock as the event. Operator actions of other parts (roles, moderation, the dispute desk)
 * join this list with their events.
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
] as const satisfies readonly EventType[];

export type AuditedEventType = (typeof AUDITED_EVENT_TYPES)[number];

const audited: ReadonlySet<string> = new Set(AUDITED_EVENT_TYPES);

/** Does an event of `type` append an audit entry? */
export function isAuditedEvent(type: string): boolean {
  return audited.has(type);
}
