import { describe, expect, it } from 'vitest';
import {
  contract,
  DEFAULT_LISTING_UNITS,
  ESCROW_INSTRUCTIONS,
  listingMoveOnOrderEvent,
  listingReadStatus,
  listingStatusOfUnits,
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

  it('emits one of the order events on every row, and every event has a row', () => {
    expect([...ORDER_EVENTS].sort()).toEqual(
      [
        'extension.accepted',
        'extension.declined',
        'extension.expired',
        'extension.proposed',
        'revision.requested',
        'settlement.accepted',
        'settlement.expired',
        'settlement.proposed',
        'settlement.withdrawn',
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
    expect([...new Set(rows.map((t) => t.emits).filter((e) => !e.startsWith('milestone.')))].sort()).toEqual([...ORDER_EVENTS].sort());
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
      // a revision sends a funded order back to work (delivered -> in_progress): its listing is reserved already
      const into = rows.filter((t) => t.to === status && t.from !== t.to && t.action !== 'request_revision');
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

describe('agreement rows (issue 24)', () => {
  const rows = orderTransitions as readonly OrderTransition[];
  const find = (from: string, action: string) => rows.find((t) => t.from === from && t.action === action);

  it('a revision returns a delivered order to work, for the buyer, before auto_release_at, within the included revisions', () => {
    expect(find('delivered', 'request_revision')).toMatchObject({
      to: 'in_progress',
      by: ['buyer'],
      requires: 'revision_left',
      instruction: 'request_revision',
      timing: { clock: 'chain', at: 'auto_release_at', allowed: 'before' },
    });
    expect(rows.filter((t) => t.action === 'request_revision').map((t) => t.from)).toEqual(['delivered']);
  });

  it('an extension is the seller\'s proposal and the buyer\'s consent, in progress only; only the consent is on chain', () => {
    expect(find('in_progress', 'propose_extension')).toMatchObject({ to: 'in_progress', by: ['seller'] });
    expect(find('in_progress', 'propose_extension')).not.toHaveProperty('instruction');
    expect(find('in_progress', 'accept_extension')).toMatchObject({ to: 'in_progress', by: ['buyer'], instruction: 'extend_deadline', requires: 'extension_pending' });
    expect(find('in_progress', 'decline_extension')).toMatchObject({ by: ['buyer'], requires: 'extension_pending' });
    for (const a of ['propose_extension', 'accept_extension', 'decline_extension']) expect(rows.filter((t) => t.action === a).map((t) => t.from)).toEqual(['in_progress']);
  });

  it('a settlement is proposed, accepted by the other party and withdrawn on chain from every funded state, a dispute included; accepted it resolves like an arbiter\'s split', () => {
    for (const from of ['in_progress', 'delivered', 'disputed']) {
      expect(find(from, 'propose_settlement')).toMatchObject({ to: from, by: ['buyer', 'seller'], instruction: 'propose_settlement' });
      expect(find(from, 'accept_settlement')).toMatchObject({
        to: 'resolved',
        by: ['buyer', 'seller'],
        requires: 'settlement_by_other',
        instruction: 'accept_settlement',
        listing: find('disputed', 'resolve')!.listing,
        listingOnFullRefund: find('disputed', 'resolve')!.listingOnFullRefund,
      });
      expect(find(from, 'withdraw_settlement')).toMatchObject({ to: from, requires: 'settlement_by_self', instruction: 'withdraw_settlement' });
      expect(find(from, 'expire_settlement')).toMatchObject({ to: from, by: ['system'], requires: 'settlement_expired' });
    }
    // the arbiter never accepts a settlement: it resolves
    for (const t of rows.filter((r) => r.action.endsWith('_settlement'))) expect(t.by).not.toContain('admin');
  });

  it('answers repeats of every agreement row by its Idempotency-Key, and every party row has a keyed route', () => {
    for (const t of rows.filter((r) => ['revision', 'extension', 'settlement'].includes(r.emits.split('.')[0]!))) {
      expect(t.repeat, `${t.from} ${t.action}`).toBe(t.by.includes('system') ? undefined : 'key');
      if (!t.by.includes('system')) expect((contract.orders as Record<string, { headers?: unknown }>)[t.route!]?.headers, t.action).toBeDefined();
    }
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

describe('listing status from capacity and stock (repeat sales)', () => {
  const units = (capacity: number, stock: number | null) => ({ capacity, stock });

  it('every system row of the listing table is the units rule at the defaults (capacity 1, stock 1): derived, not restated', () => {
    for (const row of listingTransitions.filter((t) => t.by === 'system')) {
      // the counts may lag the event: the rule counts the event's own order, so zero counts give the row too
      expect(listingMoveOnOrderEvent(row.event, { ...DEFAULT_LISTING_UNITS, paid: 0, sold: 0 }), row.event).toEqual({ from: row.from, to: row.to });
      // and with the counts as the orders trigger leaves them after the event
      const after = { order_funded: { paid: 1, sold: 0 }, order_completed: { paid: 0, sold: 1 }, order_resolved_partial: { paid: 0, sold: 1 } }[
        row.event as 'order_funded'
      ] ?? { paid: 0, sold: 0 };
      expect(listingMoveOnOrderEvent(row.event, { ...DEFAULT_LISTING_UNITS, ...after }), row.event).toEqual({ from: row.from, to: row.to });
    }
  });

  it('reads reserved while open orders fill the capacity, sold once sold orders reach the stock; an open order counts against the stock', () => {
    expect(listingStatusOfUnits({ ...units(3, 10), open: 2, sold: 0 })).toBe('available');
    expect(listingStatusOfUnits({ ...units(3, 10), open: 3, sold: 0 })).toBe('reserved');
    expect(listingStatusOfUnits({ ...units(3, 4), open: 1, sold: 3 })).toBe('reserved'); // the last unit is held
    expect(listingStatusOfUnits({ ...units(3, 4), open: 0, sold: 4 })).toBe('sold');
    expect(listingStatusOfUnits({ ...units(3, null), open: 2, sold: 1_000_000 })).toBe('available'); // unlimited
    expect(listingStatusOfUnits({ ...units(1, 5), open: 2, sold: 0 })).toBe('reserved'); // capacity lowered under the open orders
  });

  it('a sale with stock left frees its unit (reserved -> available); the last sale sells out; a refund returns the unit', () => {
    expect(listingMoveOnOrderEvent('order_completed', { ...units(2, 5), paid: 1, sold: 1 })).toEqual({ from: 'reserved', to: 'available' });
    expect(listingMoveOnOrderEvent('order_completed', { ...units(2, 2), paid: 0, sold: 2 })).toEqual({ from: 'reserved', to: 'sold' });
    expect(listingMoveOnOrderEvent('order_refunded', { ...units(2, 2), paid: 0, sold: 1 })).toEqual({ from: 'reserved', to: 'available' });
    expect(listingMoveOnOrderEvent('order_resolved_full', { ...units(3, null), paid: 2, sold: 7 })).toEqual({ from: 'reserved', to: 'available' });
    expect(listingMoveOnOrderEvent('order_funded', { ...units(3, null), paid: 2, sold: 0 })).toEqual({ from: 'available', to: 'available' });
  });

  it('what a listing reads: a stored unlisted or sold stays, a stored reserved reads reserved unless sold out, else the units decide', () => {
    const u = { capacity: 2, stock: 3, open: 0, paid: 0, sold: 0 };
    expect(listingReadStatus('unlisted', { ...u, open: 2 })).toBe('unlisted');
    expect(listingReadStatus('reserved', u)).toBe('reserved');
    expect(listingReadStatus('available', { ...u, open: 2 })).toBe('reserved');
    expect(listingReadStatus('reserved', { ...u, sold: 3 })).toBe('sold');
    expect(listingReadStatus('available', u)).toBe('available');
  });
});
