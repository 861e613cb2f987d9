/**
 * In-memory OrdersRepo with the same guard semantics as the Prisma one (used by unit tests).
 */
import { randomUUID } from 'node:crypto';
import type { Instruction, OrderStatus } from './order-state.js';
import type { ChainIntentRecord, ListOrdersQuery, NewOrder, OrderPatch, OrderRecord, OrdersRepo } from './orders.types.js';

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
    const rec: OrderRecord = { ...order, paymentSource: order.paymentSource ?? 'wallet', version: 0, createdAt: t, updatedAt: t };
    this.orders.set(rec.id, rec);
    return { ...rec };
  }
  async get(id: string) {
    const o = this.orders.get(id);
    return o ? { ...o } : null;
  }
  async list(q: ListOrdersQuery) {
    let rows = [...this.orders.values()].filter((o) =>
      q.role === 'buyer' ? o.buyerId === q.userId : q.role === 'seller' ? o.sellerId === q.userId : o.buyerId === q.userId || o.sellerId === q.userId,
    );
    if (q.status) rows = rows.filter((o) => o.status === q.status);
    rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1));
    if (q.after) {
      const { createdAt, id } = q.after;
      rows = rows.filter((o) => o.createdAt < createdAt || (o.createdAt.getTime() === createdAt.getTime() && o.id < id));
    }
    return rows.slice(0, q.limit).map((o) => ({ ...o }));
  }
  async listByStatus(status: OrderStatus, limit: number) {
    return [...this.orders.values()].filter((o) => o.status === status).slice(0, limit).map((o) => ({ ...o }));
  }
  async updateIf(id: string, expected: OrderStatus, patch: OrderPatch) {
    const o = this.orders.get(id);
    if (!o || o.status !== expected) return false;
    Object.assign(o, patch, { version: o.version + 1, updatedAt: this.tick() });
    return true;
  }
  async beginIntent(orderId: string, expected: OrderStatus, action: Instruction, params: Record<string, unknown> | null) {
    const o = this.orders.get(orderId);
    if (!o || o.status !== expected) return null;
    if ([...this.intents.values()].some((i) => i.orderId === orderId && (i.status === 'pending' || i.status === 'sent'))) return null;
    const t = this.tick();
    const rec: ChainIntentRecord = { id: randomUUID(), orderId, action, status: 'pending', signature: null, slot: null, params, error: null, createdAt: t, updatedAt: t };
    this.intents.set(rec.id, rec);
    return { ...rec };
  }
  async markIntentSent(intentId: string, signature: string) {
    const i = this.intents.get(intentId);
    if (i) Object.assign(i, { status: 'sent', signature, updatedAt: this.tick() });
  }
  async confirmIntent(intentId: string, signature: string | null, slot: number | null, orderId: string, expected: OrderStatus, patch: OrderPatch) {
    const i = this.intents.get(intentId);
    if (i) Object.assign(i, { status: 'confirmed', signature: signature ?? i.signature, slot: slot ?? i.slot, updatedAt: this.tick() });
    if (!Object.keys(patch).length) return false;
    return this.updateIf(orderId, expected, patch);
  }
  async recordConfirmed(orderId: string, action: Instruction, signature: string, slot: number | null) {
    if ([...this.intents.values()].some((i) => i.signature === signature)) return;
    const t = this.tick();
    const id = randomUUID();
    this.intents.set(id, { id, orderId, action, status: 'confirmed', signature, slot, params: null, error: null, createdAt: t, updatedAt: t });
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
