/**
 * OrdersRepo over Prisma (tables orders, chain_intents). No rules here, only storage and the two
 * guards the service relies on:
 *  - `updateIf`: conditional update on the current status (optimistic, bumps `version`);
 *  - `beginIntent`: one transaction that locks the order row (SELECT ... FOR UPDATE), checks the
 *    status and that no pending/sent intent exists, then inserts the pending intent, so two
 *    processes can never both start a chain action on one order.
 *
 * Events (transactional outbox, modules/events/outbox.ts): every status change is written by
 * `applyTransition`, the one place that also appends, in the same transaction, the event the order
 * lifecycle table emits for it (`orderEventFor`: the `emits` column of the row from -> to by the
 * patch's `transition`), with the order as the API returns it (allowed_actions empty: it depends on the
 * caller) and the transaction signature when the chain moved. Creation appends order.created.
 */
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { listingStatusOfUnits, MILESTONE_EVENT_OF, PAYMENT_GRACE_SECONDS, TERMINAL_ORDER_STATUSES, type EventType, type OrderLevelStatus } from '@bazaar/contract';
import { type Instruction, type OrderStatus, OPEN_ORDER_STATUSES, findTransition, orderEventFor } from './order-state.js';
import { appendEvents, notifyAppended, type NewEvent } from '../events/index.js';
import type { EscrowMovement } from '../../metrics.js';
import { toOrderDto, type MilestonePresentation } from './orders.dto.js';
import { OPEN_MILESTONE_STATUSES, orderLevelEventOf, orderStatusOf } from './milestones.js';
import { nextStepOf, readOrderViews, type CategoryNameOf, type OrderView } from './order-view.js';
import type {
  BlockhashLifetime,
  ChainIntentRecord,
  CreateHeldResult,
  HoldGuard,
  IntentStatus,
  IssuedFundTransaction,
  ListOrdersQuery,
  NewOrder,
  OrderAttention,
  OrderPatch,
  OrderRecord,
  OrdersRepo,
  ProposalGuard,
  TxScope,
} from './orders.types.js';

type Db = PrismaClient;
/** wallets: the order's own columns (set by this module), else the users' wallets (rows inserted elsewhere) */
/**
 * Reads of order rows join nothing: every row names its buyer's and seller's wallet (migration
 * 20261127110000_order_wallets backfilled them and fills them on write), so a read is one statement (issue 28;
 * before, a read also loaded both users rows: three statements). Kept as the `include` of every read so a
 * reader can see where rows are loaded.
 */
const withWallets = undefined;
type OrderRow = Prisma.OrderGetPayload<object>;

/** A row without its wallets cannot exist after the migration above: refuse it loudly rather than guess. */
function walletOf(r: OrderRow, which: 'buyer' | 'seller'): string {
  const w = which === 'buyer' ? r.buyerWallet : r.sellerWallet;
  if (w === null) throw new Error(`order ${r.id} has no ${which} wallet (migration 20261127110000_order_wallets not applied?)`);
  return w;
}
type IntentRow = Prisma.ChainIntentGetPayload<object>;

const OPEN: IntentStatus[] = ['pending', 'sent'];
/** statuses in which an order holds its listing (createHeld): every open status */
const HOLDING = [...OPEN_ORDER_STATUSES];
const TERMINAL: OrderStatus[] = [...TERMINAL_ORDER_STATUSES];

const toSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

function toRecord(r: OrderRow): OrderRecord {
  return {
    id: r.id,
    listingId: r.listingId,
    buyerId: r.buyerId,
    sellerId: r.sellerId,
    buyerWallet: walletOf(r, 'buyer'),
    sellerWallet: walletOf(r, 'seller'),
    paymentSource: r.paymentSource === 'custodial' ? 'custodial' : 'wallet',
    currency: r.currency,
    mint: r.paymentMint,
    decimals: r.decimals,
    amount: BigInt(r.amountBaseUnits.toFixed()),
    status: r.status as OrderStatus,
    tokenMint: r.tokenMintAddress,
    feeBps: r.feeBps,
    escrowAddress: r.escrowAddress,
    vaultAddress: r.vaultAddress,
    paymentExpiresAt: r.paymentExpiresAt,
    // rows from before fund_expires_at: the payment expiry (service clock) is the closest value
    fundExpiresAt: toSeconds(r.fundExpiresAt ?? r.paymentExpiresAt),
    deliveryDeadline: toSeconds(r.deliveryDeadline),
    reviewWindow: r.reviewWindowSeconds,
    fundedAt: r.fundedAt,
    deliveredAt: r.deliveredAt,
    autoReleaseAt: r.autoReleaseAt,
    disputedAt: r.disputedAt,
    completedAt: r.completedAt,
    disputeReason: r.disputeReason,
    disputedBy: (r.disputedBy as 'buyer' | 'seller' | null) ?? null,
    buyerBps: r.resolutionBuyerBps,
    fundSignature: r.fundSignature,
    lastSignature: r.lastSignature,
    feeSponsor: r.feeSponsor,
    sponsoredFundTx: r.sponsoredFundTx && r.sponsoredFundTxUntil ? { transaction: r.sponsoredFundTx, validUntil: r.sponsoredFundTxUntil } : null,
    viaAction: r.viaAction,
    idempotencyKey: r.idempotencyKey,
    offerId: r.offerId,
    payout:
      r.payoutBuyerBaseUnits === null
        ? null
        : {
            buyer: BigInt(r.payoutBuyerBaseUnits.toFixed()),
            seller: r.payoutSellerBaseUnits ? BigInt(r.payoutSellerBaseUnits.toFixed()) : 0n,
            treasury: r.payoutTreasuryBaseUnits ? BigInt(r.payoutTreasuryBaseUnits.toFixed()) : 0n,
            buyerTokenAccount: r.payoutBuyerTokenAccount,
            verified: r.payoutVerified === true,
          },
    attention: r.attentionReason ? { reason: r.attentionReason, detail: r.attentionDetail ?? '', at: r.attentionAt ?? r.updatedAt } : null,
    settledBy: r.settledBy === 'agreement' ? 'agreement' : r.settledBy === 'arbiter' || r.status === 'resolved' ? 'arbiter' : null,
    extension:
      r.extensionNewDeadline && r.extensionExpiresAt
        ? { newDeadline: toSeconds(r.extensionNewDeadline), message: r.extensionMessage, proposedAt: r.extensionProposedAt ?? r.updatedAt, expiresAt: r.extensionExpiresAt }
        : null,
    settlement:
      r.settlementProposedBy && r.settlementBuyerBps !== null && r.settlementExpiresAt
        ? {
            proposedBy: r.settlementProposedBy === 'seller' ? 'seller' : 'buyer',
            buyerBps: r.settlementBuyerBps,
            proposedAt: r.settlementProposedAt ?? r.updatedAt,
            expiresAt: r.settlementExpiresAt,
          }
        : null,
    version: r.version,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    orderId: r.orderId ?? r.id,
    milestoneIndex: r.milestoneIndex,
    milestoneCount: r.milestoneCount,
    milestoneTitle: r.milestoneTitle,
    deliveryDays: r.deliveryDays,
    revisionsIncluded: r.revisionsIncluded,
    revisionsUsed: r.revisionsUsed,
    packageName: r.packageName,
    endedAt: r.endedAt,
    packageKey: r.packageKey,
    packageDeliveryDays: r.packageDeliveryDays,
  };
}

function toData(p: OrderPatch): Prisma.OrderUncheckedUpdateManyInput {
  const d: Prisma.OrderUncheckedUpdateManyInput = {};
  if (p.status !== undefined) {
    d.status = p.status;
  }
  if (p.fundedAt !== undefined) d.fundedAt = p.fundedAt;
  if (p.feeBps !== undefined) d.feeBps = p.feeBps;
  if (p.deliveredAt !== undefined) d.deliveredAt = p.deliveredAt;
  if (p.autoReleaseAt !== undefined) d.autoReleaseAt = p.autoReleaseAt;
  if (p.disputedAt !== undefined) d.disputedAt = p.disputedAt;
  if (p.completedAt !== undefined) d.completedAt = p.completedAt;
  if (p.disputeReason !== undefined) d.disputeReason = p.disputeReason;
  if (p.disputedBy !== undefined) d.disputedBy = p.disputedBy;
  if (p.buyerBps !== undefined) d.resolutionBuyerBps = p.buyerBps;
  if (p.fundSignature !== undefined) d.fundSignature = p.fundSignature;
  if (p.lastSignature !== undefined) d.lastSignature = p.lastSignature;
  if (p.fundExpiresAt !== undefined) d.fundExpiresAt = p.fundExpiresAt === null ? null : new Date(p.fundExpiresAt * 1000);
  if (p.paymentExpiresAt !== undefined) d.paymentExpiresAt = p.paymentExpiresAt;
  if (p.deliveryDeadline !== undefined) d.deliveryDeadline = new Date(p.deliveryDeadline * 1000);
  if (p.revisionsUsed !== undefined) d.revisionsUsed = p.revisionsUsed;
  if (p.payout !== undefined) {
    d.payoutBuyerBaseUnits = p.payout?.buyer.toString() ?? null;
    d.payoutSellerBaseUnits = p.payout?.seller.toString() ?? null;
    d.payoutTreasuryBaseUnits = p.payout?.treasury.toString() ?? null;
    d.payoutBuyerTokenAccount = p.payout?.buyerTokenAccount ?? null;
    d.payoutVerified = p.payout ? p.payout.verified : null;
  }
  if (p.attention !== undefined) {
    d.attentionReason = p.attention?.reason ?? null;
    d.attentionDetail = p.attention?.detail ?? null;
    d.attentionAt = p.attention?.at ?? null;
  }
  if (p.deliveryDeadline !== undefined) d.deliveryDeadline = new Date(p.deliveryDeadline * 1000);
  if (p.revisionsUsed !== undefined) d.revisionsUsed = p.revisionsUsed;
  if (p.settledBy !== undefined) d.settledBy = p.settledBy;
  if (p.extension !== undefined) {
    d.extensionNewDeadline = p.extension ? new Date(p.extension.newDeadline * 1000) : null;
    d.extensionMessage = p.extension?.message ?? null;
    d.extensionProposedAt = p.extension?.proposedAt ?? null;
    d.extensionExpiresAt = p.extension?.expiresAt ?? null;
  }
  if (p.settlement !== undefined) {
    d.settlementProposedBy = p.settlement?.proposedBy ?? null;
    d.settlementBuyerBps = p.settlement?.buyerBps ?? null;
    d.settlementProposedAt = p.settlement?.proposedAt ?? null;
    d.settlementExpiresAt = p.settlement?.expiresAt ?? null;
  }
  return d;
}


function toIntent(r: IntentRow): ChainIntentRecord {
  return {
    id: r.id,
    orderId: r.orderId!,
    action: r.action as Instruction,
    status: r.status as IntentStatus,
    signature: r.signature,
    slot: r.slot === null ? null : Number(r.slot),
    params: (r.payload as Record<string, unknown> | null) ?? null,
    error: r.error,
    blockhash: r.blockhash,
    lastValidBlockHeight: r.lastValidBlockHeight === null ? null : Number(r.lastValidBlockHeight),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

type Tx = Prisma.TransactionClient;

/** The pending proposal an update is conditional on (by when it was proposed; null = none pending). */
function proposalWhere(g?: ProposalGuard): Prisma.OrderWhereInput {
  if (!g) return {};
  return {
    ...(g.extensionProposedAt !== undefined ? { extensionProposedAt: g.extensionProposedAt } : {}),
    ...(g.settlementProposedAt !== undefined ? { settlementProposedAt: g.settlementProposedAt } : {}),
  };
}

/**
 * The event `type` of the order of row `id` as it is now inside `tx` (the API's Order; allowed_actions
 * empty). For a multi-milestone order the data is the whole order (every row) and, for milestone.*
 * events, `milestone_index` names the row's milestone.
 */
async function orderEvent(
  tx: Tx,
  id: string,
  type: EventType,
  signature: string | null,
  categoryName?: CategoryNameOf,
  /**
   * what the caller has just written in `tx` (not read again): the one row (UPDATE ... RETURNING), or every
   * row of the order in milestone order
   */
  known?: OrderRecord | readonly OrderRecord[],
): Promise<NewEvent> {
  const all = known !== undefined && !('orderId' in known) ? (known as readonly OrderRecord[]) : undefined;
  const one = known !== undefined && 'orderId' in known ? (known as OrderRecord) : undefined;
  const order = one ?? all?.find((r) => r.id === id) ?? toRecord(await tx.order.findUniqueOrThrow({ where: { id }, include: withWallets }));
  const rows = all ?? (order.milestoneCount > 1 ? (await tx.order.findMany({ where: { orderId: order.orderId }, include: withWallets, orderBy: { milestoneIndex: 'asc' } })).map(toRecord) : [order]);
  const views = await readOrderViews(tx, rows, { categoryName, toIntent });
  // the event's time on both clocks: the next step as it reads when the event is written
  const nowMs = Date.now();
  const clocks = { serviceMs: nowMs, chainSeconds: Math.floor(nowMs / 1000) };
  const first = rows[0]!;
  const presentations = new Map<string, MilestonePresentation>(rows.map((r) => [r.id, { allowed: [], next: nextStepOf(r, clocks, PAYMENT_GRACE_SECONDS) }]));
  const dto = toOrderDto(first, views.get(first.id)!, [], presentations.get(first.id)!.next, clocks, rows.length > 1 ? { rows, views, presentations, orderActions: [] } : undefined);
  return {
    type,
    resourceType: 'order',
    resourceId: order.orderId,
    audience: [order.buyerId, order.sellerId],
    data: type.startsWith('milestone.') ? { ...dto, milestone_index: order.milestoneIndex } : dto,
    signature,
  };
}

/** The derived status of a multi-milestone order inside `tx` (locks nothing). */
async function orderLevelStatus(tx: Tx, orderId: string): Promise<OrderLevelStatus> {
  const rows = await tx.order.findMany({
    where: { orderId },
    select: { milestoneIndex: true, milestoneCount: true, status: true, resolutionBuyerBps: true, endedAt: true, fundedAt: true, payoutSellerBaseUnits: true, payoutBuyerBaseUnits: true },
  });
  return orderStatusOf(
    rows.map((r) => ({
      milestoneIndex: r.milestoneIndex,
      milestoneCount: r.milestoneCount,
      status: r.status as OrderStatus,
      buyerBps: r.resolutionBuyerBps,
      endedAt: r.endedAt,
      fundedAt: r.fundedAt,
      payout:
        r.payoutBuyerBaseUnits === null
          ? null
          : { buyer: 0n, seller: r.payoutSellerBaseUnits ? BigInt(r.payoutSellerBaseUnits.toFixed()) : 0n, treasury: 0n, buyerTokenAccount: null, verified: false },
    })),
  );
}

/** Statuses in which the row's escrow holds its amount (funded, not yet paid out). */
const HELD_IN_ESCROW: ReadonlySet<OrderStatus> = new Set(['in_progress', 'delivered', 'disputed'] as OrderStatus[]);

/**
 * The escrow movement of a row's status change (metrics.ts `bazaar_escrow_volume_base_units_total`):
 * awaiting_payment -> in_progress = funded; leaving a funded status for completed / refunded / resolved =
 * released / refunded / resolved (the row's whole amount left the escrow: to the seller, the buyer, or split).
 */
export function escrowDirection(from: OrderStatus, to: OrderStatus): EscrowMovement['direction'] | null {
  if (from === 'awaiting_payment' && to === 'in_progress') return 'funded';
  if (!HELD_IN_ESCROW.has(from)) return null;
  if (to === 'completed') return 'released';
  if (to === 'refunded') return 'refunded';
  if (to === 'resolved') return 'resolved';
  return null;
}

/**
 * THE one place an order's status changes: the conditional update (on the expected status, bumping
 * `version`) and, when the status moved, the event of that lifecycle row, in the caller's transaction.
 * The event's signature: `signature`, else the patch's last/fund signature.
 */
async function applyTransition(
  tx: Tx,
  id: string,
  expected: OrderStatus,
  patch: OrderPatch,
  signature: string | null,
  categoryName?: CategoryNameOf,
  guard?: ProposalGuard,
  moved?: EscrowMovement[],
  known?: OrderRecord,
  written?: (order: OrderRecord) => void,
  deferred?: NewEvent[],
): Promise<boolean> {
  // `known`: the row as the caller read it (what never changes: its order, milestone count, amount, currency,
  // wallets), so neither the head nor the row after the update is read again (issue 28: funding's statements)
  const head = known
    ? { orderId: known.orderId, milestoneCount: known.milestoneCount, amount: known.amount, currency: known.currency }
    : await tx.order
        .findUnique({ where: { id }, select: { orderId: true, milestoneCount: true, amountBaseUnits: true, currency: true } })
        .then((h) => (h ? { orderId: h.orderId!, milestoneCount: h.milestoneCount, amount: BigInt(h.amountBaseUnits.toFixed()), currency: h.currency } : null));
  const multi = head && head.milestoneCount > 1 ? head.orderId : null;
  const before = multi ? await orderLevelStatus(tx, multi) : null;
  const where = { id, status: expected, ...proposalWhere(guard) };
  const data = { ...toData(patch), version: { increment: 1 } };
  let current: OrderRecord | undefined;
  if (known && !multi) {
    // one statement: UPDATE ... RETURNING the row (its wallets are columns of its own: migration 20261127110000_order_wallets)
    const rows = await tx.order.updateManyAndReturn({ where, data });
    if (rows.length !== 1) return false;
    current = toRecord(rows[0]!);
    written?.(current);
  } else {
    const r = await tx.order.updateMany({ where, data });
    if (r.count !== 1) return false;
  }
  const sig = signature ?? patch.lastSignature ?? patch.fundSignature ?? null;
  // a status change emits its row's event; a row that keeps the status (a proposal) emits when named
  const statusChanged = patch.status !== undefined && patch.status !== expected;
  if (statusChanged && head && moved) {
    const direction = escrowDirection(expected, patch.status!);
    if (direction) moved.push({ currency: head.currency, direction, baseUnits: head.amount });
  }
  const type = statusChanged
    ? orderEventFor(expected, patch.status!, patch.transition)
    : patch.transition
      ? (findTransition(expected, patch.transition)?.emits ?? null)
      : null;
  // the audit log's before/after (modules/audit, for the audited types): the row's status left and reached
  const rowAudit = { before: { status: expected }, after: { status: patch.status ?? expected } };
  if (!multi) {
    if (type) {
      const e = { ...(await orderEvent(tx, id, type, sig, categoryName, current)), audit: rowAudit };
      // `deferred`: the caller appends it with its own, last in its transaction
      if (deferred) deferred.push(e);
      else await appendEvents(tx, [e]);
    }
    return true;
  }
  // a multi-milestone order: the row's milestone.* event (agreement events as they are), then the
  // order.* event when the order as a whole moved
  const events: NewEvent[] = [];
  const milestoneType = type ? (type.startsWith('order.') ? MILESTONE_EVENT_OF[type as keyof typeof MILESTONE_EVENT_OF] : type) : undefined;
  if (milestoneType) events.push({ ...(await orderEvent(tx, id, milestoneType as EventType, sig, categoryName)), audit: rowAudit });
  if (statusChanged) {
    const after = await orderLevelStatus(tx, multi);
    await tx.order.updateMany({ where: { orderId: multi }, data: { orderStatus: after } });
    const orderType = orderLevelEventOf(before!, after);
    if (orderType) events.push({ ...(await orderEvent(tx, multi, orderType, sig, categoryName)), audit: { before: { status: before }, after: { status: after } } });
  }
  if (deferred) deferred.push(...events);
  else if (events.length) await appendEvents(tx, events);
  return true;
}

/**
 * Repeat sales: can listing `u` take one more order? null = yes; `sold` = its sold orders reached the stock;
 * `held` = its open orders fill it and the paid ones alone would not (unpaid holds are what fills it); `paid`
 * = its paid orders fill it (contract `listingStatusOfUnits`; an open order counts against the stock).
 */
export function listingUnitsFull(u: { capacity: number; stock: number | null; open_orders: number; unpaid_orders: number; sold_count: number }): 'sold' | 'held' | 'paid' | null {
  const units = { capacity: Number(u.capacity), stock: u.stock === null ? null : Number(u.stock), sold: Number(u.sold_count) };
  const open = Number(u.open_orders);
  const all = listingStatusOfUnits({ ...units, open });
  if (all === 'sold') return 'sold';
  if (all === 'available') return null;
  return listingStatusOfUnits({ ...units, open: open - Number(u.unpaid_orders) }) === 'available' ? 'held' : 'paid';
}

/**
 * Orders flagged for an operator (`attention`), counted per reason, for the metrics: at most `cap` flagged
 * rows are read (the attention_reason index: never a scan of the orders).
 */
export async function attentionFlagCounts(db: Db, cap = 10_000): Promise<Record<string, number>> {
  const rows = await db.$queryRaw<Array<{ kind: string; n: bigint }>>`
    SELECT attention_reason AS kind, count(*) AS n
      FROM (SELECT attention_reason FROM orders WHERE attention_reason IS NOT NULL LIMIT ${cap}) f
     GROUP BY attention_reason`;
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
}

/** A milestone to fund was not scheduled any more (rolls the funding request back). */
class NotScheduled extends Error {}

export class PrismaOrdersRepo implements OrdersRepo {
  /** `categoryName`: display names of the configured categories (order views; default: the slug in title case) */
  constructor(
    private readonly db: Db,
    private readonly opts: {
      categoryName?: CategoryNameOf;
      /** told of each escrow movement once its transaction committed (metrics.ts escrow volume) */
      onEscrow?: (m: EscrowMovement) => void;
    } = {},
  ) {}

  /** The read model of a page of orders (listing, parties, review, chain transactions) in two statements. */
  async views(orders: readonly OrderRecord[]): Promise<Map<string, OrderView>> {
    return readOrderViews(this.db, orders, { categoryName: this.opts.categoryName, toIntent });
  }

  async create(o: NewOrder): Promise<OrderRecord> {
    const created = await this.db.$transaction(async (tx) => {
      const row = await this.insert(tx, o);
      const type = orderEventFor(null, row.status, 'create');
      if (type) await appendEvents(tx, [await orderEvent(tx, row.id, type, null, this.opts.categoryName)]);
      return row;
    });
    notifyAppended();
    return created;
  }

  private async insert(db: Pick<Db, 'order'>, o: NewOrder): Promise<OrderRecord> {
    const row = await db.order.create({
      data: {
        id: o.id,
        listingId: o.listingId,
        buyerId: o.buyerId,
        sellerId: o.sellerId,
        buyerWallet: o.buyerWallet,
        sellerWallet: o.sellerWallet,
        paymentSource: o.paymentSource ?? 'wallet',
        status: o.status,
        amountBaseUnits: o.amount.toString(),
        currency: o.currency,
        paymentMint: o.mint,
        decimals: o.decimals,
        // token_mint_address: the listing's NFT, copied at order time (ListingsPort.get)
        tokenMintAddress: o.tokenMint,
        feeBps: o.feeBps,
        escrowAddress: o.escrowAddress,
        vaultAddress: o.vaultAddress,
        deliveryDeadline: new Date(o.deliveryDeadline * 1000),
        reviewWindowSeconds: o.reviewWindow,
        paymentExpiresAt: o.paymentExpiresAt,
        fundExpiresAt: o.fundExpiresAt ? new Date(o.fundExpiresAt * 1000) : null,
        idempotencyKey: o.idempotencyKey ?? null,
        holdNetwork: o.holdNetwork ?? null,
        feeSponsor: o.feeSponsor ?? null,
        viaAction: o.viaAction ?? false,
        offerId: o.offerId ?? null,
        packageKey: o.packageKey ?? null,
        packageDeliveryDays: o.packageDeliveryDays ?? null,
        orderId: o.orderId ?? o.id,
        milestoneIndex: o.milestoneIndex ?? 1,
        milestoneCount: o.milestoneCount ?? 1,
        milestoneTitle: o.milestoneTitle ?? null,
        deliveryDays: o.deliveryDays ?? null,
        revisionsIncluded: o.revisionsIncluded ?? 0,
        revisionsUsed: o.revisionsUsed ?? 0,
        packageName: o.packageName ?? null,
        // a new multi-milestone order awaits the payment of its milestone 1 (orderStatusOf)
        orderStatus: (o.milestoneCount ?? 1) > 1 ? 'awaiting_payment' : null,
        ...(o.createdAt ? { createdAt: o.createdAt } : {}),
      },
      include: withWallets,
    });
    return toRecord(row);
  }

  async findByIdempotencyKey(buyerId: string, key: string): Promise<OrderRecord | null> {
    const row = await this.db.order.findUnique({ where: { buyerId_idempotencyKey: { buyerId, idempotencyKey: key } }, include: withWallets });
    return row ? toRecord(row) : null;
  }

  async createHeld(o: NewOrder, guard: HoldGuard, later: readonly NewOrder[] = []): Promise<CreateHeldResult> {
    try {
      const result: CreateHeldResult = await this.db.$transaction(async (tx) => {
        // ONE statement takes the locks in the order every creation takes them (buyer, network, listing: no
        // deadlock; a target list is evaluated left to right) and reads the listing's units under its row lock
        // (a locked row is read as last committed, whatever the statement's snapshot)
        const network = o.holdNetwork ?? null;
        const key = o.idempotencyKey ?? null;
        const locked = (await tx.$queryRaw<Array<{ buyer: string | null; network: boolean | null; units: string | null }>>`
          SELECT (SELECT id::text FROM users WHERE id = ${o.buyerId}::uuid FOR UPDATE) AS buyer,
                 CASE WHEN ${network}::text IS NOT NULL THEN (SELECT true FROM pg_advisory_xact_lock(hashtext(${`order-holds:${network}`}))) END AS network,
                 (SELECT json_build_object('capacity', capacity, 'stock', stock, 'open_orders', open_orders, 'unpaid_orders', unpaid_orders,
                                           'sold_count', sold_count, 'taken_down', taken_down_at IS NOT NULL)::text
                    FROM listings WHERE id = ${o.listingId}::uuid FOR UPDATE) AS units`)[0]!;
        // ONE statement after the locks (its snapshot sees every order committed before we held them): this
        // buyer's order with the same key, the lapsed unpaid wallet orders of this listing inside the cool-down,
        // this buyer's unpaid orders of the same kind (signed-in, or created through a Solana Action: separate
        // limits, so a stranger's blink POSTs naming a wallet never fill its owner's), this network's holds
        const since = guard.recentSince;
        const viaAction = o.viaAction === true;
        const counts = (await tx.$queryRaw<Array<{ duplicate: string | null; lapsed: string; unpaid: number; network_holds: number; network_earliest: Date | null }>>`
          SELECT (SELECT id::text FROM orders WHERE ${key}::text IS NOT NULL AND buyer_id = ${o.buyerId}::uuid AND idempotency_key = ${key}::text) AS duplicate,
                 COALESCE((SELECT json_agg(json_build_object('buyer_id', buyer_id, 'buyer_wallet', buyer_wallet, 'hold_network', hold_network,
                                                           'payment_expires_at', payment_expires_at, 'via_action', via_action))
                             FROM orders
                            WHERE ${since}::timestamptz IS NOT NULL AND listing_id = ${o.listingId}::uuid AND status = 'expired'
                              AND payment_source = 'wallet' AND payment_expires_at > ${since}::timestamptz), '[]'::json)::text AS lapsed,
                 (SELECT count(*)::int FROM orders WHERE buyer_id = ${o.buyerId}::uuid AND status = 'awaiting_payment' AND via_action = ${viaAction}) AS unpaid,
                 (SELECT count(*)::int FROM orders WHERE ${network}::text IS NOT NULL AND hold_network = ${network}::text AND status = 'awaiting_payment') AS network_holds,
                 (SELECT min(payment_expires_at) FROM orders WHERE ${network}::text IS NOT NULL AND hold_network = ${network}::text AND status = 'awaiting_payment') AS network_earliest`)[0]!;
        if (counts.duplicate) {
          const dup = await tx.order.findUnique({ where: { id: counts.duplicate }, include: withWallets });
          if (dup) return { duplicate: toRecord(dup) };
        }
        // --- repeat sales: one hold per unit of capacity (counts kept by the orders trigger, weighed by order_listing_weight) ---
        // the listing's row lock alone (migration 20261126155406: no seller-wide lock, so one seller's orders do not queue)
        const units = locked.units
          ? (JSON.parse(locked.units) as { capacity: number; stock: number | null; open_orders: number; unpaid_orders: number; sold_count: number; taken_down: boolean })
          : undefined;
        // issue 25: under the row lock a takedown also takes (so a hold either precedes it and settles, or is refused)
        if (units?.taken_down) return { takenDown: true };
        const full = units ? listingUnitsFull(units) : null;
        if (full === 'sold') return { soldOut: true };
        if (full === 'held' || full === 'paid') {
          // held: unpaid holds are what fills it (held_until = the first of them to lapse); else the oldest open order
          const holder = await tx.order.findFirst({
            where: { listingId: o.listingId, status: full === 'held' ? 'awaiting_payment' : { in: HOLDING } },
            orderBy: full === 'held' ? { paymentExpiresAt: 'asc' } : { createdAt: 'asc' },
          });
          if (holder) return { listingHeld: { orderId: holder.id, status: holder.status as OrderStatus, paymentExpiresAt: holder.paymentExpiresAt } };
        }
        // --- end repeat sales ---
        let contested = false;
        if (since) {
          // unpaid wallet orders for this listing whose payment window closed inside the cool-down
          const lapsed = (JSON.parse(counts.lapsed) as Array<{ buyer_id: string; buyer_wallet: string | null; hold_network: string | null; payment_expires_at: string; via_action: boolean }>).map((x) => ({
            buyerId: x.buyer_id,
            buyerWallet: x.buyer_wallet,
            holdNetwork: x.hold_network,
            paymentExpiresAt: new Date(x.payment_expires_at),
            viaAction: x.via_action === true,
          }));
          contested = lapsed.length > 0;
          // an order created through a Solana Action names a wallet nobody proved to hold: its lapse cools down
          // the network it came from, never the wallet's user or the wallet (a stranger cannot lock them out)
          const mine = lapsed.filter(
            (x) => (!x.viaAction && (x.buyerId === o.buyerId || x.buyerWallet === o.buyerWallet)) || (network !== null && x.holdNetwork === network),
          );
          if (mine.length > 0) return { cooldown: { lapsedAt: new Date(Math.max(...mine.map((x) => x.paymentExpiresAt.getTime()))) } };
        }
        const unpaid = Number(counts.unpaid);
        if (unpaid >= guard.maxUnpaidPerBuyer) return { buyerLimit: { unpaid } };
        let networkHolds = 0;
        if (network) {
          networkHolds = Number(counts.network_holds);
          if (networkHolds >= guard.maxUnpaidPerNetwork) return { networkLimit: { holds: networkHolds, earliestExpiresAt: counts.network_earliest ? new Date(counts.network_earliest) : new Date() } };
        }
        const created = await this.insert(tx, { ...o, ...guard.window({ contested, networkHolds }) });
        // milestones 2..n: scheduled, no window (set when funded), in the same transaction
        const rows = [created];
        for (const m of later) rows.push(await this.insert(tx, m));
        if (guard.onCreated) await guard.onCreated(tx, created);
        // the event presents the rows just written (nothing else wrote them inside this transaction)
        await appendEvents(tx, [await orderEvent(tx, created.id, orderEventFor(null, created.status, 'create')!, null, this.opts.categoryName, guard.onCreated ? undefined : rows)]);
        return { created };
      });
      if ('created' in result) notifyAppended();
      return result;
    } catch (err) {
      // the same key committed by a concurrent attempt (the unique (buyer_id, idempotency_key))
      if ((err as { code?: string }).code === 'P2002' && o.idempotencyKey) {
        const dup = await this.findByIdempotencyKey(o.buyerId, o.idempotencyKey);
        if (dup) return { duplicate: dup };
      }
      throw err;
    }
  }

  async unpaidOfWallet(wallet: string, viaAction = false): Promise<Array<{ id: string; mint: string; amount: bigint }>> {
    const rows = await this.db.order.findMany({
      where: { buyerWallet: wallet, status: 'awaiting_payment', paymentSource: 'wallet', viaAction },
      select: { id: true, paymentMint: true, amountBaseUnits: true },
    });
    return rows.map((r) => ({ id: r.id, mint: r.paymentMint, amount: BigInt(r.amountBaseUnits.toFixed()) }));
  }

  async discardUnpaid(orderId: string): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const r = await tx.order.deleteMany({ where: { id: orderId, status: 'awaiting_payment', intents: { none: {} } } });
      if (r.count !== 1) return false;
      // its scheduled milestones 2..n go with it (nothing of them exists anywhere else)
      await tx.order.deleteMany({ where: { orderId, status: 'scheduled', milestoneIndex: { gt: 1 } } });
      return true;
    });
  }

  async scan(afterId: string | null, limit: number): Promise<OrderRecord[]> {
    const rows = await this.db.order.findMany({
      where: afterId ? { id: { gt: afterId } } : {},
      orderBy: { id: 'asc' },
      take: limit,
      include: withWallets,
    });
    return rows.map(toRecord);
  }

  async setFeeSponsor(orderId: string, sponsor: string | null): Promise<boolean> {
    const r = await this.db.order.updateMany({ where: { id: orderId, fundIssuedUntil: null }, data: { feeSponsor: sponsor } });
    return r.count === 1;
  }

  async noteFundIssued(orderId: string, until: Date, sponsored?: IssuedFundTransaction): Promise<void> {
    if (!sponsored) {
      await this.db.order.updateMany({ where: { id: orderId, OR: [{ fundIssuedUntil: null }, { fundIssuedUntil: { lt: until } }] }, data: { fundIssuedUntil: until } });
      return;
    }
    // one statement for both (issue 28: one write per state change); GREATEST skips a NULL, so the issued-until only
    // moves forward; updated_at as Prisma's @updatedAt sets it on the update above
    await this.db.$executeRaw`UPDATE orders SET fund_issued_until = GREATEST(fund_issued_until, ${until}::timestamptz),
      sponsored_fund_tx = ${sponsored.transaction}, sponsored_fund_tx_until = ${sponsored.validUntil}::timestamptz,
      updated_at = ${new Date()}::timestamptz
      WHERE id = ${orderId}::uuid`;
  }

  async listClosedFundableSince(since: Date, limit: number, afterId: string | null = null): Promise<OrderRecord[]> {
    const rows = await this.db.order.findMany({
      where: { fundIssuedUntil: { gte: since }, status: { in: TERMINAL }, ...(afterId ? { id: { gt: afterId } } : {}) },
      orderBy: { id: 'asc' },
      take: limit,
      include: withWallets,
    });
    return rows.map(toRecord);
  }

  async flagAttention(orderId: string, a: OrderAttention): Promise<boolean> {
    const r = await this.db.order.updateMany({
      where: { id: orderId, attentionReason: null },
      data: { attentionReason: a.reason, attentionDetail: a.detail, attentionAt: a.at },
    });
    return r.count === 1;
  }

  async clearAttention(orderId: string): Promise<void> {
    await this.db.order.updateMany({ where: { id: orderId }, data: { attentionReason: null, attentionDetail: null, attentionAt: null } });
  }

  async getMany(ids: readonly string[]): Promise<OrderRecord[]> {
    if (ids.length === 0) return [];
    return (await this.db.order.findMany({ where: { id: { in: [...ids] } } })).map(toRecord);
  }

  async fundIf<T>(
    id: string,
    patch: OrderPatch,
    fund: { signature: string | null; slot: number | null },
    within: (scope: TxScope, order: OrderRecord) => Promise<T>,
    known?: OrderRecord,
  ): Promise<{ order: OrderRecord; within: T } | null> {
    const moved: EscrowMovement[] = [];
    const out = await this.db.$transaction(async (tx) => {
      const events: NewEvent[] = [];
      let order: OrderRecord | undefined;
      const changed = await applyTransition(tx, id, 'awaiting_payment', patch, fund.signature, this.opts.categoryName, undefined, moved, known, (o) => (order = o), events);
      if (!changed) return null;
      order ??= toRecord(await tx.order.findUniqueOrThrow({ where: { id }, include: withWallets }));
      if (fund.signature) {
        // the buyer's fund transaction, recorded once per order (ON CONFLICT DO NOTHING: a concurrent writer, or a bundle recorded it)
        await tx.chainIntent.createMany({
          data: [{ orderId: id, action: 'fund', status: 'confirmed', signature: fund.signature, slot: fund.slot === null ? null : BigInt(fund.slot) }],
          skipDuplicates: true,
        });
      }
      const result = await within({ tx, events }, order);
      // last: every event of the change (the order's, then the listing's) under one outbox lock
      await appendEvents(tx, events);
      return { order, within: result };
    });
    if (out) {
      notifyAppended();
      this.reportEscrow(moved);
    }
    return out;
  }

  async get(id: string): Promise<OrderRecord | null> {
    const row = await this.db.order.findUnique({ where: { id } });
    return row ? toRecord(row) : null;
  }

  async list(q: ListOrdersQuery): Promise<OrderRecord[]> {
    const who: Prisma.OrderWhereInput =
      q.role === 'buyer'
        ? { buyerId: q.userId }
        : q.role === 'seller'
          ? { sellerId: q.userId }
          : { OR: [{ buyerId: q.userId }, { sellerId: q.userId }] };
    // one entry per order (its first row); the status filter is the order-level one
    const and: Prisma.OrderWhereInput[] = [who, { milestoneIndex: 1 }];
    if (q.status) and.push({ OR: [{ orderStatus: null, status: q.status }, { orderStatus: q.status }] });
    if (q.after) {
      and.push({ OR: [{ createdAt: { lt: q.after.createdAt } }, { createdAt: q.after.createdAt, id: { lt: q.after.id } }] });
    }
    const rows = await this.db.order.findMany({
      where: { AND: and },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: q.limit,
      include: withWallets,
    });
    return rows.map(toRecord);
  }

  async listExpiredProposals(now: Date, chainNow: Date, limit: number): Promise<OrderRecord[]> {
    const rows = await this.db.order.findMany({
      where: {
        OR: [
          { status: 'in_progress', extensionExpiresAt: { lte: now } },
          { status: { in: ['in_progress', 'delivered', 'disputed'] }, settlementExpiresAt: { lte: chainNow } },
        ],
      },
      orderBy: { updatedAt: 'asc' },
      take: limit,
      include: withWallets,
    });
    return rows.map(toRecord);
  }

  async milestonesOf(orderIds: readonly string[]): Promise<Map<string, OrderRecord[]>> {
    const out = new Map<string, OrderRecord[]>();
    if (orderIds.length === 0) return out;
    // ONE statement (no relation loads): every row carries both wallets (migration 20261127110000_order_wallets)
    const rows = await this.db.order.findMany({
      where: { orderId: { in: [...new Set(orderIds)] } },
      orderBy: [{ orderId: 'asc' }, { milestoneIndex: 'asc' }],
    });
    for (const r of rows) {
      const rec = toRecord(r);
      out.set(rec.orderId, [...(out.get(rec.orderId) ?? []), rec]);
    }
    return out;
  }

  async requestMilestonePayment(
    orderId: string,
    indexes: readonly number[],
    w: { paymentExpiresAt: Date; fundExpiresAt: number; deliveryDeadlines: Map<number, number> },
  ): Promise<boolean> {
    const changed = await this.db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM orders WHERE order_id = ${orderId}::uuid ORDER BY milestone_index FOR UPDATE`;
      for (const index of indexes) {
        const row = await tx.order.findUnique({ where: { orderId_milestoneIndex: { orderId, milestoneIndex: index } }, select: { id: true } });
        if (!row) throw new NotScheduled();
        const ok = await applyTransition(
          tx,
          row.id,
          'scheduled',
          {
            status: 'awaiting_payment',
            transition: 'fund',
            paymentExpiresAt: w.paymentExpiresAt,
            fundExpiresAt: w.fundExpiresAt,
            deliveryDeadline: w.deliveryDeadlines.get(index)!,
          },
          null,
          this.opts.categoryName,
        );
        if (!ok) throw new NotScheduled();
      }
      return true;
    }).catch((err) => {
      if (err instanceof NotScheduled) return false;
      throw err;
    });
    if (changed) notifyAppended();
    return changed;
  }

  async endOrder(orderId: string, at: Date): Promise<{ ended: true } | { already: true } | { open: number[] }> {
    const result = await this.db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM orders WHERE order_id = ${orderId}::uuid ORDER BY milestone_index FOR UPDATE`;
      const rows = await tx.order.findMany({ where: { orderId }, select: { milestoneIndex: true, status: true, endedAt: true }, orderBy: { milestoneIndex: 'asc' } });
      if (rows.some((r) => r.endedAt)) return { already: true as const };
      const open = rows.filter((r) => (OPEN_MILESTONE_STATUSES as readonly string[]).includes(r.status)).map((r) => r.milestoneIndex);
      if (open.length) return { open };
      const before = await orderLevelStatus(tx, orderId);
      await tx.order.updateMany({ where: { orderId }, data: { endedAt: at, orderStatus: 'ended', version: { increment: 1 } } });
      const type = orderLevelEventOf(before, 'ended');
      if (type) await appendEvents(tx, [await orderEvent(tx, orderId, type, null, this.opts.categoryName)]);
      return { ended: true as const };
    });
    if ('ended' in result) notifyAppended();
    return result;
  }

  async listByStatus(status: OrderStatus, limit: number): Promise<OrderRecord[]> {
    return (await this.db.order.findMany({ where: { status }, orderBy: { createdAt: 'asc' }, take: limit })).map(toRecord);
  }

  async updateIf(id: string, expected: OrderStatus, patch: OrderPatch, guard?: ProposalGuard): Promise<boolean> {
    const where = { id, status: expected, ...proposalWhere(guard) };
    if ((patch.status === undefined || patch.status === expected) && !patch.transition) {
      const r = await this.db.order.updateMany({ where, data: { ...toData(patch), version: { increment: 1 } } });
      return r.count === 1;
    }
    const moved: EscrowMovement[] = [];
    const changed = await this.db.$transaction((tx) => applyTransition(tx, id, expected, patch, null, this.opts.categoryName, guard, moved));
    if (changed) notifyAppended();
    if (changed) this.reportEscrow(moved);
    return changed;
  }

  async beginIntent(orderId: string, expected: OrderStatus, action: Instruction, params: Record<string, unknown> | null) {
    return this.db.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM orders WHERE id = ${orderId}::uuid FOR UPDATE`;
      if (locked[0]?.status !== expected) return null;
      const open = await tx.chainIntent.count({ where: { orderId, status: { in: OPEN } } });
      if (open > 0) return null;
      const row = await tx.chainIntent.create({
        data: { orderId, action, status: 'pending', payload: (params ?? undefined) as Prisma.InputJsonValue | undefined },
      });
      return toIntent(row);
    });
  }

  async markIntentSent(intentId: string, signature: string, lifetime?: BlockhashLifetime): Promise<boolean> {
    const r = await this.db.chainIntent.updateMany({
      where: { id: intentId, status: 'pending' },
      data: {
        status: 'sent',
        signature,
        ...(lifetime ? { blockhash: lifetime.blockhash, lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) } : {}),
      },
    });
    return r.count === 1;
  }

  /** Tell `opts.onEscrow` of committed movements (a metrics failure never fails the order change). */
  private reportEscrow(moved: readonly EscrowMovement[]): void {
    const on = this.opts.onEscrow;
    if (!on) return;
    for (const m of moved) {
      try {
        on(m);
      } catch {
        // metrics only
      }
    }
  }

  async confirmIntent(intentId: string, signature: string | null, slot: number | null, orderId: string, expected: OrderStatus, patch: OrderPatch) {
    const moved: EscrowMovement[] = [];
    return this.db.$transaction(async (tx) => {
      await tx.chainIntent.update({
        where: { id: intentId },
        data: { status: 'confirmed', ...(signature ? { signature } : {}), ...(slot !== null ? { slot: BigInt(slot) } : {}), error: null },
      });
      if (!Object.keys(patch).length) return false;
      return applyTransition(tx, orderId, expected, patch, signature, this.opts.categoryName, undefined, moved);
    }).then((changed) => {
      if (changed && ((patch.status !== undefined && patch.status !== expected) || patch.transition)) notifyAppended();
      if (changed) this.reportEscrow(moved);
      return changed;
    });
  }

  async recordConfirmed(orderId: string, action: Instruction, signature: string, slot: number | null): Promise<void> {
    // one transaction may act on several orders (a bundle): recorded once per order
    const existing = await this.db.chainIntent.findFirst({ where: { orderId, signature } });
    if (existing) return;
    await this.db.chainIntent
      .create({ data: { orderId, action, status: 'confirmed', signature, slot: slot === null ? null : BigInt(slot) } })
      .catch(() => undefined); // a concurrent writer recorded it (unique signature)
  }

  async failIntent(intentId: string, error: string): Promise<void> {
    await this.db.chainIntent.update({ where: { id: intentId }, data: { status: 'failed', error: error.slice(0, 1000) } });
  }

  async openIntentFor(orderId: string): Promise<ChainIntentRecord | null> {
    const row = await this.db.chainIntent.findFirst({ where: { orderId, status: { in: OPEN } }, orderBy: { createdAt: 'asc' } });
    return row ? toIntent(row) : null;
  }

  async listOpenIntents(limit: number): Promise<ChainIntentRecord[]> {
    const rows = await this.db.chainIntent.findMany({
      where: { status: { in: OPEN }, orderId: { not: null } },
      orderBy: { createdAt: 'asc' },
      take: limit,
    });
    return rows.map(toIntent);
  }

  async listIntents(orderId: string): Promise<ChainIntentRecord[]> {
    const rows = await this.db.chainIntent.findMany({ where: { orderId }, orderBy: { createdAt: 'asc' } });
    return rows.map(toIntent);
  }
}

/**
 * A user's completed orders: as seller and as buyer (an order counts once however many of its milestones
 * were released), and the sales volume per currency (base units: every released milestone).
 */
export interface UserOrderStats {
  completedSales: number;
  completedPurchases: number;
  /** per currency code, ordered by it: the sum of completed sales' amounts in base units (a decimal string) */
  salesVolume: Array<{ currency: string; amountBaseUnits: string; decimals: number }>;
}

/** UserOrderStats of `userId` (users module: profile stats). */
export async function userOrderStats(db: PrismaClient, userId: string): Promise<UserOrderStats> {
  const [counts, volume] = await Promise.all([
    db.$queryRaw<Array<{ sales: number; purchases: number }>>`
      SELECT
        (SELECT count(DISTINCT order_id)::int FROM orders WHERE seller_id = ${userId}::uuid AND status = 'completed') AS sales,
        (SELECT count(DISTINCT order_id)::int FROM orders WHERE buyer_id = ${userId}::uuid AND status = 'completed') AS purchases`,
    db.$queryRaw<Array<{ currency: string; total: string; decimals: number }>>`
      SELECT currency, sum(amount_base_units)::text AS total, max(decimals)::int AS decimals
      FROM orders WHERE seller_id = ${userId}::uuid AND status = 'completed'
      GROUP BY currency ORDER BY currency`,
  ]);
  const c = counts[0] ?? { sales: 0, purchases: 0 };
  return {
    completedSales: Number(c.sales),
    completedPurchases: Number(c.purchases),
    salesVolume: volume.map((v) => ({ currency: v.currency, amountBaseUnits: v.total, decimals: Number(v.decimals) })),
  };
}
