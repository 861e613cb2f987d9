/**
 * Event types (issue 11), grouped by resource: the order events are the `emits` column of the order
 * lifecycle table, the listing events that of the listing table. events.contract.ts describes events.
 */
import { z } from 'zod';
import { named } from './common.js';
import { LISTING_EVENTS } from './listings.contract.js';
import { MILESTONE_EVENTS, ORDER_EVENTS, ORDER_LEVEL_EVENTS } from './orders.contract.js';
import { TIP_EVENTS } from './tips.contract.js';
import { OFFER_EVENTS } from './offers.contract.js';
import { DISPUTE_EVENTS } from './disputes.contract.js';
import { USER_ROLE_EVENTS } from './users.contract.js';
import { LISTING_MODERATION_EVENTS, USER_STANDING_EVENTS } from './moderation.contract.js';

export const REVIEW_EVENTS = ['review.created'] as const;
export const DEPOSIT_EVENTS = ['deposit.credited'] as const;
export const WITHDRAWAL_EVENTS = ['withdrawal.created', 'withdrawal.confirmed', 'withdrawal.failed'] as const;
export const MESSAGE_EVENTS = ['message.created'] as const;
export const WEBHOOK_EVENTS = ['webhook.disabled'] as const;

/** Every event type, grouped by resource. */
export const EVENT_TYPES = [
  ...ORDER_EVENTS,
  ...ORDER_LEVEL_EVENTS,
  ...MILESTONE_EVENTS,
  ...LISTING_EVENTS,
  ...REVIEW_EVENTS,
  ...DEPOSIT_EVENTS,
  ...WITHDRAWAL_EVENTS,
  ...MESSAGE_EVENTS,
  ...WEBHOOK_EVENTS,
  ...TIP_EVENTS,
  ...OFFER_EVENTS,
  ...DISPUTE_EVENTS,
  ...LISTING_MODERATION_EVENTS,
  ...USER_ROLE_EVENTS,
  ...USER_STANDING_EVENTS,
] as const;
export const EventType = named('EventType', z.enum(EVENT_TYPES), 'Type of an event: `<resource>.<what happened>`');
export type EventType = z.infer<typeof EventType>;

export const RESOURCE_TYPES = ['order', 'listing', 'review', 'deposit', 'withdrawal', 'message', 'webhook', 'tip', 'offer', 'dispute', 'user'] as const;
export const ResourceType = z.enum(RESOURCE_TYPES);
export type ResourceType = z.infer<typeof ResourceType>;

/** Resource type of each event type (the prefix before the dot; milestone.* events concern their order). */
export function resourceTypeOf(type: EventType): ResourceType {
  const prefix = type.slice(0, type.indexOf('.'));
  return (prefix === 'milestone' ? 'order' : prefix) as ResourceType;
}

