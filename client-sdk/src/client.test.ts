import { describe, expect, it } from 'vitest';
import { createBazaarClient, isProblem } from './index.js';

/** A recording fetch stub (no server): returns a canned JSON response. */
function stubFetch(status: number, body: unknown, contentType = 'application/json') {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(url), init: init ?? {} });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': contentType } });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const headerOf = (init: RequestInit, name: string) => new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).get(name);

describe('createBazaarClient', () => {
  it('prefixes /api/v1, sends the bearer token once set, and types the body by status', async () => {
    const { fetch, calls } = stubFetch(200, { data: [{ slug: 'design', name: 'Design', listing_count: 2 }] });
    const client = createBazaarClient({ baseUrl: 'http://localhost:3000/', fetch });
    await client.marketplace.listCategories();
    expect(calls[0]!.url).toBe('http://localhost:3000/api/v1/categories');
    expect(headerOf(calls[0]!.init, 'authorization')).toBeNull();

    client.setToken('jwt-123');
    const res = await client.marketplace.listCategories();
    expect(headerOf(calls[1]!.init, 'authorization')).toBe('Bearer jwt-123');
    if (res.status === 200) expect(res.body.data[0]!.slug).toBe('design');
    else throw new Error('unexpected status');
  });

  it('sends X-API-Key and the idempotency-key header, and query parameters', async () => {
    const { fetch, calls } = stubFetch(200, { data: [], next_cursor: null });
    const client = createBazaarClient({ baseUrl: 'http://api.test', apiKey: 'key-1', fetch });
    await client.marketplace.searchListings({ query: { query: 'logo', sort: 'price_asc', limit: 5 } });
    const url = new URL(calls[0]!.url);
    expect(url.pathname).toBe('/api/v1/marketplace/search');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ query: 'logo', sort: 'price_asc', limit: '5' });
    expect(headerOf(calls[0]!.init, 'x-api-key')).toBe('key-1');

    await client.orders.createOrder({
      headers: { 'idempotency-key': 'k-1' },
      body: { listing_id: '7f0c4a4e-5b7e-4c36-9a0e-0d1c5a8f2b11' },
    });
    expect(headerOf(calls[1]!.init, 'idempotency-key')).toBe('k-1');
    expect(JSON.parse(String(calls[1]!.init.body))).toEqual({ listing_id: '7f0c4a4e-5b7e-4c36-9a0e-0d1c5a8f2b11' });
  });

  it('milestones (issue 24): funds the next milestones with an Idempotency-Key, acts on one milestone by index, ends an order', async () => {
    const id = '7f0c4a4e-5b7e-4c36-9a0e-0d1c5a8f2b11';
    const { fetch, calls } = stubFetch(200, { order_id: id, milestones: [2, 3], transaction: 'AA==', solana_pay_url: 'solana:x', expires_at: '2026-11-26T00:00:00Z', payment_expires_at: '2026-11-26T00:00:00Z' });
    const client = createBazaarClient({ baseUrl: 'http://api.test', token: 't', fetch });
    const funded = await client.orders.fundOrderMilestones({ params: { order_id: id }, headers: { 'idempotency-key': 'k-2' }, body: { milestones: [2, 3] } });
    expect(new URL(calls[0]!.url).pathname).toBe(`/api/v1/orders/${id}/milestones/fund`);
    expect(headerOf(calls[0]!.init, 'idempotency-key')).toBe('k-2');
    expect(JSON.parse(String(calls[0]!.init.body))).toEqual({ milestones: [2, 3] });
    if (funded.status === 200) expect(funded.body.milestones).toEqual([2, 3]);
    await client.orders.confirmMilestone({ params: { order_id: id, index: 2 } });
    expect(new URL(calls[1]!.url).pathname).toBe(`/api/v1/orders/${id}/milestones/2/confirm`);
    await client.orders.disputeMilestone({ params: { order_id: id, index: 3 }, body: { reason: 'the second part is missing' } });
    expect(new URL(calls[2]!.url).pathname).toBe(`/api/v1/orders/${id}/milestones/3/dispute`);
    await client.orders.endOrder({ params: { order_id: id } });
    expect(new URL(calls[3]!.url).pathname).toBe(`/api/v1/orders/${id}/end`);
    expect(calls.map((c) => c.init.method)).toEqual(['POST', 'POST', 'POST', 'POST']);
  });

  it('parses application/problem+json error bodies', async () => {
    const problem = {
      type: 'https://bazaar.dev/problems/not-found',
      title: 'Not found',
      status: 404,
      detail: 'order not found',
      instance: '/api/v1/orders/x',
      request_id: 'r1',
    };
    const { fetch } = stubFetch(404, problem, 'application/problem+json');
    const client = createBazaarClient({ baseUrl: 'http://api.test', token: 't', fetch });
    const res = await client.orders.getOrder({ params: { order_id: '7f0c4a4e-5b7e-4c36-9a0e-0d1c5a8f2b11' } });
    expect(res.status).toBe(404);
    expect(isProblem(res.body)).toBe(true);
    if (res.status === 404) expect(res.body.detail).toBe('order not found');
  });

  it('types listing packages and the package an order buys (issue 24)', async () => {
    const listing = {
      listing_id: '7f0c4a4e-5b7e-4c36-9a0e-0d1c5a8f2b11',
      price: 10,
      price_base_units: '10000000',
      duration: 2,
      packages: [
        { key: 'basic', name: 'Basic', price: 10, price_base_units: '10000000', delivery_days: 2, revisions: 0, description: 'b', milestones: null },
      ],
      milestones: null,
    };
    const { fetch, calls } = stubFetch(201, listing);
    const client = createBazaarClient({ baseUrl: 'http://api.test', token: 't', fetch });
    const res = await client.listings.createListing({
      body: {
        title: 'Logo design',
        description: 'Logos',
        currency: 'USDC',
        category: 'design',
        // price and duration come from the cheapest package
        packages: [
          { key: 'basic', name: 'Basic', price: 10, delivery_days: 2, revisions: 0, description: 'b' },
          {
            key: 'premium',
            name: 'Premium',
            price: 30,
            delivery_days: 5,
            revisions: 3,
            description: 'p',
            milestones: [
              { title: 'Draft', amount: 10, delivery_days: 2 },
              { title: 'Final', amount: 20, delivery_days: 3 },
            ],
          },
        ],
      },
    });
    expect(JSON.parse(String(calls[0]!.init.body)).packages).toHaveLength(2);
    if (res.status !== 201) throw new Error('unexpected status');
    const cheapest: number = res.body.price;
    const first: 'basic' | 'standard' | 'premium' | undefined = res.body.packages[0]?.key;
    const revisions: number | undefined = res.body.packages[0]?.revisions;
    expect([cheapest, first, revisions]).toEqual([10, 'basic', 0]);

    await client.orders.createOrder({
      headers: { 'idempotency-key': 'k-2' },
      body: { listing_id: listing.listing_id, package: 'premium' },
    });
    expect(JSON.parse(String(calls[1]!.init.body))).toEqual({ listing_id: listing.listing_id, package: 'premium' });
    // @ts-expect-error a package key the contract does not know does not compile
    const bad: Parameters<typeof client.orders.createOrder>[0]['body']['package'] = 'gold';
    expect(bad).toBe('gold');
  });
});
