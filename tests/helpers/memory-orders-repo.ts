/**
 * In-memory OrdersRepo with the same guard semantics as the Prisma one (used by unit tests).
 */
import { randomUUID } from 'node:crypto';
import { type Instruction, type OrderStatus, findTransition, isTerminal, OPEN_ORDER_STATUSES, orderEventFor } from '../../server/src/modules/orders/order-state.js';
import { OPEN_MILESTONE_STATUSES, orderStatusOf } from '../../server/src/modules/orders/milestones.js';
import type {
  BlockhashLifetime,
  ChainIntentRecord,
  CreateHeldResult,
  HoldGuard,
  ListOrdersQuery,
  NewOrder,
  OrderAttention,
  OrderPatch,
  OrderRecord,
  OrdersRepo,
  ProposalGuard,
  TxScope,
} from '../../server/src/modules/orders/orders.types.js';

const HOLDING = new Set<OrderStatus>(OPEN_ORDER_STATUSES);

export class MemoryOrdersRepo implements OrdersRepo {
  orders = new Map<string, OrderRecord>();
  intents = new Map<string, ChainIntentRecord>();
  private seq = 0;

  private tick(): Date {
    // strictly increasing timestamps keep keyset pagination deterministic
    return new Date(Date.now() + this.seq++);
  }

  async create(order: NewOrder) {
    const t = this.tick();
    const rec: OrderRecord = {
      ...order,
      orderId: order.orderId ?? order.id,
      milestoneIndex: order.milestoneIndex ?? 1,
      milestoneCount: order.milestoneCount ?? 1,
      milestoneTitle: order.milestoneTitle ?? null,
      deliveryDays: order.deliveryDays ?? null,
      revisionsIncluded: order.revisionsIncluded ?? 0,
      revisionsUsed: order.revisionsUsed ?? 0,
      packageName: order.packageName ?? null,
      endedAt: order.endedAt ?? null,
      paymentSource: order.paymentSource ?? 'wallet',
      fundExpiresAt: order.fundExpiresAt ?? Math.floor(order.paymentExpiresAt.getTime() / 1000),
      idempotencyKey: order.idempotencyKey ?? null,
      payout: null,
      attention: null,
      settledBy: null,
      extension: null,
      settlement: null,
      version: 0,
      createdAt: t,
      updatedAt: t,
    };
    this.orders.set(rec.id, rec);
    return { ...rec };
  }
  async findByIdempotencyKey(buyerId: string, key: string) {
    const o = [...this.orders.values()].find((x) => x.buyerId === buyerId && x.idempotencyKey === key);
    return o ? { ...o } : null;
  }
  /** client network of each order (a storage detail of the row: kept beside it here) */
  private networks = new Map<string, string | null>();
  async createHeld(order: NewOrder, guard: HoldGuard, later: readonly NewOrder[] = []): Promise<CreateHeldResult> {
    // synchronous up to the insert: as atomic as the row locks of the Prisma repo
    const all = [...this.orders.values()];
    const dup = order.idempotencyKey ? all.find((x) => x.buyerId === order.buyerId && x.idempotencyKey === order.idempotencyKey) : undefined;
    if (dup) return { duplicate: { ...dup } };
    const holder = all.find((x) => x.listingId === order.listingId && HOLDING.has(x.status));
    if (holder) return { listingHeld: { orderId: holder.id, status: holder.status, paymentExpiresAt: holder.paymentExpiresAt } };
    const network = order.holdNetwork ?? null;
    const since = guard.recentSince;
    const lapsed = since
      ? all.filter((x) => x.listingId === order.listingId && x.status === 'expired' && x.paymentSource === 'wallet' && x.paymentExpiresAt > since)
      : [];
    const mine = lapsed.filter((x) => x.buyerId === order.buyerId || x.buyerWallet === order.buyerWallet || (network !== null && this.networks.get(x.id) === network));
    if (mine.length > 0) return { cooldown: { lapsedAt: new Date(Math.max(...mine.map((x) => x.paymentExpiresAt.getTime()))) } };
    const unpaid = all.filter((x) => x.buyerId === order.buyerId && x.status === 'awaiting_payment').length;
    if (unpaid >= guard.maxUnpaidPerBuyer) return { buyerLimit: { unpaid } };
    const ofNetwork = network ? all.filter((x) => x.status === 'awaiting_payment' && this.networks.get(x.id) === network) : [];
    if (network && ofNetwork.length >= guard.maxUnpaidPerNetwork) {
      return { networkLimit: { holds: ofNetwork.length, earliestExpiresAt: new Date(Math.min(...ofNetwork.map((x) => x.paymentExpiresAt.getTime()))) } };
    }
    this.networks.set(order.id, network);
    const created = await this.create({ ...order, ...guard.window({ contested: lapsed.length > 0, networkHolds: ofNetwork.length }) });
    for (const m of later) await this.create(m);
    if (guard.onCreated) {
      // as the Prisma repo's transaction: a throw of the hook leaves no order
      try {
        await guard.onCreated(null, created);
      } catch (err) {
        this.orders.delete(created.id);
        this.networks.delete(created.id);
        throw err;
      }
    }
    return { created };
  }
  async unpaidOfWallet(wallet: string) {
    return [...this.orders.values()]
      .filter((x) => x.buyerWallet === wallet && x.status === 'awaiting_payment' && x.paymentSource === 'wallet')
      .map((x) => ({ id: x.id, mint: x.mint, amount: x.amount }));
  }
  async discardUnpaid(orderId: string) {
    const o = this.orders.get(orderId);
    if (!o || o.status !== 'awaiting_payment' || [...this.intents.values()].some((i) => i.orderId === orderId)) return false;
    this.orders.delete(orderId);
    return true;
  }
  async scan(afterId: string | null, limit: number) {
    return [...this.orders.values()]
      .filter((o) => afterId === null || o.id > afterId)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map((o) => ({ ...o }));
  }
  /** fund_issued_until is a storage detail of the order row: kept beside it here */
  private fundIssued = new Map<string, Date>();
  async noteFundIssued(orderId: string, until: Date) {
    const prev = this.fundIssued.get(orderId);
    if (!prev || prev < until) this.fundIssued.set(orderId, until);
  }
  async listClosedFundableSince(since: Date, limit: number, afterId: string | null = null) {
    return [...this.orders.values()]
      .filter((o) => isTerminal(o.status) && (this.fundIssued.get(o.id) ?? new Date(0)) >= since && (!afterId || o.id > afterId))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map((o) => ({ ...o }));
  }
  async flagAttention(orderId: string, attention: OrderAttention) {
    const o = this.orders.get(orderId);
    if (!o || o.attention) return false;
    o.attention = { ...attention };
    return true;
  }
  async clearAttention(orderId: string) {
    const o = this.orders.get(orderId);
    if (o) o.attention = null;
  }
  async get(id: string) {
    const o = this.orders.get(id);
    return o ? { ...o } : null;
  }
  async getMany(ids: readonly string[]) {
    return ids.flatMap((id) => {
      const o = this.orders.get(id);
      return o ? [{ ...o }] : [];
    });
  }
  /** As the Prisma repository's (one transaction there; here a `within` that throws leaves the row funded: no rollback in memory). */
  async fundIf<T>(id: string, patch: OrderPatch, fund: { signature: string | null; slot: number | null }, within: (scope: TxScope, order: OrderRecord) => Promise<T>) {
    if (!(await this.updateIf(id, 'awaiting_payment', patch))) return null;
    if (fund.signature) await this.recordConfirmed(id, 'fund', fund.signature, fund.slot);
    const order = { ...this.orders.get(id)! };
    return { order, within: await within({ tx: null, events: [] }, order) };
  }
  async list(q: ListOrdersQuery) {
    let rows = [...this.orders.values()].filter((o) =>
      q.role === 'buyer' ? o.buyerId === q.userId : q.role === 'seller' ? o.sellerId === q.userId : o.buyerId === q.userId || o.sellerId === q.userId,
    );
    rows = rows.filter((o) => o.milestoneIndex === 1);
    if (q.status) rows = rows.filter((o) => (o.milestoneCount > 1 ? orderStatusOf(this.rowsOf(o.orderId)) : o.status) === q.status);
    rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1));
    if (q.after) {
      const { createdAt, id } = q.after;
      rows = rows.filter((o) => o.createdAt < createdAt || (o.createdAt.getTime() === createdAt.getTime() && o.id < id));
    }
    return rows.slice(0, q.limit).map((o) => ({ ...o }));
  }
  private rowsOf(orderId: string): OrderRecord[] {
    return [...this.orders.values()].filter((o) => o.orderId === orderId).sort((a, b) => a.milestoneIndex - b.milestoneIndex);
  }
  async milestonesOf(orderIds: readonly string[]) {
    return new Map(orderIds.map((id) => [id, this.rowsOf(id).map((o) => ({ ...o }))] as const));
  }
  async requestMilestonePayment(orderId: string, indexes: readonly number[], w: { paymentExpiresAt: Date; fundExpiresAt: number; deliveryDeadlines: Map<number, number> }) {
    const rows = this.rowsOf(orderId).filter((o) => indexes.includes(o.milestoneIndex));
    if (rows.length !== indexes.length || rows.some((o) => o.status !== 'scheduled')) return false;
    for (const o of rows) {
      Object.assign(o, { status: 'awaiting_payment', paymentExpiresAt: w.paymentExpiresAt, fundExpiresAt: w.fundExpiresAt, deliveryDeadline: w.deliveryDeadlines.get(o.milestoneIndex)!, version: o.version + 1 });
    }
    return true;
  }
  async endOrder(orderId: string, at: Date) {
    const rows = this.rowsOf(orderId);
    if (rows.some((o) => o.endedAt)) return { already: true as const };
    const open = rows.filter((o) => (OPEN_MILESTONE_STATUSES as readonly string[]).includes(o.status)).map((o) => o.milestoneIndex);
    if (open.length) return { open };
    for (const o of rows) o.endedAt = at;
    return { ended: true as const };
  }
  async listByStatus(status: OrderStatus, limit: number) {
    return [...this.orders.values()].filter((o) => o.status === status).slice(0, limit).map((o) => ({ ...o }));
  }
  async updateIf(id: string, expected: OrderStatus, patch: OrderPatch, guard?: ProposalGuard) {
    const o = this.orders.get(id);
    if (!o || o.status !== expected) return false;
    const at = (p: { proposedAt: Date } | null) => p?.proposedAt.getTime() ?? null;
    if (guard?.extensionProposedAt !== undefined && at(o.extension) !== (guard.extensionProposedAt?.getTime() ?? null)) return false;
    if (guard?.settlementProposedAt !== undefined && at(o.settlement) !== (guard.settlementProposedAt?.getTime() ?? null)) return false;
    const { transition, ...columns } = patch;
    Object.assign(o, columns, { version: o.version + 1, updatedAt: this.tick() });
    // the outbox: the event of the row (status change, or a status-keeping row named by `transition`)
    const type =
      patch.status !== undefined && patch.status !== expected
        ? orderEventFor(expected, patch.status, transition)
        : transition
          ? (findTransition(expected, transition)?.emits ?? null)
          : null;
    if (type) this.events.push({ type, orderId: id, order: { ...o } });
    return true;
  }
  /** the events the Prisma repo would append to the outbox (type, order, the order after the change) */
  events: { type: string; orderId: string; order: OrderRecord }[] = [];
  async listExpiredProposals(now: Date, chainNow: Date, limit: number) {
    return [...this.orders.values()]
      .filter(
        (o) =>
          (o.status === 'in_progress' && o.extension && o.extension.expiresAt <= now) ||
          (['in_progress', 'delivered', 'disputed'].includes(o.status) && o.settlement && o.settlement.expiresAt <= chainNow),
      )
      .slice(0, limit)
      .map((o) => ({ ...o }));
  }
  async beginIntent(orderId: string, expected: OrderStatus, action: Instruction, params: Record<string, unknown> | null) {
    const o = this.orders.get(orderId);
    if (!o || o.status !== expected) return null;
    if ([...this.intents.values()].some((i) => i.orderId === orderId && (i.status === 'pending' || i.status === 'sent'))) return null;
    const t = this.tick();
    const rec: ChainIntentRecord = {
      id: randomUUID(),
      orderId,
      action,
      status: 'pending',
      signature: null,
      slot: null,
      params,
      error: null,
      blockhash: null,
      lastValidBlockHeight: null,
      createdAt: t,
      updatedAt: t,
    };
    this.intents.set(rec.id, rec);
    return { ...rec };
  }
  async markIntentSent(intentId: string, signature: string, lifetime?: BlockhashLifetime) {
    const i = this.intents.get(intentId);
    if (!i || i.status !== 'pending') return false;
    Object.assign(i, { status: 'sent', signature, ...(lifetime ?? {}), updatedAt: this.tick() });
    return true;
  }
  async confirmIntent(intentId: string, signature: string | null, slot: number | null, orderId: string, expected: OrderStatus, patch: OrderPatch) {
    const i = this.intents.get(intentId);
    if (i) Object.assign(i, { status: 'confirmed', signature: signature ?? i.signature, slot: slot ?? i.slot, updatedAt: this.tick() });
    if (!Object.keys(patch).length) return false;
    return this.updateIf(orderId, expected, patch);
  }
  async recordConfirmed(orderId: string, action: Instruction, signature: string, slot: number | null) {
    if ([...this.intents.values()].some((i) => i.orderId === orderId && i.signature === signature)) return;
    const t = this.tick();
    const id = randomUUID();
    this.intents.set(id, {
      id,
      orderId,
      action,
      status: 'confirmed',
      signature,
      slot,
      params: null,
      error: null,
      blockhash: null,
      lastValidBlockHeight: null,
      createdAt: t,
      updatedAt: t,
    });
  }
  async failIntent(intentId: string, error: string) {
    const i = this.intents.get(intentId);
    if (i) Object.assign(i, { status: 'failed', error, updatedAt: this.tick() });
  }
  async openIntentFor(orderId: string) {
    const i = [...this.intents.values()].find((x) => x.orderId === orderId && (x.status === 'pending' || x.status === 'sent'));
    return i ? { ...i } : null;
  }
  async listOpenIntents(limit: number) {
    return [...this.intents.values()].filter((x) => x.status === 'pending' || x.status === 'sent').slice(0, limit).map((x) => ({ ...x }));
  }
  async listIntents(orderId: string) {
    return [...this.intents.values()]
      .filter((x) => x.orderId === orderId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map((x) => ({ ...x }));
  }
}
