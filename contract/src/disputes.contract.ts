/**
 * Dispute desk (issue 25 part 3): a structured reason, evidence from both parties until a due date, an
 * arbiter's queue of open disputes, and a ruling with a written rationale that both parties receive.
 *
 *  - **Identity.** A dispute is one disputed escrow: one milestone of an order (a one-milestone order: the
 *    order). `dispute_id` is that milestone's `milestone_id` (escrow id); for a one-milestone order it equals
 *    the `order_id`. A milestone is disputed at most once (disputed leads only to resolved or refunded), so
 *    an order has at most one dispute per milestone. The dispute exists from the moment the order (milestone)
 *    is `disputed` (POST /orders/{id}/dispute, /orders/{id}/milestones/{index}/dispute, or a party's own
 *    wallet on chain, caught up by the reconciler): the routes below find it from the order, never from a
 *    separate "open" call.
 *  - **Reason.** The open-dispute bodies take an optional `reason_code` (DISPUTE_REASON_CODES) beside the
 *    required `reason` text. Mapping for clients that send `reason` only (before issue 25): `reason_code`
 *    `other`, the text unchanged. A dispute opened on chain by a party's wallet has `reason` null and code
 *    `other`.
 *  - **Evidence.** The buyer and the seller each submit up to DISPUTE_LIMITS.submissionsPerParty
 *    submissions: a statement (`text`, 1..5000 characters) and 0..10 files given as links (https URL, name,
 *    the file's SHA-256 as 64 lowercase hex digits; optional size and media type). The service does not
 *    fetch the files: the hash lets the arbiter and the other party check that the file they download is the
 *    one submitted. Submissions are accepted until `evidence_due_at` = `opened_at` + DISPUTE_EVIDENCE_HOURS
 *    (service clock, default 72 h) and while the dispute is open; then 409 `evidence-closed`. A stranger gets
 *    404 (existence is not disclosed); the arbiter (an admin who is not a party) 403: she rules, she does
 *    not testify. Visibility (decision): both parties see both sides' evidence as soon as it is submitted
 *    (as Kleros and Upwork show both sides): a dispute is decided on what both saw and could answer; a
 *    hidden submission could not be rebutted.
 *  - **Hash and anchoring.** Each submission's `content_hash` = SHA-256 (hex) of the RFC 8785 canonical JSON
 *    of `{dispute_id, evidence_id, party, submitted_by, text, files, submitted_at, prev_hash}`, where
 *    `prev_hash` is the hash of the dispute's previous submission (null for the first): the submissions of a
 *    dispute form a hash chain whose head (`evidence_head`) is carried by every `dispute.evidence_submitted`
 *    event and by `dispute.resolved`, which the events outbox (and the audit log's chain, issue 25 part 4)
 *    keep. Decision: the hash is NOT anchored on the Solana chain in this version. An SPL Memo transaction per
 *    submission (the memo program is on the localnet and every cluster) would cost the service a network fee
 *    per submission that any party of any funded order could trigger; the escrow program's dispute event
 *    cannot carry it without a program upgrade. The hashes are recorded (`anchor_signature` null) so a later
 *    job can anchor each dispute's `evidence_head` once, in one memo, when its evidence closes.
 *  - **Queue.** `GET /admin/disputes` (the arbiter: an admin until roles land): open disputes, oldest first,
 *    cursor pages; each with both sides' evidence, the order's last messages (chat) and the amount at stake.
 *    A dispute open longer than DISPUTE_ATTENTION_HOURS (default 96 h) has `needs_attention: true`.
 *  - **Ruling.** `POST /admin/disputes/{dispute_id}/resolve` with `buyer_bps` and a required `rationale`
 *    (20..3800 characters): the escrow is split on chain exactly as resolveDispute does, then the rationale is
 *    recorded, sent to both parties in the `dispute.resolved` event (the Dispute with its `resolution`) and
 *    posted into the order's conversation as the arbiter's message. The arbiter must be a user (a service API
 *    key without a user: 403): the message is hers. The older routes `resolveDispute` / `resolveMilestone`
 *    keep working with `buyer_bps` alone (decision: no breaking change for existing clients and scripts);
 *    they take the same optional `rationale`, with the same effect when given.
 */
import { z } from 'zod';
import { access } from './access.js';
import { Bps, BaseUnits, c, CurrencyCode, named, PaginationQuery, page, Pubkey, safeText, Timestamp, TxSignature, ExplorerUrl, Uuid } from './common.js';
import { Message } from './chat.contract.js';
import { bodyProblems, routeErrors } from './problems.js';
import { DISPUTE_LIMITS, DisputeReasonCode } from './disputes.terms.js';

export * from './disputes.terms.js';

export const DISPUTE_EVENTS = ['dispute.evidence_submitted', 'dispute.resolved'] as const;

export const Sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 digest: 64 lowercase hexadecimal digits')
  .describe('SHA-256 digest, 64 lowercase hex digits');

export const EvidenceFile = named(
  'EvidenceFile',
  z
    .object({
      url: z
        .string()
        .max(DISPUTE_LIMITS.fileUrlMaxLength)
        .url()
        .regex(/^https:\/\//, 'must be an https URL')
        .describe('Where the file can be downloaded (https; the service does not fetch it)'),
      name: safeText(z.string().trim().min(1).max(DISPUTE_LIMITS.fileNameMaxLength)).describe('File name shown to the arbiter, 1..200 characters'),
      sha256: Sha256Hex.describe('SHA-256 of the file\'s bytes, 64 lowercase hex digits: whoever downloads it checks it'),
      size_bytes: z.number().int().min(0).max(DISPUTE_LIMITS.fileMaxBytes).optional().describe('Declared size in bytes (at most 100 MiB)'),
      content_type: z
        .string()
        .max(100)
        .regex(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i, 'must be a media type such as image/png')
        .optional()
        .describe('Declared media type, e.g. image/png'),
    })
    .strict(),
  'A file given as evidence: a link and the SHA-256 of its bytes',
);
export type EvidenceFile = z.infer<typeof EvidenceFile>;

export const SubmitEvidenceBody = named(
  'SubmitEvidenceBody',
  z
    .object({
      text: safeText(z.string().trim().min(1).max(DISPUTE_LIMITS.textMaxLength)).describe('The party\'s statement, 1..5000 characters'),
      files: z.array(EvidenceFile).max(DISPUTE_LIMITS.filesPerSubmission).default([]).describe('0..10 files as links with their SHA-256'),
    })
    .strict(),
);
export type SubmitEvidenceBody = z.input<typeof SubmitEvidenceBody>;

export const DisputeParty = z.enum(['buyer', 'seller']);

export const DisputeEvidence = named(
  'DisputeEvidence',
  z.object({
    evidence_id: Uuid,
    dispute_id: Uuid,
    party: DisputeParty.describe('Who submitted it'),
    submitted_by: Pubkey.describe('The submitting user\'s wallet'),
    text: z.string(),
    files: z.array(EvidenceFile),
    submitted_at: Timestamp,
    content_hash: Sha256Hex.describe(
      'SHA-256 of the RFC 8785 canonical JSON of {dispute_id, evidence_id, party, submitted_by, text, files, submitted_at, prev_hash}',
    ),
    prev_hash: Sha256Hex.nullable().describe('content_hash of the dispute\'s previous submission; null for the first (a hash chain per dispute)'),
    anchor_signature: TxSignature.nullable().describe('The transaction that anchored the hash on chain; null: recorded by the service only (not anchored on chain in this version)'),
    anchor_explorer_url: ExplorerUrl('the anchoring transaction').nullable(),
  }),
  'One submission of evidence by a party',
);
export type DisputeEvidence = z.infer<typeof DisputeEvidence>;

export const DISPUTE_STATUSES = ['open', 'resolved', 'refunded'] as const;

export const DisputeResolution = named(
  'DisputeResolution',
  z.object({
    outcome: z
      .enum(['arbiter', 'agreement', 'refund'])
      .describe('arbiter: an arbiter split the escrow; agreement: the parties settled (a settlement accepted); refund: the escrow went back to the buyer'),
    buyer_bps: Bps.nullable().describe('The buyer\'s share, basis points (10000 for a refund); null when unknown'),
    rationale: z.string().nullable().describe('The arbiter\'s written reasons; null for an agreement, a refund, or a ruling through the older resolve routes without one'),
    decided_at: Timestamp.nullable(),
  }),
);

export const Dispute = named(
  'Dispute',
  z.object({
    dispute_id: Uuid.describe('The disputed milestone\'s milestone_id (escrow id); a one-milestone order: its order_id'),
    order_id: Uuid,
    milestone_index: z.number().int().min(1),
    status: z.enum(DISPUTE_STATUSES).describe('open while the escrow is disputed; resolved (split by the arbiter or by agreement) or refunded afterwards'),
    reason_code: DisputeReasonCode,
    reason: z.string().nullable().describe('The opening party\'s text; null when the dispute was opened on chain directly'),
    opened_by: DisputeParty.nullable(),
    opened_at: Timestamp,
    evidence_due_at: Timestamp.describe('opened_at + DISPUTE_EVIDENCE_HOURS: submissions after it answer 409 evidence-closed'),
    evidence_open: z.boolean().describe('Evidence is accepted now (open and before evidence_due_at)'),
    evidence: z.array(DisputeEvidence).describe('Both parties\' submissions, oldest first'),
    evidence_head: Sha256Hex.nullable().describe('content_hash of the newest submission (the head of the hash chain); null without evidence'),
    at_stake: z.object({
      currency: CurrencyCode,
      amount: z.number().describe('UI amount held in the disputed escrow'),
      amount_base_units: BaseUnits,
    }),
    needs_attention: z.boolean().describe('Open longer than DISPUTE_ATTENTION_HOURS (default 96 h) without a ruling'),
    resolution: DisputeResolution.nullable().describe('How it ended; null while open'),
  }),
  'A dispute over one escrow (an order or one of its milestones), with both parties\' evidence',
);
export type Dispute = z.infer<typeof Dispute>;

export const DisputeCase = named(
  'DisputeCase',
  z.object({
    dispute: Dispute,
    listing_title: z.string(),
    buyer_wallet: Pubkey.describe('The buyer\'s account wallet'),
    seller_wallet: Pubkey.describe('The seller\'s account wallet'),
    messages: z.array(Message).describe('The order conversation\'s newest messages (at most 50), oldest first'),
    more_messages: z.boolean().describe('The conversation holds older messages (GET /orders/{order_id}/messages pages them)'),
  }),
  'An open dispute as the arbiter\'s queue shows it',
);
export type DisputeCase = z.infer<typeof DisputeCase>;

export const DisputeQueuePage = named('DisputeQueuePage', page(DisputeCase), 'A page of the arbiter\'s queue, oldest dispute first');

export const DisputeQueueQuery = PaginationQuery.extend({
  attention: z.enum(['true', 'false']).optional().describe('true: only disputes that need attention; false: only the others'),
});

export const RuleDisputeBody = named(
  'RuleDisputeBody',
  z
    .object({
      buyer_bps: Bps.describe('Share returned to the buyer in basis points: 0 = all to the seller, 10000 = full refund'),
      rationale: safeText(z.string().trim().min(DISPUTE_LIMITS.rationaleMinLength).max(DISPUTE_LIMITS.rationaleMaxLength)).describe(
        'The written reasons of the ruling, 20..3800 characters; both parties receive them (event and chat)',
      ),
    })
    .strict(),
);
export type RuleDisputeBody = z.infer<typeof RuleDisputeBody>;

const DisputeParams = z.object({ dispute_id: Uuid });
const chain = ['chain-unavailable', 'chain-transaction-failed'] as const;

const getDispute = routeErrors(access.user('orders:read'), ['not-found'], { actors: ['buyer', 'seller', 'admin'] });
const submitDisputeEvidence = routeErrors(
  access.user('orders:write'),
  [...bodyProblems, 'forbidden', 'not-found', 'evidence-closed', 'evidence-limit-reached'],
  { actors: ['buyer', 'seller'] },
);
const listDisputeQueue = routeErrors(access.role('arbiter', 'disputes:resolve'), []);
const ruleDispute = routeErrors(access.role('arbiter', 'disputes:resolve'), [...bodyProblems, 'forbidden', 'not-found', 'invalid-state-transition', ...chain], { actors: ['arbiter'] });

export const disputes = c.router({
  getDispute: {
    method: 'GET',
    path: '/disputes/:dispute_id',
    pathParams: DisputeParams,
    summary: 'Read a dispute with both parties\' evidence',
    description:
      'The buyer, the seller, or the arbiter (admin). `dispute_id` is the disputed milestone\'s milestone_id (a one-milestone ' +
      'order: its order_id). 404 for anyone else, and for an escrow that was never disputed.',
    responses: { 200: Dispute, ...getDispute.responses },
    metadata: getDispute.metadata,
  },
  submitDisputeEvidence: {
    method: 'POST',
    path: '/disputes/:dispute_id/evidence',
    pathParams: DisputeParams,
    summary: 'Submit evidence to a dispute',
    description:
      'The buyer or the seller, while the dispute is open and before `evidence_due_at` (409 evidence-closed); at most ' +
      `${DISPUTE_LIMITS.submissionsPerParty} submissions per party (409 evidence-limit-reached). A statement and 0..10 files as https links ` +
      'with their SHA-256. The submission is hash-chained (content_hash, prev_hash) and both parties receive ' +
      '`dispute.evidence_submitted`. The arbiter: 403; anyone else: 404.',
    body: SubmitEvidenceBody,
    responses: { 201: DisputeEvidence, ...submitDisputeEvidence.responses },
    metadata: submitDisputeEvidence.metadata,
  },
  listDisputeQueue: {
    method: 'GET',
    path: '/admin/disputes',
    query: DisputeQueueQuery,
    summary: 'The arbiter\'s queue of open disputes',
    description:
      'Arbiter (admin) only. Open disputes, oldest first (by opened_at), cursor pagination; each with both sides\' evidence, ' +
      'the order\'s newest messages and the amount at stake. `needs_attention`: open longer than DISPUTE_ATTENTION_HOURS.',
    responses: { 200: DisputeQueuePage, ...listDisputeQueue.responses },
    metadata: listDisputeQueue.metadata,
  },
  ruleDispute: {
    method: 'POST',
    path: '/admin/disputes/:dispute_id/resolve',
    pathParams: DisputeParams,
    summary: 'Resolve a dispute with a written rationale',
    description:
      'Arbiter (admin) only, signed in as a user (a service API key without a user: 403 forbidden; the rationale is posted as her ' +
      'message). The escrow is split on chain as resolveDispute does (resolve_dispute, buyer_bps), then the rationale is recorded, ' +
      'sent to both parties in `dispute.resolved` and posted into the order\'s conversation. Repeating the same ruling returns the ' +
      'dispute (nothing is sent twice). A dispute no longer open: 409 invalid-state-transition.',
    body: RuleDisputeBody,
    responses: { 200: Dispute, ...ruleDispute.responses },
    metadata: ruleDispute.metadata,
  },
});
