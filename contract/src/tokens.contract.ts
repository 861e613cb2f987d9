/**
 * Personal access tokens (issue 11; the spec's "chat access for third parties depends on the user
 * providing their token"): a user creates a scoped token for a third-party app and revokes it when
 * done. Sent as `Authorization: Bearer bzp_<prefix>_<secret>`; shown once, stored hashed (sha256).
 *
 * Every authenticated route requires one scope, and a route whose request can move money also the money
 * scope of that capability (`routeAccess`, scopes.ts); a token without them gets 403 insufficient-scope,
 * and so does any route whose scope is null (token management, operator routes without an operator scope).
 * Operator scopes (OPERATOR_SCOPES) open operator routes only while the token's owner holds the role.
 * Expired or revoked tokens are 401 invalid-token.
 */
import { z } from 'zod';
import { c, named, safeText, Timestamp, Uuid } from './common.js';
import { access, type OperatorRole } from './access.js';
import { bodyProblems, routeErrors } from './problems.js';

export const TOKEN_SCOPES = {
  'profile:read': 'read the user\'s profile (GET /user/me)',
  'profile:write': 'edit the user\'s profile',
  'listings:read': 'read listings, the marketplace, public profiles and reviews',
  'listings:write': 'create and edit the user\'s listings',
  'orders:read': 'read the user\'s orders',
  'orders:write':
    'create orders paid from a wallet (the buyer\'s wallet signs the payment), submit that signed payment, deliver ' +
    'and dispute; confirming, refunding and paying from the custodial balance also need payments:write',
  'payments:write':
    'move the user\'s money without a wallet signature: pay orders from the custodial balance (POST /orders with ' +
    'payment_source custodial), confirm an order (releases its escrow to the seller) and refund one',
  'reviews:write': 'review the user\'s orders',
  'wallet:read': 'read balances, deposits and withdrawals',
  'wallet:write': 'request deposit addresses and withdrawals (sends custodial balance to any address)',
  'events:read': 'read and stream the user\'s events, of the resources the token\'s other scopes can read (chat:read for messages, wallet:read for deposits and withdrawals)',
  'webhooks:manage': 'manage the user\'s webhook endpoints; an endpoint made with a token receives only the events that token can read, and is disabled when the token is revoked',
  'chat:read': 'read the user\'s conversations',
  'chat:write': 'post, mark read and report messages',
  'moderation:report': 'report listings and users to the moderators (POST /reports)',
  'disputes:resolve': 'operator scope (needs the arbiter role): resolve disputes as the arbiter',
  'moderation:write': 'operator scope (needs the moderator role): handle reports, take listings down and restore them, suspend users',
  'audit:read': 'operator scope (needs the admin role): read and verify the audit log',
  'reports:read': 'operator scope (needs the admin role): read the marketplace-wide reports',
} as const;
export type TokenScope = keyof typeof TOKEN_SCOPES;

/**
 * The operator scopes (issue 25) and the role each needs: a token is created with one only when its owner
 * holds that role (403 forbidden otherwise), and a request with it reaches an operator route only while the
 * owner still holds the role: the role is read from the user row on every request, so a revoked role stops
 * the token at its next request; revoking the role also removes the scope from the owner's tokens, so
 * granting the role again does not revive them. A token never carries an operator role by any other scope,
 * and no scope manages roles.
 */
export const OPERATOR_SCOPES = {
  'disputes:resolve': 'arbiter',
  'moderation:write': 'moderator',
  'audit:read': 'admin',
  'reports:read': 'admin',
} as const satisfies Partial<Record<TokenScope, OperatorRole>>;
export type OperatorScope = keyof typeof OPERATOR_SCOPES;

/** The operator role a scope needs, or null for an ordinary scope. */
export function roleOfScope(scope: string): OperatorRole | null {
  return (OPERATOR_SCOPES as Record<string, OperatorRole>)[scope] ?? null;
}
export const TokenScope = z.enum(Object.keys(TOKEN_SCOPES) as [TokenScope, ...TokenScope[]]).describe(
  Object.entries(TOKEN_SCOPES)
    .map(([k, v]) => `\`${k}\`: ${v}`)
    .join('; '),
);

export const PersonalAccessToken = named(
  'PersonalAccessToken',
  z.object({
    token_id: Uuid,
    name: z.string(),
    prefix: z.string().describe('First characters of the token (`bzp_<prefix>_…`), to recognise it'),
    scopes: z.array(TokenScope),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable(),
  }),
);

export const CreatedToken = named(
  'CreatedToken',
  PersonalAccessToken.extend({ token: z.string().describe('The token (`bzp_<prefix>_<secret>`), shown once: store it') }),
);

export const CreateTokenBody = named(
  'CreateTokenBody',
  z
    .object({
      name: safeText(z.string().trim().min(1).max(100)),
      scopes: z.array(TokenScope).min(1).max(20),
      expires_in_days: z.number().int().min(1).max(365).optional().describe('Lifetime in days; omitted: until revoked'),
    })
    .strict(),
);

export const TokenList = named('TokenList', z.object({ data: z.array(PersonalAccessToken) }));

const create = routeErrors(access.noToken(), [...bodyProblems, 'insufficient-scope', 'forbidden']);
const list = routeErrors(access.noToken(), ['insufficient-scope']);
const revoke = routeErrors(access.noToken(), ['not-found', 'insufficient-scope']);

export const tokens = c.router({
  createToken: {
    method: 'POST',
    path: '/user/tokens',
    body: CreateTokenBody,
    summary: 'Create a personal access token',
    description:
      'For a third-party app acting as the caller within `scopes`. 201 with the token, shown once. Not with a token (403). ' +
      'An operator scope (`disputes:resolve`, `moderation:write`, `audit:read`, `reports:read`) only when the caller ' +
      'holds its role (403 forbidden names it).',
    responses: { 201: CreatedToken, ...create.responses },
    metadata: create.metadata,
  },
  listTokens: {
    method: 'GET',
    path: '/user/tokens',
    summary: 'The caller\'s personal access tokens',
    description: 'Every token the caller created (revoked ones included), newest first; never the token itself.',
    responses: { 200: TokenList, ...list.responses },
    metadata: list.metadata,
  },
  revokeToken: {
    method: 'DELETE',
    path: '/user/tokens/:token_id',
    pathParams: z.object({ token_id: Uuid }),
    body: c.noBody(),
    summary: 'Revoke a personal access token',
    description: 'The token stops working at once (401 invalid-token). 200 with the revoked token; 404 for another user\'s token.',
    responses: { 200: PersonalAccessToken, ...revoke.responses },
    metadata: revoke.metadata,
  },
});
