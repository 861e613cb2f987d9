import { describe, expect, it } from 'vitest';
import {
  contract,
  ESCROW_STATES,
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
    expect(orderTransitions.filter((t) => t.from === null).map((t) => t.to)).toEqual(['awaiting_payment']);
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
    for (const t of orderTransitions) {
      if (t.route) expect(Object.keys(contract.orders), t.route).toContain(t.route);
    }
  });

  it('maps every status to an escrow state and keeps spec aliases out of the enum', () => {
    for (const status of ORDER_STATUSES) expect(ESCROW_STATES).toContain(escrowStateOf[status]);
    for (const alias of Object.keys(orderStatusAliases)) expect(OrderStatus.safeParse(alias).success).toBe(false);
    for (const target of Object.values(orderStatusAliases)) expect(ORDER_STATUSES).toContain(target);
  });
});

describe('listing state table', () => {
  it('reaches every listing status from creation', () => {
    expect([...reachable(listingTransitions)].sort()).toEqual([...LISTING_STATUSES].sort());
  });
  it('has sold as its only terminal state', () => {
    const terminal = LISTING_STATUSES.filter((s) => !listingTransitions.some((t) => t.from === s));
    expect(terminal).toEqual(['sold']);
  });
});
