/**
 * Users: the authenticated user's profile (GET/PATCH /user/me) and public profiles by wallet
 * (GET /users/{wallet}, spec gap 5). A user is created on first successful wallet login; the wallet
 * is the identity and cannot be changed.
 */
import { z } from 'zod';
import { BaseUnits, c, CurrencyCode, extendApi, named, Pubkey, safeText, Timestamp, Uuid } from './common.js';
import { access, OPERATOR_ROLES } from './access.js';
import { bodyProblems, routeErrors } from './problems.js';

export const DisplayName = safeText(z.string().trim().min(1).max(50));
export const Bio = safeText(z.string().max(500));
/** An https URL; one pattern (OpenAPI keeps one per schema) also refusing control characters, as safeText does. */
export const AvatarUrl = z
  .string()
  .max(2048)
  .url()
  .regex(/^https:\/\/[^\u0000-\u001F]*$/, 'must be an https URL (no control characters)');

export const SalesVolume = named(
  'SalesVolume',
  z.object({
    currency: CurrencyCode,
    amount_base_units: BaseUnits,
    amount: z.number().describe('UI amount'),
  }),
);

export const UserStats = named(
  'UserStats',
  z.object({
    listings_count: z.number().int().min(0).describe('All listings of the user, any status'),
    active_listings_count: z.number().int().min(0).describe('Listings in status available (a listing a moderator took down is not counted)'),
    completed_sales: z.number().int().min(0).describe('Orders as seller in status completed'),
    completed_purchases: z.number().int().min(0).describe('Orders as buyer in status completed'),
    sales_volume: z.array(SalesVolume).describe('Sum of completed sales per currency (gross, before fees)'),
    tips_received: z
      .array(SalesVolume)
      .describe('Sum of the confirmed tips the user received as seller, per currency (no fee is taken on tips)'),
  }),
);

export const RatingDistribution = named(
  'RatingDistribution',
  z.object({
    '1': z.number().int().min(0),
    '2': z.number().int().min(0),
    '3': z.number().int().min(0),
    '4': z.number().int().min(0),
    '5': z.number().int().min(0),
  }),
  'Number of reviews per rating',
);

export const Reputation = named(
  'Reputation',
  z.object({
    average: z.number().min(1).max(5).nullable().describe('Mean rating rounded to 2 decimals; null without reviews'),
    count: z.number().int().min(0),
    distribution: RatingDistribution,
  }),
);

const publicUserShape = {
  user_id: Uuid,
  wallet: Pubkey,
  display_name: DisplayName.nullable(),
  bio: Bio.nullable(),
  avatar_url: z.string().nullable(),
  created_at: Timestamp,
  stats: UserStats,
  reputation: Reputation,
};

export const PublicUser = named(
  'PublicUser',
  z.object(publicUserShape),
  'Public profile of a user, as seen by others',
);

export const UserRole = z.enum(['user', 'admin']);

/** An operator role (access.ts OPERATOR_ROLES): admin, moderator, arbiter. */
export const OperatorRoleSchema = named(
  'OperatorRole',
  z.enum(OPERATOR_ROLES),
  'An operator role: `admin` manages roles and reads the whole marketplace, `moderator` handles reports, takedowns ' +
    'and suspensions, `arbiter` resolves disputes',
);

/** The roles a user holds, sorted, no duplicates. */
export const OperatorRoles = z.array(OperatorRoleSchema).describe('The operator roles the user holds (sorted; empty for most users)');

export const User = named(
  'User',
  z.object({
    ...publicUserShape,
    roles: OperatorRoles,
    role: extendApi(UserRole.describe('Deprecated (use `roles`): `admin` when `roles` holds admin, else `user`'), { deprecated: true }),
    updated_at: Timestamp,
    last_login_at: Timestamp.nullable(),
    custody_enabled: z.boolean().describe('Whether /wallet/deposit and /wallet/withdraw are offered'),
  }),
  'The authenticated user: public profile plus private fields',
);

export const UpdateMeBody = named(
  'UpdateMeBody',
  z
    .object({
      display_name: DisplayName.nullable().optional(),
      bio: Bio.nullable().optional(),
      avatar_url: AvatarUrl.nullable().optional(),
    })
    .strict(),
);

/** A user's operator roles after a grant or revoke (the body of both routes and the data of user.role_* events). */
export const UserRoles = named(
  'UserRoles',
  z.object({
    user_id: Uuid,
    wallet: Pubkey,
    roles: OperatorRoles,
    role: OperatorRoleSchema.describe('The role the request (or the event) granted or revoked'),
    changed: z.boolean().describe('false when the user already held (grant) or lacked (revoke) the role: nothing was written'),
  }),
);

/**
 * Role events (resource `user`, audience the user whose roles changed): `user.role_granted`,
 * `user.role_revoked`; `data` is UserRoles (`changed` is always true in an event).
 */
export const USER_ROLE_EVENTS = ['user.role_granted', 'user.role_revoked'] as const;

export const RoleParams = z.object({ wallet: Pubkey, role: OperatorRoleSchema });

const getMe = routeErrors(access.user('profile:read'), []);
const grantRole = routeErrors(access.admin(), ['not-found']);
const revokeRole = routeErrors(access.admin(), ['not-found', 'last-admin']);
const updateMe = routeErrors(access.user('profile:write'), [...bodyProblems]);
const getUser = routeErrors(access.user('listings:read'), ['not-found']);

export const users = c.router({
  getMe: {
    method: 'GET',
    path: '/user/me',
    summary: 'Get the authenticated user',
    description:
      'Profile, linked wallet, private fields (operator roles, last login), statistics and reputation of the caller. ' +
      'With an API key, the user who owns the key.',
    responses: { 200: User, ...getMe.responses },
    metadata: getMe.metadata,
  },
  updateMe: {
    method: 'PATCH',
    path: '/user/me',
    summary: 'Update the authenticated user\'s profile',
    description:
      'Partial update: absent fields are unchanged, `null` clears a field. display_name 1..50 characters ' +
      '(trimmed), bio 0..500 characters, avatar_url an https URL of at most 2048 characters. Unknown fields ' +
      'are rejected (400). The wallet cannot be changed.',
    body: UpdateMeBody,
    responses: { 200: User, ...updateMe.responses },
    metadata: updateMe.metadata,
  },
  getUser: {
    method: 'GET',
    path: '/users/:wallet',
    pathParams: z.object({ wallet: Pubkey }),
    summary: 'Get a user\'s public profile by wallet',
    description:
      'Public profile, statistics and reputation of the user whose wallet is `wallet`. 404 not-found when no ' +
      'user has logged in with that wallet.',
    responses: { 200: PublicUser, ...getUser.responses },
    metadata: getUser.metadata,
  },
  grantRole: {
    method: 'PUT',
    path: '/admin/users/:wallet/roles/:role',
    pathParams: RoleParams,
    body: c.noBody(),
    summary: 'Grant an operator role (admin)',
    description:
      'Gives the user whose wallet is `wallet` the operator role `role` (issue 25); admins only, never a token. ' +
      'Idempotent: granting a role the user holds answers 200 with `changed: false` and writes nothing. The user gets ' +
      '`user.role_granted`. 404 not-found when no user has logged in with that wallet (the wallet logs in once first).',
    responses: { 200: UserRoles, ...grantRole.responses },
    metadata: grantRole.metadata,
  },
  revokeRole: {
    method: 'DELETE',
    path: '/admin/users/:wallet/roles/:role',
    pathParams: RoleParams,
    body: c.noBody(),
    summary: 'Revoke an operator role (admin)',
    description:
      'Takes the operator role `role` from the user whose wallet is `wallet`; admins only, never a token. It stops ' +
      'working at the user\'s next request (sessions, API keys and tokens alike), and the operator scopes it gave the ' +
      'user\'s personal access tokens are removed. Idempotent: revoking a role the user lacks answers 200 with ' +
      '`changed: false`. The user gets `user.role_revoked`. 409 last-admin when it would leave no admin user ' +
      '(an admin may revoke her own admin role only while another admin remains).',
    responses: { 200: UserRoles, ...revokeRole.responses },
    metadata: revokeRole.metadata,
  },
});

export type User = z.infer<typeof User>;
export type UserRoles = z.infer<typeof UserRoles>;
export type PublicUser = z.infer<typeof PublicUser>;
export type UpdateMeBody = z.infer<typeof UpdateMeBody>;
export type Reputation = z.infer<typeof Reputation>;
