/**
 * OrdersRepo over Prisma (tables orders, chain_intents). No rules here, only storage and the two
 * guards the service relies on:
 *  - `updateIf`: conditional update on the current status (optimistic, bumps `version`);
 *  - `beginIntent`: one transaction that locks the order row (SELECT ... FOR UPDATE), checks the
 *    status and that no pending/sent intent exists, then inserts the pending intent, so two
 *    processes can never both start a chain action on one order.
 */
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { Instruction, OrderStatus } from './order-state.js';
import type { ChainIntentRecord, IntentStatus, ListOrdersQuery, NewOrder, OrderPatch, OrderRecord, OrdersRepo } from './orders.types.js';

type Db = PrismaClient;
/** wallets: the order's own columns (set by this module), else the users' wallets (rows inserted elsewhere) */
const withWallets = { buyer: { select: { wallet: true } }, seller: { select: { wallet: true } } } as const;
type OrderRow = Prisma.OrderGetPayload<{ include: typeof withWallets }>;
type IntentRow = Prisma.ChainIntentGetPayload<object>;

const OPEN: IntentStatus[] = ['pending', 'sent'];

/** escrow_state column (storage detail; the API derives escrow_state from status). */
function escrowStateFor(status: OrderStatus): string {
  switch (status) {
    case 'in_progress':
      return 'funded';
    case 'delivered':
    case 'disputed':
      return status;
    case 'awaiting_payment':
    case 'expired':
      return 'none';
    default:
      return 'closed';
  }
}

const toSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

function toRecord(r: OrderRow): OrderRecord {
  return {
    id: r.id,
    listingId: r.listingId,
    buyerId: r.buyerId,
    sellerId: r.sellerId,
    buyerWallet: r.buyerWallet ?? r.buyer.wallet,
    sellerWallet: r.sellerWallet ?? r.seller.wallet,
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
    version: r.version,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function toData(p: OrderPatch): Prisma.OrderUncheckedUpdateManyInput {
  const d: Prisma.OrderUncheckedUpdateManyInput = {};
  if (p.status !== undefined) {
    d.status = p.status;
    d.escrowState = escrowStateFor(p.status);
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
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export class PrismaOrdersRepo implements OrdersRepo {
  constructor(private readonly db: Db) {}

  async create(o: NewOrder): Promise<OrderRecord> {
    // token_mint_address: the listing's NFT, copied at order time
    const tokenMint =
      o.tokenMint ?? (await this.db.listing.findUnique({ where: { id: o.listingId }, select: { tokenMintAddress: true } }))?.tokenMintAddress ?? null;
    const row = await this.db.order.create({
      data: {
        id: o.id,
        listingId: o.listingId,
        buyerId: o.buyerId,
        sellerId: o.sellerId,
        buyerWallet: o.buyerWallet,
        sellerWallet: o.sellerWallet,
        paymentSource: o.paymentSource ?? 'wallet',
        status: o.status,
        escrowState: escrowStateFor(o.status),
        amountBaseUnits: o.amount.toString(),
        currency: o.currency,
        paymentMint: o.mint,
        decimals: o.decimals,
        tokenMintAddress: tokenMint,
        feeBps: o.feeBps,
        escrowAddress: o.escrowAddress,
        vaultAddress: o.vaultAddress,
        deliveryDeadline: new Date(o.deliveryDeadline * 1000),
        reviewWindowSeconds: o.reviewWindow,
        paymentExpiresAt: o.paymentExpiresAt,
        fundExpiresAt: new Date(o.fundExpiresAt * 1000),
        ...(o.createdAt ? { createdAt: o.createdAt } : {}),
      },
      include: withWallets,
    });
    return toRecord(row);
  }

  async get(id: string): Promise<OrderRecord | null> {
    const row = await this.db.order.findUnique({ where: { id }, include: withWallets });
    return row ? toRecord(row) : null;
  }

  async list(q: ListOrdersQuery): Promise<OrderRecord[]> {
    const who: Prisma.OrderWhereInput =
      q.role === 'buyer'
        ? { buyerId: q.userId }
        : q.role === 'seller'
          ? { sellerId: q.userId }
          : { OR: [{ buyerId: q.userId }, { sellerId: q.userId }] };
    const and: Prisma.OrderWhereInput[] = [who];
    if (q.status) and.push({ status: q.status });
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

  async listByStatus(status: OrderStatus, limit: number): Promise<OrderRecord[]> {
    const rows = await this.db.order.findMany({ where: { status }, orderBy: { createdAt: 'asc' }, take: limit, include: withWallets });
    return rows.map(toRecord);
  }

  async updateIf(id: string, expected: OrderStatus, patch: OrderPatch): Promise<boolean> {
    const r = await this.db.order.updateMany({
      where: { id, status: expected },
      data: { ...toData(patch), version: { increment: 1 } },
    });
    return r.count === 1;
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

  async markIntentSent(intentId: string, signature: string): Promise<void> {
    await this.db.chainIntent.update({ where: { id: intentId }, data: { status: 'sent', signature } });
  }

  async confirmIntent(intentId: string, signature: string | null, slot: number | null, orderId: string, expected: OrderStatus, patch: OrderPatch) {
    return this.db.$transaction(async (tx) => {
      await tx.chainIntent.update({
        where: { id: intentId },
        data: { status: 'confirmed', ...(signature ? { signature } : {}), ...(slot !== null ? { slot: BigInt(slot) } : {}), error: null },
      });
      if (!Object.keys(patch).length) return false;
      const r = await tx.order.updateMany({ where: { id: orderId, status: expected }, data: { ...toData(patch), version: { increment: 1 } } });
      return r.count === 1;
    });
  }

  async recordConfirmed(orderId: string, action: Instruction, signature: string, slot: number | null): Promise<void> {
    const existing = await this.db.chainIntent.findUnique({ where: { signature } });
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
