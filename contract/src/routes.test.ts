import { isAppRoute, isAppRouteOtherResponse, type AppRoute, type AppRouter } from '@ts-rest/core';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  access,
  authProblems,
  commonProblems,
  contract,
  PROBLEM_CONTENT_TYPE,
  Problem,
  problemTypes,
  MONEY_CAPABILITIES,
  MONEY_SCOPES,
  OPERATOR_ROLES,
  OPERATOR_SCOPES,
  roleOfScope,
  requiredScopes,
  routeAccess,
  routeScopes,
  TOKEN_SCOPES,
  type RouteAccess,
  type RouteKey,
  type RouteMetadata,
} from './index.js';
import { buildRouteTable, ROUTE_TABLE_BEGIN, ROUTE_TABLE_END } from '../scripts/route-table.js';

/** The generated section of docs/design.md ("Contract route keys"), markers excluded. */
function designRouteTable(): string {
  const md = readFileSync(new URL('../../docs/design.md', import.meta.url), 'utf8');
  const begin = md.indexOf(ROUTE_TABLE_BEGIN);
  const end = md.indexOf(ROUTE_TABLE_END);
  expect(begin, 'docs/design.md has the route-table markers').toBeGreaterThan(-1);
  return md.slice(begin + ROUTE_TABLE_BEGIN.length, end).trim();
}

function flatten(router: AppRouter, prefix = ''): [string, AppRoute][] {
  return Object.entries(router).flatMap(([key, value]) =>
    isAppRoute(value as AppRoute) ? [[prefix + key, value as AppRoute] as [string, AppRoute]] : flatten(value as AppRouter, `${prefix}${key}.`),
  );
}
const routes = flatten(contract);

describe('contract routes', () => {
  it('names the personal access token scope of every authenticated route (routeScopes), and only of those', () => {
    const authenticated = routes.filter(([, r]) => (r.metadata as RouteMetadata).auth !== 'public').map(([k]) => k);
    expect(Object.keys(routeScopes).sort()).toEqual(authenticated.sort());
    for (const [, scope] of Object.entries(routeScopes)) if (scope !== null) expect(Object.keys(TOKEN_SCOPES)).toContain(scope);
  });

  it('routeAccess: one entry per route; public exactly where auth is public; on operator routes no token, or only the operator scope of the route\'s role', () => {
    expect(Object.keys(routeAccess).sort()).toEqual(routes.map(([k]) => k).sort());
    for (const [key, route] of routes) {
      const access: RouteAccess = routeAccess[key as RouteKey];
      const meta = route.metadata as RouteMetadata;
      expect(access.scope === 'public', key).toBe(meta.auth === 'public');
      if (meta.access.auth === 'role') {
        if (access.scope !== null) expect(roleOfScope(access.scope as string), key).toBe(meta.access.role);
        expect(access.money, key).toBeNull();
      } else if (access.scope !== null && access.scope !== 'public') {
        // an operator scope opens operator routes only
        expect(roleOfScope(access.scope), key).toBeNull();
      }
    }
    // every operator route of the contract today: the admins' role management, the arbiter's resolve
    const operator = routes.filter(([, r]) => (r.metadata as RouteMetadata).access.auth === 'role').map(([k]) => k).sort();
    expect(operator).toEqual(expect.arrayContaining(['orders.resolveDispute', 'orders.resolveMilestone', 'users.grantRole', 'users.revokeRole']));
    expect(routeAccess['users.grantRole'].scope).toBeNull();
    expect(routeAccess['users.revokeRole'].scope).toBeNull();
  });

  it('access.admin() is access.role(\'admin\') with no token; each operator scope names a role of OPERATOR_ROLES', () => {
    expect(access.admin()).toEqual(access.role('admin'));
    expect(access.role('arbiter', 'disputes:resolve')).toEqual({ auth: 'role', role: 'arbiter', scope: 'disputes:resolve' });
    for (const [scope, role] of Object.entries(OPERATOR_SCOPES)) {
      expect(Object.keys(TOKEN_SCOPES), scope).toContain(scope);
      expect(OPERATOR_ROLES, scope).toContain(role);
    }
  });

  it('every money path needs a money scope, and the money scopes are exactly those of the money capabilities', () => {
    const moneyRoutes = Object.entries(routeAccess as Record<string, RouteAccess>).filter(([, a]) => a.money);
    expect(moneyRoutes.map(([k, a]) => `${k}:${a.money!.capability}`).sort()).toEqual([
      'offers.acceptOffer:custodial-payment',
      'orders.acceptMilestoneSettlement:escrow-settlement',
      'orders.acceptSettlement:escrow-settlement',
      'orders.confirmMilestone:escrow-release',
      'orders.confirmOrder:escrow-release',
      'orders.createOrder:custodial-payment',
      'orders.proposeMilestoneSettlement:escrow-settlement',
      'orders.proposeSettlement:escrow-settlement',
      'orders.refundMilestone:escrow-refund',
      'orders.refundOrder:escrow-refund',
      'wallet.createWithdrawal:custody-withdrawal',
    ]);
    expect([...new Set(Object.values(MONEY_CAPABILITIES).map((c) => c.scope))].sort()).toEqual([...MONEY_SCOPES].sort());
    for (const [key, access] of moneyRoutes) {
      // a body that triggers the rule (any value outside `absent_or`) requires the capability's scope
      const body = access.money!.unless ? { [access.money!.unless.body_field]: 'custodial' } : {};
      expect(requiredScopes(key as RouteKey, body), key).toContain(MONEY_CAPABILITIES[access.money!.capability].scope);
    }
  });

  it('createOrder: paying from the custodial balance needs payments:write, paying from a wallet does not', () => {
    expect(requiredScopes('orders.createOrder', { listing_id: 'x' })).toEqual(['orders:write']);
    expect(requiredScopes('orders.createOrder', { listing_id: 'x', payment_source: 'wallet' })).toEqual(['orders:write']);
    expect(requiredScopes('orders.createOrder', { listing_id: 'x', payment_source: 'custodial' })).toEqual(['orders:write', 'payments:write']);
    // an unknown value errs on the side of the money scope (the schema then refuses it)
    expect(requiredScopes('orders.createOrder', { payment_source: 'Custodial' })).toEqual(['orders:write', 'payments:write']);
    expect(requiredScopes('orders.createOrder', { payment_source: ['wallet'] })).toEqual(['orders:write', 'payments:write']);
    expect(requiredScopes('orders.createOrder', undefined)).toEqual(['orders:write']);
    // the field the rule reads is a field of the body, and the values it exempts are ones the schema accepts
    const rule = (routeAccess['orders.createOrder'] as RouteAccess).money!.unless!;
    const shape = (contract.orders.createOrder.body as unknown as z.ZodEffects<z.ZodObject<z.ZodRawShape>> | z.ZodObject<z.ZodRawShape>);
    const object = 'shape' in shape ? shape : (shape as z.ZodEffects<z.ZodObject<z.ZodRawShape>>).innerType();
    for (const v of rule.absent_or) expect(object.shape[rule.body_field]!.safeParse(v).success).toBe(true);
    expect(requiredScopes('orders.confirmOrder', undefined)).toEqual(['orders:write', 'payments:write']);
    expect(requiredScopes('orders.refundOrder', undefined)).toEqual(['orders:write', 'payments:write']);
    expect(requiredScopes('wallet.createWithdrawal', {})).toEqual(['wallet:write']);
    // the arbiter's operator scope (issue 25); role management takes no token
    expect(requiredScopes('orders.resolveDispute', {})).toEqual(['disputes:resolve']);
    expect(requiredScopes('users.grantRole', undefined)).toBeNull();
    expect(requiredScopes('auth.verifyLogin', {})).toBe('public');
  });

  it('docs/design.md\'s route table is the one generated from the contract (run npm run openapi:generate)', () => {
    // the contract is the list of routes: the document's table is generated from it, one row per route
    const table = designRouteTable();
    expect(table).toBe(buildRouteTable());
    const rows = table.split('\n').slice(2);
    expect(rows.map((r) => r.split(' | ')[0]!.slice(2))).toEqual(routes.map(([k]) => k));
    for (const [key, route] of routes) {
      expect(route.path.startsWith('/api/v1/'), key).toBe(true);
      const row = rows.find((r) => r.startsWith(`| ${key} |`))!;
      expect(row, key).toContain(`| ${route.method} ${route.path.slice('/api/v1'.length).replace(/:(\w+)/g, '{$1}')} |`);
      expect((route.metadata as RouteMetadata).auth, key).toBe((route.metadata as RouteMetadata).access.auth);
    }
  });

  it('PUBLIC_MARKETPLACE opens only signed-in GET routes that say so (metadata.access.public_marketplace), never by group', () => {
    const opened = routes.filter(([, r]) => {
      const a = (r.metadata as RouteMetadata).access;
      return a.auth === 'user' && a.public_marketplace === true;
    });
    for (const [key, route] of opened) {
      expect(route.method, key).toBe('GET');
      expect(routeAccess[key as RouteKey].scope, key).toBe('listings:read');
    }
    // a seller-only read is not opened by being in the listings group: every opened route is a read anyone signed in may do
    for (const [key, route] of opened) expect((route.metadata as RouteMetadata).actors, key).toBeUndefined();
    expect(opened.length).toBeGreaterThan(0);
  });

  it('has unique route keys (operationIds) and unique method+path pairs', () => {
    const keys = routes.map(([k]) => k.split('.').pop());
    expect(new Set(keys).size).toBe(keys.length);
    const endpoints = routes.map(([, r]) => `${r.method} ${r.path}`);
    expect(new Set(endpoints).size).toBe(endpoints.length);
  });

  it.each(routes)('%s has a summary, a description and exactly one success status', (_key, route) => {
    expect(route.summary?.length).toBeGreaterThan(5);
    expect(route.description?.length).toBeGreaterThan(20);
    expect(route.strictStatusCodes).toBe(true);
    const success = Object.keys(route.responses).filter((s) => Number(s) < 400);
    expect(success).toHaveLength(1);
    expect(['200', '201', '202']).toContain(success[0]);
  });

  it.each(routes)('%s declares a problem+json response for each problem it can return', (_key, route) => {
    const meta = route.metadata as RouteMetadata;
    const slugs = [...commonProblems, ...meta.problems];
    const expectedStatuses = new Set(slugs.map((s) => String(problemTypes[s].status)));
    const errorStatuses = Object.keys(route.responses).filter((s) => Number(s) >= 400);
    expect(new Set(errorStatuses)).toEqual(expectedStatuses);
    for (const status of errorStatuses) {
      const response = route.responses[Number(status)];
      expect(isAppRouteOtherResponse(response), status).toBe(true);
      if (isAppRouteOtherResponse(response)) {
        expect(response.contentType).toBe(PROBLEM_CONTENT_TYPE);
        expect(response.body).toBe(Problem);
      }
    }
  });

  it.each(routes)('%s: authenticated routes answer 401, public routes do not need a credential', (_key, route) => {
    const meta = route.metadata as RouteMetadata;
    if (meta.auth === 'public') {
      expect(meta.problems.filter((p) => (authProblems as readonly string[]).includes(p))).toEqual([]);
    } else {
      expect(meta.problems).toEqual(expect.arrayContaining([...authProblems]));
      expect(route.responses).toHaveProperty('401');
    }
  });

  it('createOrder, createTip, acceptOffer, createWithdrawal and the agreement routes (issue 24) require an Idempotency-Key, createListing accepts one, no other route takes it', () => {
    const idempotent = routes.filter(([, r]) => (r.metadata as RouteMetadata).idempotent).map(([k]) => k);
    expect(idempotent.sort()).toEqual([
      'listings.createListing',
      'offers.acceptOffer',
      'orders.acceptExtension',
      'orders.acceptMilestoneExtension',
      'orders.acceptMilestoneSettlement',
      'orders.acceptSettlement',
      'orders.createOrder',
      'orders.declineExtension',
      'orders.declineMilestoneExtension',
      'orders.fundOrderMilestones',
      'orders.proposeExtension',
      'orders.proposeMilestoneExtension',
      'orders.proposeMilestoneSettlement',
      'orders.proposeSettlement',
      'orders.requestMilestoneRevision',
      'orders.requestRevision',
      'orders.withdrawMilestoneSettlement',
      'orders.withdrawSettlement',
      'tips.createTip',
      'wallet.createWithdrawal',
    ]);
    for (const [key, route] of routes) {
      const headers = route.headers as { shape?: Record<string, z.ZodTypeAny> } | undefined;
      const header = headers?.shape?.['idempotency-key'];
      expect(Boolean(header), key).toBe(idempotent.includes(key));
      if (header) expect(header.isOptional(), key).toBe((route.metadata as RouteMetadata).idempotent === 'optional');
    }
    expect((contract.listings.createListing.metadata as RouteMetadata).idempotent).toBe('optional');
  });

  it('returns custody-disabled from deposit/withdraw and 403 from role-restricted actions', () => {
    expect(contract.wallet.createDeposit.metadata.problems).toContain('custody-disabled');
    expect(contract.wallet.createWithdrawal.metadata.problems).toContain('custody-disabled');
    for (const key of ['deliverOrder', 'confirmOrder', 'disputeOrder', 'refundOrder', 'resolveDispute'] as const) {
      expect(contract.orders[key].responses).toHaveProperty('403');
      expect(contract.orders[key].responses).toHaveProperty('409');
    }
  });
});
