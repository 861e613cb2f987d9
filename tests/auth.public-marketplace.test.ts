/**
 * PUBLIC_MARKETPLACE=true opens, without a credential, exactly the routes whose contract access says
 * `public_marketplace: true` (metadata.access, contract/src/access.ts): never a route for its group or its
 * method. The old rule opened every GET of the listings and marketplace groups, so a seller-only read added
 * there later would have been readable by anyone.
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AppRoute } from '@ts-rest/core';
import { contract, problemResponses, type RouteMetadata } from '@bazaar/contract';
import type { TestApp } from './helpers/app.js';

// nothing that loads the server is imported statically: the test route must be in the group first
const API = '/api/v1';

/**
 * A seller-only read added to the listings group by a later change, as a test-only route: a GET, in
 * `contract.listings`, whose access is signed in with `listings:read` and no `public_marketplace`.
 * (Written out rather than built with `access.user(...)` so that it reads the same to the old middleware.)
 */
const sellerNotes = {
  method: 'GET',
  path: `${API}/listings/:listing_id/seller-notes`,
  pathParams: z.object({ listing_id: z.string() }),
  summary: 'Seller notes of a listing (test only)',
  responses: { 200: z.object({ notes: z.string() }), ...problemResponses(['unauthorized', 'not-found']) },
  metadata: {
    access: { auth: 'user', scope: 'listings:read' },
    auth: 'user',
    actors: ['seller'],
    problems: ['unauthorized', 'invalid-token', 'token-expired', 'insufficient-scope', 'cross-origin-refused', 'not-found'],
  } satisfies RouteMetadata,
} as unknown as AppRoute;
// added to the group before the auth middleware is loaded (security.ts reads the contract when imported)
(contract.listings as unknown as Record<string, AppRoute>).sellerNotes = sellerNotes;

/** A server with only the auth middleware in front of the test route, answering problems as the app does. */
async function serverWith(publicMarketplace: boolean) {
  const { authenticate } = await import('../server/src/http/security.js');
  const { errorHandler } = await import('../server/src/http/problem.js');
  const { createLogger } = await import('../server/src/logger.js');
  const app = express();
  // no credential is sent: the auth service is never asked
  app.get('/api/v1/listings/:listing_id/seller-notes', authenticate({} as never, { publicMarketplace }, sellerNotes), (_req, res) => {
    res.json({ notes: 'only for the seller' });
  });
  app.get('/api/v1/listings/:listing_id', authenticate({} as never, { publicMarketplace }, contract.listings.getListing), (_req, res) => {
    res.json({ listing: 'anyone may read it' });
  });
  app.use(errorHandler(createLogger('silent')));
  return app;
}

describe('PUBLIC_MARKETPLACE opens routes by their access, not by their group', () => {
  it('a GET added to the listings group without public_marketplace: true is not readable anonymously', async () => {
    const app = await serverWith(true);
    const anonymous = await request(app).get(`${API}/listings/${randomUUID()}/seller-notes`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.type).toBe('https://bazaar.dev/problems/unauthorized');
    // while the listing read the contract marks public_marketplace is open, in the same group
    const listing = await request(app).get(`${API}/listings/${randomUUID()}`);
    expect(listing.status).toBe(200);
    // and closed without the switch
    expect((await request(await serverWith(false)).get(`${API}/listings/${randomUUID()}`)).status).toBe(401);
  });
});

describe('the real app with PUBLIC_MARKETPLACE=true: anonymous requests reach exactly the routes marked public or public_marketplace', () => {
  let t: TestApp;
  beforeAll(async () => {
    const { createTestApp } = await import('./helpers/app.js');
    t = await createTestApp({ config: { publicMarketplace: true } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const routes = Object.entries(contract).flatMap(([group, rs]) =>
    Object.entries(rs as Record<string, AppRoute>)
      .filter(([key]) => key !== 'sellerNotes')
      .map(([key, r]) => [`${group}.${key}`, r] as const),
  );

  it.each(routes)('%s', async (_key, route) => {
    const a = (route.metadata as RouteMetadata).access;
    const open = a.auth === 'public' || (a.auth === 'user' && a.public_marketplace === true);
    const path = route.path.replace(/:(\w+)/g, (_m, name: string) => (name.endsWith('wallet') ? Keypair.generate().publicKey.toBase58() : randomUUID()));
    const req = request(t.app)[route.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete'](path);
    const res = route.method === 'GET' ? await req : await req.send({});
    if (open) expect(res.status, `${route.method} ${route.path}: ${JSON.stringify(res.body)}`).not.toBe(401);
    else {
      expect(res.status, `${route.method} ${route.path}`).toBe(401);
      expect(res.body.type).toBe('https://bazaar.dev/problems/unauthorized');
    }
  });

  it('serves /openapi.json with an anonymous alternative on exactly those operations', async () => {
    const served = (await request(t.app).get('/openapi.json')).body as { paths: Record<string, Record<string, { security: unknown[]; operationId: string }>> };
    for (const [, route] of routes) {
      const a = (route.metadata as RouteMetadata).access;
      const op = served.paths[route.path.replace(/:(\w+)/g, '{$1}')]![route.method.toLowerCase()]!;
      const anonymous = op.security.some((s) => JSON.stringify(s) === '{}');
      expect(anonymous, op.operationId).toBe(a.auth === 'user' && a.public_marketplace === true);
    }
  });
});
