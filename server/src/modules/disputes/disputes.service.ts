/**
 * Dispute desk rules (issue 25 part 3; contract/src/disputes.contract.ts): who sees a dispute, who submits
 * evidence until when, the evidence hash chain, the arbiter's queue and her ruling with a rationale.
 * The escrow split itself is the orders module's `resolveMilestone` (record-before-send pipeline); this
 * module records what surrounds it and never writes to `orders`.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import {
  DISPUTE_LIMITS,
  type Dispute,
  type DisputeCase,
  type DisputeEvidence,
  type DisputeReasonCode,
  DISPUTE_REASON_CODES,
  type EvidenceFile,
} from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { cursorKey, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { toUiNumber } from '../../lib/money.js';
import { hasRole, type AccessPrincipal } from '../auth/index.js';
import { presentMessage } from '../chat/index.js';
import type { ChatRepo } from '../chat/chat.repo.js';
import type { NewEvent } from '../events/outbox.js';
import type { OrdersService, PrincipalLike } from '../orders/index.js';
import type { DisputeRecord, DisputesRepo, EvidenceRecord } from './disputes.repo.js';

/** DISPUTE_* settings (server/src/config.ts ENV_VARS), hours. */
export interface DisputesSettings {
  evidenceHours: number;
  attentionHours: number;
}

export interface DisputesDeps {
  repo: DisputesRepo;
  /** the escrow split (null: the service runs without a chain; rulings answer 503 chain-unavailable) */
  orders: Pick<OrdersService, 'resolveMilestone'> | null;
  /** the order conversation the rationale is posted into, and its newest messages for the queue */
  chat: Pick<ChatRepo, 'forOrder' | 'post' | 'messages'>;
  settings: DisputesSettings;
  now: () => Date;
  log: { warn: (obj: object, msg: string) => void; info: (obj: object, msg: string) => void };
}

const HOUR_MS = 3_600_000;
const notFound = (id: string) => new DomainError('not-found', `Dispute ${id} not found.`);

/**
 * The content hash of one submission: SHA-256 (hex) of the RFC 8785 (JSON Canonicalization Scheme) text of
 * its chained fields. `canonicalize` (RFC 8785's reference implementation for JavaScript) sorts the members
 * and fixes number and string forms, so anyone holding the fields recomputes the same hash.
 */
export function evidenceHash(fields: {
  dispute_id: string;
  evidence_id: string;
  party: 'buyer' | 'seller';
  submitted_by: string;
  text: string;
  files: readonly EvidenceFile[];
  submitted_at: string;
  prev_hash: string | null;
}): string {
  return createHash('sha256').update(canonicalize(fields)!, 'utf8').digest('hex');
}

export function createDisputesService(deps: DisputesDeps) {
  const { repo, settings } = deps;
  const dueAt = (d: DisputeRecord) => new Date(d.disputedAt.getTime() + settings.evidenceHours * HOUR_MS);
  const attentionBefore = (now: Date) => new Date(now.getTime() - settings.attentionHours * HOUR_MS);

  const presentEvidence = (e: EvidenceRecord): DisputeEvidence => ({
    evidence_id: e.id,
    dispute_id: e.disputeId,
    party: e.party,
    submitted_by: e.submittedByWallet,
    text: e.text,
    files: e.files,
    submitted_at: e.submittedAt.toISOString(),
    content_hash: e.contentHash,
    prev_hash: e.prevHash,
    anchor_signature: e.anchorSignature,
  });

  /** The Dispute of the contract, at `now` (evidence_open, needs_attention are read on the service clock). */
  function present(d: DisputeRecord, evidence: readonly EvidenceRecord[], now: Date): Dispute {
    const open = d.status === 'disputed';
    const due = dueAt(d);
    const resolution: Dispute['resolution'] = open
      ? null
      : d.status === 'refunded'
        ? { outcome: 'refund', buyer_bps: 10_000, rationale: null, decided_at: d.completedAt?.toISOString() ?? null }
        : d.settledBy === 'agreement'
          ? { outcome: 'agreement', buyer_bps: d.resolutionBuyerBps, rationale: null, decided_at: d.completedAt?.toISOString() ?? null }
          : {
              outcome: 'arbiter',
              buyer_bps: d.resolutionBuyerBps ?? d.ruledBuyerBps,
              rationale: d.ruledAt ? d.rationale : null,
              decided_at: (d.ruledAt ?? d.completedAt)?.toISOString() ?? null,
            };
    const code = (DISPUTE_REASON_CODES as readonly string[]).includes(d.reasonCode ?? '') ? (d.reasonCode as DisputeReasonCode) : 'other';
    return {
      dispute_id: d.id,
      order_id: d.orderId,
      milestone_index: d.milestoneIndex,
      status: open ? 'open' : d.status === 'refunded' ? 'refunded' : 'resolved',
      reason_code: code,
      reason: d.disputeReason,
      opened_by: d.disputedBy,
      opened_at: d.disputedAt.toISOString(),
      evidence_due_at: due.toISOString(),
      evidence_open: open && now.getTime() <= due.getTime(),
      evidence: evidence.map(presentEvidence),
      evidence_head: evidence.length ? evidence[evidence.length - 1]!.contentHash : null,
      at_stake: { currency: d.currency, amount: toUiNumber(d.amount, d.decimals), amount_base_units: d.amount.toString() },
      needs_attention: open && d.disputedAt.getTime() <= attentionBefore(now).getTime(),
      resolution,
    };
  }

  const event = (type: NewEvent['type'], d: DisputeRecord, evidence: readonly EvidenceRecord[]): NewEvent => ({
    type,
    resourceType: 'dispute',
    resourceId: d.id,
    audience: [d.buyerId, d.sellerId],
    data: present(d, evidence, deps.now()),
  });

  /** The caller's side of dispute `d`: buyer, seller, arbiter (an admin or a holder of the arbiter role who is neither), else 404. */
  function sideOf(d: DisputeRecord, p: AccessPrincipal): 'buyer' | 'seller' | 'arbiter' {
    if (p.userId && p.userId === d.buyerId) return 'buyer';
    if (p.userId && p.userId === d.sellerId) return 'seller';
    if (p.isAdmin || hasRole(p, 'arbiter')) return 'arbiter';
    throw notFound(d.id);
  }

  async function view(d: DisputeRecord): Promise<Dispute> {
    return present(d, (await repo.evidenceOf([d.id])).get(d.id) ?? [], deps.now());
  }

  /** The rationale reaches both parties in the order's conversation (once; a repeat posts a missing one). */
  async function postRationale(d: DisputeRecord, arbiterId: string): Promise<void> {
    if (d.rationaleMessageId || !d.rationale || !d.ruledAt) return;
    const bps = d.ruledBuyerBps ?? d.resolutionBuyerBps ?? 0;
    const heading = `Ruling on ${d.milestoneIndex > 1 ? `milestone ${d.milestoneIndex}` : 'this order'}: ${bps / 100}% to the buyer, ${(10_000 - bps) / 100}% to the seller.`;
    try {
      const c = await deps.chat.forOrder({ id: d.orderId, listingId: d.listingId, buyerId: d.buyerId, sellerId: d.sellerId });
      const m = await deps.chat.post(c, arbiterId, 'arbiter', `${heading}\n\n${d.rationale}`, deps.now());
      await repo.setRationaleMessage(d.id, m.id);
    } catch (err) {
      // the ruling and its event are recorded; repeating the ruling posts the message
      deps.log.warn({ err, dispute_id: d.id }, 'the ruling\'s rationale could not be posted into the order\'s conversation');
    }
  }

  return {
    present,

    /** GET /disputes/{id}: the parties and the arbiter; 404 for anyone else and for an escrow never disputed. */
    async get(p: AccessPrincipal, id: string): Promise<Dispute> {
      const d = await repo.get(id);
      if (!d) throw notFound(id);
      sideOf(d, p);
      return view(d);
    },

    /**
     * After POST /orders/{id}/dispute (or the milestone route) returned the disputed row: keep the reason
     * code (`other` when the client sent text only). The first recorded code stays.
     */
    async recordOpening(row: { id: string; orderId: string; status: string }, reasonCode: DisputeReasonCode | undefined): Promise<void> {
      if (row.status !== 'disputed') return;
      await repo.recordOpening(row.id, row.orderId, reasonCode ?? 'other');
    },

    /**
     * POST /disputes/{id}/evidence. 404 strangers, 403 the arbiter, 409 evidence-closed (ruled, refunded or
     * past evidence_due_at, service clock), 409 evidence-limit-reached (DISPUTE_LIMITS.submissionsPerParty
     * per party). Appends to the dispute's hash chain and publishes dispute.evidence_submitted to both parties.
     */
    async submitEvidence(p: AccessPrincipal, id: string, body: { text: string; files?: EvidenceFile[] }): Promise<DisputeEvidence> {
      const d = await repo.get(id);
      if (!d) throw notFound(id);
      const side = sideOf(d, p);
      if (side === 'arbiter') throw new DomainError('forbidden', 'The arbiter rules on the evidence; only the buyer and the seller submit it.');
      const wallet = (await repo.walletOf(p.userId!))!;
      const submittedAt = deps.now();
      const files = (body.files ?? []).map((f) => ({ ...f }));
      const closed = (fresh: DisputeRecord) => {
        const due = dueAt(fresh);
        if (fresh.status !== 'disputed' || submittedAt.getTime() > due.getTime()) {
          throw new DomainError(
            'evidence-closed',
            fresh.status !== 'disputed'
              ? `Dispute ${id} is ${fresh.status}: it takes no more evidence.`
              : `The evidence of dispute ${id} was due by ${due.toISOString()}.`,
            { evidence_due_at: due.toISOString(), dispute_status: fresh.status === 'disputed' ? 'open' : fresh.status },
          );
        }
      };
      closed(d); // refuse early, without a transaction; checked again under the lock
      const e = await repo.appendEvidence(
        d,
        { party: side, submittedBy: p.userId!, submittedByWallet: wallet, text: body.text, files, submittedAt },
        {
          check(fresh, count) {
            closed(fresh);
            if (count >= DISPUTE_LIMITS.submissionsPerParty) {
              throw new DomainError('evidence-limit-reached', `The ${side} has submitted ${count} pieces of evidence to dispute ${id}, the most one party may.`, {
                limit: DISPUTE_LIMITS.submissionsPerParty,
              });
            }
          },
          hash: ({ evidenceId, prevHash }) =>
            evidenceHash({
              dispute_id: d.id,
              evidence_id: evidenceId,
              party: side,
              submitted_by: wallet,
              text: body.text,
              files,
              submitted_at: submittedAt.toISOString(),
              prev_hash: prevHash,
            }),
          event: (fresh, evidence) => event('dispute.evidence_submitted', fresh, evidence),
        },
      );
      deps.log.info({ dispute_id: id, party: side, content_hash: e.contentHash }, 'dispute evidence submitted');
      return presentEvidence(e);
    },

    /** GET /admin/disputes: open disputes oldest first, each with evidence, the order's newest messages and the stake. */
    async queue(q: { limit: number; cursor?: string; attention?: boolean }): Promise<{ items: DisputeCase[]; nextCursor: string | null }> {
      const spec = { sort: 'opened_asc', filters: { what: 'dispute-queue', attention: q.attention }, keys: [cursorKey.timestamp] };
      const after = q.cursor ? ((c) => ({ at: new Date(String(c.keys[0])), id: c.id }))(decodeCursor(q.cursor, spec)) : undefined;
      const now = deps.now();
      const rows = await repo.open({ limit: q.limit + 1, after, attention: q.attention, attentionBefore: attentionBefore(now) });
      const page = rows.slice(0, q.limit);
      const last = page[page.length - 1];
      const nextCursor = rows.length > q.limit && last ? encodeCursor(spec, [last.disputedAt.toISOString()], last.id) : null;
      // evidence and conversation ids in one statement each; then each conversation's newest messages
      const evidence = await repo.evidenceOf(page.map((d) => d.id));
      const conversations = await repo.conversationsOf(page.map((d) => d.orderId));
      const items = await Promise.all(
        page.map(async (d): Promise<DisputeCase> => {
          const conversation = conversations.get(d.orderId);
          const newest = conversation ? await deps.chat.messages(conversation, DISPUTE_LIMITS.caseMessages + 1) : [];
          return {
            dispute: present(d, evidence.get(d.id) ?? [], now),
            listing_title: d.listingTitle,
            buyer_wallet: d.buyerWallet,
            seller_wallet: d.sellerWallet,
            messages: newest.slice(0, DISPUTE_LIMITS.caseMessages).reverse().map(presentMessage),
            more_messages: newest.length > DISPUTE_LIMITS.caseMessages,
          };
        }),
      );
      return { items, nextCursor };
    },

    /**
     * The arbiter's ruling with a rationale (POST /admin/disputes/{id}/resolve; the older resolve routes when
     * they carry one). 403 for a credential without a user (the rationale is her message), 404 unknown, 409
     * invalid-state-transition when the dispute is no longer open (unless this very ruling landed: a repeat
     * records what is missing and returns the dispute). The split runs through the orders module first; then
     * the rationale, the `dispute.resolved` event (both parties) and the chat message.
     */
    async rule(p: PrincipalLike, id: string, r: { buyerBps: number; rationale: string }): Promise<Dispute> {
      if (!p.userId) throw new DomainError('forbidden', 'A ruling needs the arbiter\'s own login (a user), not a service API key: its rationale is posted as her message.');
      let d = await repo.get(id);
      if (!d) throw notFound(id);
      const landed = (x: DisputeRecord) => x.status === 'resolved' && x.settledBy !== 'agreement' && x.resolutionBuyerBps === r.buyerBps;
      if (d.status === 'disputed') {
        if (!deps.orders) throw new DomainError('chain-unavailable', 'The service runs without a Solana connection; rulings are unavailable.');
        await deps.orders.resolveMilestone(p, d.orderId, d.milestoneIndex, r.buyerBps);
        d = (await repo.get(id))!;
      } else if (d.ruledAt && d.ruledBuyerBps === r.buyerBps) {
        await postRationale(d, d.ruledBy ?? p.userId);
        return view((await repo.get(id))!);
      }
      if (!landed(d)) {
        throw new DomainError('invalid-state-transition', `Dispute ${id} is no longer open (${d.status}${d.settledBy === 'agreement' ? ', settled by agreement' : ''}).`, {
          current_status: d.status,
        });
      }
      const evidence = (await repo.evidenceOf([id])).get(id) ?? [];
      const recorded = await repo.recordRuling(d, { rationale: r.rationale, ruledBy: p.userId, buyerBps: r.buyerBps, at: deps.now() }, (fresh) =>
        event('dispute.resolved', fresh, evidence),
      );
      if (recorded) deps.log.info({ dispute_id: id, buyer_bps: r.buyerBps }, 'dispute ruled with a rationale');
      const fresh = (await repo.get(id))!;
      await postRationale(fresh, fresh.ruledBy ?? p.userId);
      return view((await repo.get(id))!);
    },
  };
}

export type DisputesService = ReturnType<typeof createDisputesService>;
