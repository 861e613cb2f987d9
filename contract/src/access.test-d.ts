/**
 * Type test (run by `npm run typecheck`, i.e. tsc over the repository; not a vitest file): a route
 * that does not state who may call it (`metadata.access`) does not compile. Each `@ts-expect-error`
 * fails the type check when the line below it compiles.
 */
import { z } from 'zod';
import { access, type EveryRouteStatesAccess } from './access.js';
import { c } from './common.js';
import type { Contract } from './contract.js';
import { routeErrors } from './problems.js';

const ok = routeErrors(access.user('listings:read', { public_marketplace: true }), ['not-found']);

/** A test-only router: one route states its access, one has metadata without it, one has none. */
const testRouter = c.router({
  stated: { method: 'GET', path: '/stated', responses: { 200: z.null(), ...ok.responses }, metadata: ok.metadata },
  withoutAccess: { method: 'GET', path: '/without-access', responses: { 200: z.null() }, metadata: { auth: 'user', problems: [] } },
  withoutMetadata: { method: 'GET', path: '/without-metadata', responses: { 200: z.null() } },
});

// @ts-expect-error routes without metadata.access do not compile (the message names them)
const refused: EveryRouteStatesAccess<typeof testRouter> = true;

// the same check over groups: the router of only the stated route passes
const accepted: EveryRouteStatesAccess<{ group: { stated: (typeof testRouter)['stated'] } }> = true;

// and the contract itself passes it (contract.ts asserts the same)
const contractOk: EveryRouteStatesAccess<Contract> = true;

// the old form, a bare auth level, is no longer an access rule
// @ts-expect-error routeErrors takes an access rule, not 'user'
routeErrors('user', []);

// a route key that is missing from the check's answer would make this fail: both offenders are named
const named: { routes_without_metadata_access: 'withoutAccess' | 'withoutMetadata' } = null as unknown as Exclude<
  EveryRouteStatesAccess<typeof testRouter>,
  true
>;

void [refused, accepted, contractOk, named];
