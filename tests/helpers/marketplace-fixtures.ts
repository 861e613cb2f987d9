/**
 * Fixtures shared by the listings, marketplace and reviews HTTP suites: an app over PGlite with the
 * in-memory FakeChain, logged-in users, listings created through the API, and orders inserted
 * straight into the database (the order lifecycle is another module's job).
 */
import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import request from 'supertest';
import { expect } from 'vitest';
import { createTestApp, loginAs } from './app.js';
import { FakeChain } from './fake-chain.js';

export const API = '/api/v1';
export const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

export interface TestUser {
  userId: string;
  wallet: string;
  headers: Record<string, string>;
}

export async function setup(
  opts: {
    chain?: unknown;
    config?: Parameters<typeof createTestApp>[0] extends infer O ? (O extends { config?: infer C } ? C : never) : never;
    webhooks?: Parameters<typeof createTestApp>[0] extends infer O ? (O extends { webhooks?: infer W } ? W : never) : never;
    metrics?: Parameters<typeof createTestApp>[0] extends infer O ? (O extends { metrics?: infer M } ? M : never) : never;
  } = {},
) {
  const chain = (opts.chain as FakeChain | undefined) ?? new FakeChain();
  const t = await createTestApp({ chain: chain as never, config: opts.config, webhooks: opts.webhooks, ...(opts.metrics ? { metrics: opts.metrics } : {}) });
  return { t, app: t.app, db: t.ctx.db, chain };
}

export async function user(t: TestApp): Promise<TestUser> {
  const kp = Keypair.generate();
  const session = await loginAs(t, kp);
  return normalise(session, kp.publicKey.toBase58());
}

/** loginAs' result as { userId, wallet, headers } whatever its exact shape. */
function normalise(session: unknown, wallet: string): TestUser {
  const s = session as Record<string, unknown> & { user?: { user_id?: string; id?: string } };
  const token = (s.token ?? s.access_token ?? s.accessToken) as string | undefined;
  const headers = (s.headers as Record<string, string> | undefined) ?? { authorization: `Bearer ${token}` };
  const userId = (s.userId ?? s.user_id ?? s.user?.user_id ?? s.user?.id) as string;
  return { userId, wallet, headers };
}

export const listingBody = (over: Record<string, unknown> = {}) => ({
  title: 'Logo design in three days',
  description: 'A clean, modern logo with two rounds of revisions.',
  price: 25.5,
  currency: 'USDC',
  category: 'design',
  duration: 3,
  ...over,
});

export async function createListing(app: TestApp['app'], u: TestUser, over: Record<string, unknown> = {}) {
  const res = await request(app).post(`${API}/listings`).set(u.headers).send(listingBody(over));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { listing_id: string; token_mint_address: string; [k: string]: unknown };
}

export async function countRows(db: TestApp['ctx']['db'], table: 'listings' | 'reviews' | 'orders'): Promise<number> {
  const rows = await db.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM ${table}`);
  return Number(rows[0]!.n);
}

/** Set a listing's status directly (what the order lifecycle does through the service). */
export async function setListingStatus(db: TestApp['ctx']['db'], listingId: string, status: string) {
  await db.$executeRaw`UPDATE listings SET status = ${status} WHERE id = ${listingId}::uuid`;
}

/** Insert an order row directly (buyer, seller, listing must exist). */
export async function insertOrder(
  db: TestApp['ctx']['db'],
  o: {
    listingId: string;
    buyerId: string;
    sellerId: string;
    status: string;
    /** custodial: the service paid from the buyer's balance, `buyerWallet` is then the buyer's deposit address */
    paymentSource?: 'wallet' | 'custodial';
    /** the wallet that paid (default null: the buyer's account wallet) */
    buyerWallet?: string;
  },
): Promise<string> {
  const id = randomUUID();
  await db.$executeRaw`
    INSERT INTO orders (id, listing_id, buyer_id, seller_id, status, amount_base_units, currency, payment_mint, decimals,
                        fee_bps, escrow_address, vault_address, delivery_deadline, review_window_seconds,
                        payment_expires_at, updated_at, payment_source, buyer_wallet)
    VALUES (${id}::uuid, ${o.listingId}::uuid, ${o.buyerId}::uuid, ${o.sellerId}::uuid, ${o.status}, 25500000, 'USDC',
            'mint', 6, 100, ${'escrow-' + id}, ${'vault-' + id}, now() + interval '3 days', 259200,
            now() + interval '15 minutes', now(), ${o.paymentSource ?? 'wallet'}, ${o.buyerWallet ?? null})`;
  return id;
}

/** Assert a problem+json answer: status, type slug and (optionally) the field paths in `errors`. */
export function expectProblem(res: request.Response, status: number, slug: string, paths?: string[]) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body.type).toBe(PROBLEM(slug));
  if (paths) {
    const got = ((res.body.errors ?? []) as Array<{ path: string }>).map((e) => e.path);
    for (const p of paths) expect(got, JSON.stringify(res.body.errors)).toContain(p);
  }
}

/** Follow next_cursor until the end; returns every page's data. */
export async function walk(app: TestApp['app'], u: TestUser, url: string, limit = 20) {
  const pages: Array<Array<Record<string, unknown>>> = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const sep = url.includes('?') ? '&' : '?';
    const res: request.Response = await request(app)
      .get(`${url}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      .set(u.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push(res.body.data);
    cursor = res.body.next_cursor;
    if (!cursor) break;
  }
  return pages;
}
