/**
 * Chat (issue 11): plain-text conversations between a buyer and a seller.
 *
 *  - Order conversation: `/orders/{order_id}/messages`. The buyer and the seller read and post; the
 *    arbiter (admin credential) reads and posts once the order is disputed (resolved orders stay
 *    readable to the arbiter). Anyone else: 404.
 *  - Pre-order inquiry: `POST /listings/{listing_id}/conversations` opens (or continues) the caller's
 *    conversation with the listing's seller; the seller answers in it (`/conversations/{id}/messages`).
 *    One inquiry per listing and prospective buyer. A seller cannot inquire on their own listing (409
 *    own-listing).
 *  - `GET /conversations` lists the caller's conversations (inquiries and orders) with unread counts.
 *
 * Messages: 1..4000 characters of text (no control characters but tab and line breaks), oldest-first
 * reading with cursor pages (newest first, like every list), a read marker per participant
 * (`POST .../read`), `message.created` on the event stream and webhooks (to both parties). Abuse: at
 * most CHAT_RATE_LIMIT_PER_MINUTE messages per sender per minute (429 rate-limited with Retry-After);
 * a participant may report a message (`POST /messages/{message_id}/report`): the report shows on the
 * message (`report`) to the participants and to the arbiter of a disputed order.
 *
 * Custom offers (issue 24, offers.contract.ts): the seller sends one with POST
 * /conversations/{conversation_id}/offers; it is a message of `kind` offer whose `offer` shows the offer
 * as it is now (pending, accepted with its order_id, declined, withdrawn, expired).
 */
import { z } from 'zod';
import { c, named, PaginationQuery, page, Pubkey, safeText, Timestamp, Uuid } from './common.js';
import { access } from './access.js';
import { bodyProblems, routeErrors } from './problems.js';
import { Offer } from './offers.contract.js';

export const MESSAGE_MAX_LENGTH = 4000;
export const MessageBody = safeText(z.string().trim().min(1).max(MESSAGE_MAX_LENGTH));

export const Message = named(
  'Message',
  z.object({
    message_id: Uuid,
    conversation_id: Uuid,
    order_id: Uuid.nullable().describe('The order of an order conversation; null for an inquiry'),
    listing_id: Uuid,
    sender_wallet: Pubkey,
    sender_role: z.enum(['buyer', 'seller', 'arbiter']),
    body: z.string().describe('The text; for kind offer a one-line summary of the offer'),
    kind: z.enum(['text', 'offer']).describe('text: a message; offer: a custom offer of the seller (offers.contract.ts), in `offer`'),
    offer: Offer.nullable(),
    created_at: Timestamp,
    report: z
      .object({ reason: z.string(), reported_at: Timestamp, reported_by_wallet: Pubkey })
      .nullable()
      .describe('Set when a participant reported the message (the arbiter sees it in a dispute)'),
  }),
  'A chat message',
);
export type Message = z.infer<typeof Message>;

export const Conversation = named(
  'Conversation',
  z.object({
    conversation_id: Uuid,
    listing_id: Uuid,
    order_id: Uuid.nullable(),
    buyer_wallet: Pubkey.describe('The buyer, or the prospective buyer of an inquiry'),
    seller_wallet: Pubkey,
    last_message_at: Timestamp.nullable(),
    unread_count: z.number().int().min(0).describe('Messages of the other party after the caller\'s read marker'),
    last_read_message_id: Uuid.nullable().describe('The caller\'s read marker'),
    created_at: Timestamp,
  }),
);

export const MessagePage = named('MessagePage', page(Message).extend({ conversation: Conversation }), 'Messages newest first, with the conversation');
export const ConversationPage = named('ConversationPage', page(Conversation));

export const SendMessageBody = named('SendMessageBody', z.object({ body: MessageBody.describe('1..4000 characters') }).strict());
export const MarkReadBody = named('MarkReadBody', z.object({ message_id: Uuid.describe('The newest message the caller has read') }).strict());
export const ReportMessageBody = named(
  'ReportMessageBody',
  z.object({ reason: safeText(z.string().trim().min(1).max(500)).describe('Why (1..500 characters)') }).strict(),
);
export const InquiryCreated = named('InquiryCreated', z.object({ conversation: Conversation, message: Message }));

const OrderParams = z.object({ order_id: Uuid });
const ConversationParams = z.object({ conversation_id: Uuid });

const read = routeErrors(access.user('chat:read'), ['not-found']);
const send = routeErrors(access.user('chat:write'), [...bodyProblems, 'not-found', 'forbidden'], { actors: ['buyer', 'seller', 'arbiter'] });
const markRead = routeErrors(access.user('chat:write'), [...bodyProblems, 'not-found']);
const inquire = routeErrors(access.user('chat:write'), [...bodyProblems, 'not-found', 'own-listing']);
const list = routeErrors(access.user('chat:read'), []);
const report = routeErrors(access.user('chat:write'), [...bodyProblems, 'not-found', 'conflict']);

export const chat = c.router({
  listOrderMessages: {
    method: 'GET',
    path: '/orders/:order_id/messages',
    pathParams: OrderParams,
    query: PaginationQuery,
    summary: 'Messages of an order',
    description: 'Buyer, seller, and the arbiter (admin) once disputed; anyone else 404. Newest first, cursor pagination.',
    responses: { 200: MessagePage, ...read.responses },
    metadata: read.metadata,
  },
  sendOrderMessage: {
    method: 'POST',
    path: '/orders/:order_id/messages',
    pathParams: OrderParams,
    body: SendMessageBody,
    summary: 'Post a message on an order',
    description:
      'Buyer or seller; the arbiter (admin) once the order is disputed (403 before). 201 with the message, published ' +
      'as message.created. 429 rate-limited past CHAT_RATE_LIMIT_PER_MINUTE messages per sender per minute.',
    responses: { 201: Message, ...send.responses },
    metadata: send.metadata,
  },
  createInquiry: {
    method: 'POST',
    path: '/listings/:listing_id/conversations',
    pathParams: z.object({ listing_id: Uuid }),
    body: SendMessageBody,
    summary: 'Ask the seller about a listing',
    description:
      'Opens the caller\'s inquiry with the listing\'s seller (or continues it: one per listing and caller) and posts ' +
      'the message. 201 with the conversation and the message. 404 for a listing the caller cannot see; 409 own-listing.',
    responses: { 201: InquiryCreated, ...inquire.responses },
    metadata: inquire.metadata,
  },
  listConversations: {
    method: 'GET',
    path: '/conversations',
    query: PaginationQuery,
    summary: 'The caller\'s conversations',
    description: 'Inquiries and order conversations the caller takes part in, most recent message first, with unread counts.',
    responses: { 200: ConversationPage, ...list.responses },
    metadata: list.metadata,
  },
  listConversationMessages: {
    method: 'GET',
    path: '/conversations/:conversation_id/messages',
    pathParams: ConversationParams,
    query: PaginationQuery,
    summary: 'Messages of a conversation',
    description: 'Participants (and the arbiter of a disputed order) only; 404 otherwise. Newest first.',
    responses: { 200: MessagePage, ...read.responses },
    metadata: read.metadata,
  },
  sendConversationMessage: {
    method: 'POST',
    path: '/conversations/:conversation_id/messages',
    pathParams: ConversationParams,
    body: SendMessageBody,
    summary: 'Post a message in a conversation',
    description: 'As POST /orders/{order_id}/messages, for any conversation (the seller answers an inquiry here).',
    responses: { 201: Message, ...send.responses },
    metadata: send.metadata,
  },
  markConversationRead: {
    method: 'POST',
    path: '/conversations/:conversation_id/read',
    pathParams: ConversationParams,
    body: MarkReadBody,
    summary: 'Move the caller\'s read marker',
    description: 'The marker only moves forward (an older message_id leaves it). 200 with the conversation.',
    responses: { 200: Conversation, ...markRead.responses },
    metadata: markRead.metadata,
  },
  reportMessage: {
    method: 'POST',
    path: '/messages/:message_id/report',
    pathParams: z.object({ message_id: Uuid }),
    body: ReportMessageBody,
    summary: 'Report a message',
    description:
      'A participant other than its sender reports a message (once: 409 conflict after). The arbiter sees the report ' +
      'on the message when the order is disputed. 200 with the message.',
    responses: { 200: Message, ...report.responses },
    metadata: report.metadata,
  },
});
