import { describe, expect, it } from 'vitest';
import {
  contract,
  ESCROW_INSTRUCTIONS,
  ESCROW_STATES,
  LISTING_EDITABLE_STATUSES,
  LISTING_EVENTS,
  MILESTONE_EVENTS,
  ORDER_EVENTS,
  type OrderTransition,
  REVIEWABLE_ORDER_STATUSES,
  escrowStateOf,
  LISTING_STATUSES,
  listingTransitions,
  ORDER_STATUSES,
  orderTransitions,
  orderStatusAliases,
  OrderStatus,
  TERMINAL_ORDER_STATUSES,
} from './index.js';

function reachable<S extends string>(edges: readonly { from: S | null; to: S }[]): Set<S> {
  const seen = new Set<S>(edges.filter((e) => e.from === null).map((e) => e.to));
  let grew = true;
  while (grew) {
    grew = false;
    for (const e of edges) {
      if (e.from !== null && seen.has(e.from) && !seen.has(e.to)) {
        seen.add(e.to);
        grew = true;
      }
    }
  }
  return seen;
}

describe('order state table', () => {
  it('reaches every order status from creation', () => {
    expect([...reachable(orderTransitions)].sort()).toEqual([...ORDER_STATUSES].sort());
  });

  it('has no moves out of terminal states and a way out of every other state', () => {
    for (const status of ORDER_STATUSES) {
      const out = orderTransitions.filter((t) => t.from === status);
      if ((TERMINAL_ORDER_STATUSES as readonly string[]).includes(status)) expect(out, status).toEqual([]);
      else expect(out.length, status).toBeGreaterThan(0);
    }
  });

  it('starts in awaiting_payment and is deterministic per (from, action)', () => {
    const creation = (orderTransitions as readonly OrderTransition[]).filter((t) => t.from === null);
    expect(creation.filter((t) => t.milestone !== 'later').map((t) => t.to)).toEqual(['awaiting_payment']);
    // milestones 2..n of an order (issue 24) are created scheduled, and only they
    expect(creation.filter((t) => t.milestone === 'later').map((t) => t.to)).toEqual(['scheduled']);
    const pairs = orderTransitions.map((t) => `${t.from}:${t.action}`);
    expect(new Set(pairs).size).toBe(pairs.length);
  });

  it('follows the spec rows: seller delivers, buyer confirms, parties dispute', () => {
    const find = (from: string, action: string) => orderTransitions.find((t) => t.from === from && t.action === action);
    expect(find('in_progress', 'deliver')).toMatchObject({ to: 'delivered', by: ['seller'] });
    expect(find('delivered', 'confirm')).toMatchObject({ to: 'completed', by: ['buyer'] });
    expect(find('in_progress', 'dispute')?.to).toBe('disputed');
    expect(find('delivered', 'dispute')?.to).toBe('disputed');
    expect(find('disputed', 'resolve')).toMatchObject({ to: 'resolved', by: ['admin'] });
  });

  it('names only routes that exist in the orders router', () => {
    for (const t of orderTransitions as readonly OrderTransition[]) {
      if (t.route) expect(Object.keys(contract.orders), t.route).toContain(t.route);
    }
  });

  it('maps every status to an escrow state and keeps spec aliases out of the enum', () => {
    for (const status of ORDER_STATUSES) expect(ESCROW_STATES).toContain(escrowStateOf[status]);
    for (const alias of Object.keys(orderStatusAliases)) expect(OrderStatus.safeParse(alias).success).toBe(false);
    for (const target of Object.values(orderStatusAliases)) expect(ORDER_STATUSES).toContain(target);
  });
});

describe('order lifecycle columns', () => {
  const rows = orderTransitions as readonly OrderTransition[];

  it('emits one of the nine order events on every row, and every event has a row', () => {
    expect([...ORDER_EVENTS].sort()).toEqual(
      [
        'order.auto_released',
        'order.completed',
        'order.created',
        'order.delivered',
        'order.disputed',
        'order.expired',
        'order.funded',
        'order.refunded',
        'order.resolved',
      ].sort(),
    );
    // a row of a later milestone only (issue 24) may emit a milestone.* event instead
    for (const t of rows) expect(t.milestone === 'later' ? [...ORDER_EVENTS, ...MILESTONE_EVENTS] : ORDER_EVENTS, `${t.from}:${t.action}`).toContain(t.emits);
    expect([...new Set(rows.map((t) => t.emits).filter((e) => e.startsWith('order.')))].sort()).toEqual([...ORDER_EVENTS].sort());
  });

  it('names each escrow instruction it uses once per action, and uses every one', () => {
    const byAction = new Map<string, Set<string>>();
    for (const t of rows) if (t.instruction) byAction.set(t.action, (byAction.get(t.action) ?? new Set()).add(t.instruction));
    for (const [action, ixs] of byAction) expect([...ixs], action).toHaveLength(1);
    expect([...new Set(rows.map((t) => t.instruction).filter(Boolean))].sort()).toEqual([...ESCROW_INSTRUCTIONS].sort());
  });

  it('moves the listing along listingTransitions: each listing effect is a system row leaving the state the order found it in', () => {
    const system = listingTransitions.filter((l) => l.by === 'system');
    const effects = rows.flatMap((t) => [t.listing, t.listingOnFullRefund].filter((e): e is NonNullable<typeof e> => !!e));
    expect([...new Set(effects)].sort()).toEqual(system.map((l) => l.event).sort());
    // funding reserves an available listing; every later effect starts from reserved
    for (const t of rows) {
      for (const e of [t.listing, t.listingOnFullRefund].filter(Boolean)) {
        const row = system.find((l) => l.event === e)!;
        expect(row.from, `${t.action} -> ${e}`).toBe(t.action === 'pay' ? 'available' : 'reserved');
      }
    }
  });

  it('gives every transition into one status the same listing effect (the effect follows the status)', () => {
    for (const status of ORDER_STATUSES) {
      const into = rows.filter((t) => t.to === status);
      expect(new Set(into.map((t) => `${t.listing}/${t.listingOnFullRefund}`)).size, status).toBeLessThanOrEqual(1);
    }
  });

  it('states the spec\'s timing rules and their clocks', () => {
    const find = (from: string, action: string) => rows.find((t) => t.from === from && t.action === action)!;
    expect(find('awaiting_payment', 'pay')).toMatchObject({ paymentSource: 'wallet', timing: { clock: 'service', at: 'payment_expires_at', allowed: 'before' } });
    expect(find('awaiting_payment', 'expire').timing).toMatchObject({ clock: 'service', at: 'payment_expires_at', allowed: 'from', grace: 'payment' });
    expect(find('in_progress', 'refund').timing).toEqual({ clock: 'chain', at: 'delivery_deadline', allowed: 'after', only: 'buyer', refusal: 'forbidden' });
    expect(find('delivered', 'dispute').timing).toMatchObject({ clock: 'chain', at: 'auto_release_at', allowed: 'before', refusal: 'invalid-state-transition' });
    expect(find('delivered', 'auto_release').timing).toMatchObject({ clock: 'chain', at: 'auto_release_at', allowed: 'from' });
    // deadline rule (issue 20 item 11, the escrow program's Order::buyer_may_refund): after a missed
    // delivery_deadline the buyer refunds a late delivery until auto-release, and a disputed order
    expect(find('delivered', 'refund')).toMatchObject({
      by: ['seller', 'buyer'],
      timing: { clock: 'chain', at: 'delivery_deadline', allowed: 'after', late: true, until: 'auto_release_at', only: 'buyer', refusal: 'forbidden' },
    });
    expect(find('disputed', 'refund')).toMatchObject({
      by: ['seller', 'buyer'],
      timing: { clock: 'chain', at: 'delivery_deadline', allowed: 'after', late: true, only: 'buyer', refusal: 'forbidden' },
    });
    expect(find('disputed', 'refund').timing).not.toHaveProperty('until');
    // auto_release_at exists only once delivered: no rule reads it from an earlier state
    for (const t of rows) if (t.timing?.at === 'auto_release_at' || t.timing?.until === 'auto_release_at') expect(t.from).toBe('delivered');
  });

  it('lets the buyer review completed and resolved orders, which are terminal', () => {
    expect([...REVIEWABLE_ORDER_STATUSES].sort()).toEqual(['completed', 'resolved']);
    for (const s of REVIEWABLE_ORDER_STATUSES) expect(TERMINAL_ORDER_STATUSES).toContain(s);
  });
});

describe('listing state table', () => {
  it('emits one of the listing events on every row, and every event has a row', () => {
    for (const t of listingTransitions) expect(LISTING_EVENTS).toContain(t.emits);
    expect([...new Set(listingTransitions.map((t) => t.emits))].sort()).toEqual([...LISTING_EVENTS].sort());
  });
  it('is deterministic per (from, event) and lets the seller move only between editable statuses', () => {
    const pairs = listingTransitions.map((t) => `${t.from}:${t.event}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    for (const t of listingTransitions.filter((l) => l.by === 'seller' && l.from !== null)) {
      expect(LISTING_EDITABLE_STATUSES).toContain(t.from);
      expect(LISTING_EDITABLE_STATUSES).toContain(t.to);
    }
  });
  it('reaches every listing status from creation', () => {
    expect([...reachable(listingTransitions)].sort()).toEqual([...LISTING_STATUSES].sort());
  });
  it('has sold as its only terminal state', () => {
    const terminal = LISTING_STATUSES.filter((s) => !listingTransitions.some((t) => t.from === s));
    expect(terminal).toEqual(['sold']);
  });
});
