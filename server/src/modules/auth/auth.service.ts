/**
 * Wallet login (SIWS) and credential checks. No Express types here: the HTTP layer passes plain
 * values and maps the DomainErrors thrown here to problem+json.
 */
import { looksLikePat } from './personal-tokens.js';
import { LRUCache } from 'lru-cache';
import { OPERATOR_ROLES, roleOfScope, type LoginResponse, type OperatorRole, type RequestLoginBody, type RequestLoginResponse } from '@bazaar/contract';
import type { User } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import { authErrors } from './auth.errors.js';
import type { AuthRepo } from './auth.repo.js';
import { hashApiKey, looksLikeApiKey } from './api-keys.js';
import { checkSignedMessage, domainAllowed, newNonce, normalizeChainId, signInInputFor, uriAllowed, type SiwsPolicy } from './siws.js';
import { signAccessToken, verifyAccessToken } from './tokens.js';

/** The auth part of Config (server/src/config.ts documents each variable). */
export interface AuthSettings {
  /** allowed SIWS domains: `host`, `host:port` or `host:*` (SIWS_DOMAINS); the first is the default domain */
  siwsDomains: string[];
  /** SIWS `uri` default and the service's origin (PUBLIC_BASE_URL) */
  publicBaseUrl: string;
  /** configured cluster (SIWS_CHAIN_ID), bare or `solana:` prefixed */
  siwsChainId: string;
  /** nonce lifetime, seconds */
  loginNonceTtlSeconds: number;
  /** skew allowed on the SIWS time fields, seconds */
  clockSkewSeconds: number;
  jwtSecret: string;
  /** access token lifetime, seconds */
  jwtTtlSeconds: number;
}

/**
 * Who acts, as an access rule reads it: the acting user (null: a service API key that acts as no user),
 * whether the credential holds the admin role (`isAdmin` = `roles` includes admin: the admin's view of
 * every order, event and marketplace-wide webhook) and the operator roles it may exercise now (`roles`,
 * issue 25). Modules that decide access (chat, events, webhooks, listings) take this, or
 * `Pick<Principal, ...>` when they need more of the credential; none declares its own. `roles` absent
 * (a caller built by hand in a module test): none.
 */
export interface AccessPrincipal {
  userId: string | null;
  isAdmin: boolean;
  roles?: readonly OperatorRole[];
}

/**
 * Does `p` hold the operator role `role` now? The roles come from the user row read for this request
 * (sessions, API keys with a user, personal access tokens), so a revoked role fails at the next request;
 * an admin API key (`npm run api-key -- create --admin`) holds every role. A personal access token holds
 * only the roles its operator scopes name (contract OPERATOR_SCOPES) that its owner holds.
 */
export function hasRole(p: Pick<AccessPrincipal, 'roles'> | null | undefined, role: OperatorRole): boolean {
  return !!p?.roles?.includes(role);
}

/**
 * The roles of a user row, as stored (`users.roles`), keeping only known ones (the column's CHECK allows no
 * other; this guards a reader against a row written by a later version).
 */
export function rolesOfUser(user: { roles: readonly string[] } | null | undefined): OperatorRole[] {
  return (user?.roles ?? []).filter((r): r is OperatorRole => (OPERATOR_ROLES as readonly string[]).includes(r));
}

/**
 * The roles a personal access token exercises: those of its operator scopes (OPERATOR_SCOPES) its owner
 * holds now. A token never has the admin's view of ordinary routes (`isAdmin` stays false for it).
 */
export function rolesOfToken(scopes: readonly string[], ownerRoles: readonly OperatorRole[]): OperatorRole[] {
  return OPERATOR_ROLES.filter((r) => ownerRoles.includes(r) && scopes.some((s) => roleOfScope(s) === r));
}

/** Who is calling, as the handlers see it (req.principal). */
export interface Principal extends AccessPrincipal {
  kind: 'user' | 'api_key' | 'pat';
  /** personal access tokens only: the scopes it grants */
  scopes?: readonly string[];
  wallet: string | null;
  /** the operator roles the credential may exercise now (see hasRole) */
  roles: readonly OperatorRole[];
  apiKeyId?: string;
  /** personal access tokens: the token's id (revocation, webhooks tied to it) */
  tokenId?: string;
  /** when the credential stops being valid (a JWT's `exp`, a token's `expires_at`); absent or null: never */
  expiresAt?: Date | null;
  /** kind `user` only: the access token (JWT) the request authenticated with; logout revokes it */
  accessToken?: string;
  /**
   * true for a principal built from a wallet address a Solana Action POST named (`principalForWallet`): nobody
   * proved holding the key yet (the wallet's signature on the fund transaction will). Such a principal is never
   * fee-sponsored (orders/sponsorship.ts: sponsorship is for signed-in buyers only, issue 26 item 5), and its
   * orders are marked `via_action` (orders create-order.ts: apart from the wallet's signed-in unpaid limit and
   * balance check, no hold cool-down against the wallet or its user).
   */
  unverifiedWallet?: boolean;
}

/**
 * The credential a principal came from, as one string: `pat:<token id>`, `api_key:<key id>` or
 * `user:<user id>` (a session JWT). Streams and webhooks are keyed by it for revocation signals.
 */
export function credentialKey(p: Pick<Principal, 'kind' | 'userId' | 'apiKeyId' | 'tokenId'>): string {
  if (p.kind === 'pat') return `pat:${p.tokenId}`;
  if (p.kind === 'api_key') return `api_key:${p.apiKeyId}`;
  return `user:${p.userId}`;
}

export interface AuthDeps {
  repo: AuthRepo;
  settings: AuthSettings;
  now: () => Date;
  /**
   * renders the User body of the login response (users module); `isNew`: the row did not exist before this
   * login, so nothing can reference it yet (no listing, order, review or tip: every statistic is zero)
   */
  presentUser: (user: User, isNew?: boolean) => Promise<LoginResponse['user']>;
  /**
   * How long (ms, by `now`) a verified JWT's principal is reused without verifying the token and
   * reading its user again; default PRINCIPAL_CACHE_TTL_MS, 0 disables. Never past the token's `exp`.
   */
  principalCacheTtlMs?: number;
  /** issue 25 (modules/moderation): a suspended or banned wallet does not log in (403 account-suspended) */
  standing?: { assertMayLogIn(wallet: string): Promise<boolean> };
}

/**
 * Default reuse time of a verified JWT's principal: 5 s. A request with a recently seen token skips the
 * HMAC check and the user lookup (issue 14: 20.7 % + 12.8 % of the server's CPU on Bearer reads); the
 * price is that a removed user, or a role granted on another replica, takes effect on such a token up to
 * 5 s later. A principal holding an operator role is never reused (issue 25: a revoked role must stop at
 * the next request on every replica; operators are few), and a role change on this replica drops the
 * user's entries at once (`forgetUser`).
 */
export const PRINCIPAL_CACHE_TTL_MS = 5_000;
/** verified tokens remembered at most (least recently used first out) */
export const PRINCIPAL_CACHE_MAX = 10_000;

const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

/** The default SIWS domain: the first allowed entry that names one host (no `:*` wildcard). */
export function defaultSiwsDomain(domains: readonly string[], publicBaseUrl: string): string {
  return domains.find((d) => !d.endsWith(':*')) ?? new URL(publicBaseUrl).host;
}

/** The roles of an API key: every role for an admin key, else those of the user it acts for (none for a service key). */
function apiKeyRoles(row: { isAdmin: boolean; user: { roles: readonly string[] } | null }): OperatorRole[] {
  return row.isAdmin ? [...OPERATOR_ROLES] : rolesOfUser(row.user);
}

export function createAuthService(deps: AuthDeps) {
  const { repo, settings, now } = deps;
  const policy: SiwsPolicy = {
    domains: settings.siwsDomains,
    publicBaseUrl: settings.publicBaseUrl,
    chainId: settings.siwsChainId,
    skewSeconds: settings.clockSkewSeconds,
  };
  const defaultDomain = defaultSiwsDomain(settings.siwsDomains, settings.publicBaseUrl);
  const cacheTtlMs = deps.principalCacheTtlMs ?? PRINCIPAL_CACHE_TTL_MS;
  /** token -> principal, reusable until `until` (ms, by now()): min(verified + TTL, token exp) */
  const principals = new LRUCache<string, { principal: Principal; until: number }>({ max: PRINCIPAL_CACHE_MAX });

  return {
    /**
     * Forget the reusable principals of user `userId` (a role change committed on this process: the next
     * request with any of the user's sessions reads the user row again).
     */
    forgetUser(userId: string): void {
      for (const [token, entry] of principals.entries()) if (entry.principal.userId === userId) principals.delete(token);
    },

    /**
     * A single-use nonce for `body.address` and the SIWS input to sign. Optional fields of the body
     * shape the input (domain, uri, statement, chain_id, request_id, resources). Throws DomainError
     * 400 validation-error when `domain` is not an allowed SIWS domain, `uri` not on an allowed origin
     * (siws.ts uriAllowed) or `chain_id` another cluster.
     */
    async requestLogin(body: RequestLoginBody): Promise<RequestLoginResponse> {
      if (body.domain !== undefined && !domainAllowed(body.domain, settings.siwsDomains)) {
        throw authErrors.field('body.domain', 'not_allowed', `${body.domain} is not an allowed SIWS domain (SIWS_DOMAINS)`);
      }
      if (body.uri !== undefined && !uriAllowed(body.uri, settings.publicBaseUrl, settings.siwsDomains)) {
        throw authErrors.field('body.uri', 'not_allowed', `${body.uri} is not on an allowed origin (PUBLIC_BASE_URL, or http(s) on a SIWS_DOMAINS domain)`);
      }
      if (body.chain_id !== undefined && normalizeChainId(body.chain_id) !== normalizeChainId(settings.siwsChainId)) {
        throw authErrors.field('body.chain_id', 'wrong_cluster', `this service runs on ${normalizeChainId(settings.siwsChainId)}`);
      }
      const issuedAt = now();
      const issued = {
        nonce: newNonce(),
        address: body.address,
        domain: body.domain ?? defaultDomain,
        issuedAt,
        expiresAt: new Date(issuedAt.getTime() + settings.loginNonceTtlSeconds * 1000),
      };
      await repo.insertNonce(issued);
      const input = signInInputFor(
        issued,
        { uri: settings.publicBaseUrl, chainId: settings.siwsChainId },
        { uri: body.uri, statement: body.statement, chainId: body.chain_id, requestId: body.request_id, resources: body.resources },
      );
      return { nonce: issued.nonce, sign_in_input: input, expires_at: issued.expiresAt.toISOString() };
    },

    /**
     * Verify the SIWS message the wallet signed (siws.ts checkSignedMessage), then the nonce: issued by
     * this service to `address` for the message's domain (a nonce issued for one allowed domain does not
     * log in through a message for another: `domain`), unused, unexpired, and not issued after the
     * message's Issued At; it is
     * consumed atomically (of concurrent verifications exactly one passes). Returns the login response
     * (`expires_in` in seconds). Throws DomainError 401 login-failed with `reason` (loginFailureReasons).
     */
    async verifyLogin(body: { address: string; signed_message: string; signature: string }) {
      const signedMessage = b64(body.signed_message);
      const signature = b64(body.signature);
      const t = now();
      const check = checkSignedMessage(body.address, signedMessage, signature, t, policy);
      if (!check.ok) throw authErrors.loginFailed(check.reason, check.detail);
      const { nonce, issuedAtMs } = check.message;
      if (!nonce) throw authErrors.loginFailed('nonce', 'nonce missing from the message');
      const skew = settings.clockSkewSeconds * 1000;
      // the common case in one statement: every nonce rule below holds and the nonce is consumed atomically
      // (of concurrent verifications exactly one flips used_at); the nonce is read only to say why it failed
      const consumed = await repo.consumeNonceIf(nonce, {
        address: body.address,
        domain: check.message.domain,
        now: t,
        issuedNoLaterThan: issuedAtMs !== undefined ? new Date(issuedAtMs + skew) : null,
      });
      if (!consumed) {
        const stored = await repo.getNonce(nonce);
        if (!stored) throw authErrors.loginFailed('nonce', 'nonce unknown');
        if (stored.address !== body.address) throw authErrors.loginFailed('nonce', 'nonce unknown for this address');
        if (stored.domain.toLowerCase() !== check.message.domain.toLowerCase()) {
          throw authErrors.loginFailed('domain', `domain mismatch (the nonce was issued for ${stored.domain}, the message is for ${check.message.domain.slice(0, 253)})`);
        }
        if (stored.usedAt) throw authErrors.loginFailed('nonce', 'nonce already used');
        if (stored.expiresAt.getTime() <= t.getTime()) throw authErrors.loginFailed('nonce', 'nonce expired');
        if (issuedAtMs !== undefined && issuedAtMs < stored.issuedAt.getTime() - skew) {
          throw authErrors.loginFailed('issued_at', 'message issued before its nonce');
        }
        // every rule holds now: a concurrent verification consumed it between the two statements
        throw authErrors.loginFailed('nonce', 'nonce already used');
      }
      // issue 25: only once the wallet proved itself (nobody learns another wallet's standing), before any token
      const known = await deps.standing?.assertMayLogIn(body.address);

      const user = await repo.upsertUserOnLogin(body.address, t);
      const { token, expiresAt } = await signAccessToken(
        { sub: user.id, wallet: user.wallet },
        settings.jwtSecret,
        settings.jwtTtlSeconds,
        t,
      );
      const response: LoginResponse = {
        access_token: token,
        token_type: 'Bearer',
        expires_in: settings.jwtTtlSeconds,
        expires_at: expiresAt.toISOString(),
        // a wallet without a user row before this login (the standing read said so) has no statistics to read
        user: await deps.presentUser(user, known === false),
      };
      return response;
    },

    /**
     * The principal a Solana Action acts for (http/actions, modules/actions): the wallet that POSTs
     * `{ account }` to a buy action, which proves nothing yet. Its user row is created as login creates it
     * (same table, same unique wallet; `last_login_at` stays as it is: nobody logged in), after the same
     * standing check (403 account-suspended for a suspended or banned wallet). The principal never carries
     * an operator role nor the admin's view, whatever the user row holds: an action only orders as a buyer,
     * and the order is paid only by that wallet's own signature on the fund transaction.
     */
    async principalForWallet(wallet: string): Promise<Principal> {
      await deps.standing?.assertMayLogIn(wallet);
      const user = await repo.ensureUser(wallet);
      return { kind: 'user', userId: user.id, wallet: user.wallet, isAdmin: false, roles: [], unverifiedWallet: true };
    },

    /**
     * A JWT (Bearer or cookie) -> principal; the user must still exist and the token must not be logged
     * out (revoked). A token verified less than principalCacheTtlMs ago (and not expired) reuses that
     * result without a database read: a logout reaches this replica at once (`logout` drops the entry),
     * other replicas within principalCacheTtlMs (5 s).
     */
    async principalFromJwt(token: string): Promise<Principal> {
      const t = now();
      const cached = cacheTtlMs > 0 ? principals.get(token) : undefined;
      if (cached && t.getTime() < cached.until) return cached.principal;
      const res = await verifyAccessToken(token, settings.jwtSecret, t);
      if (!res.ok) throw res.reason === 'expired' ? authErrors.tokenExpired() : authErrors.invalidToken('bad or unreadable token');
      // one statement when the repository reads both at once (auth.repo.ts sessionOf), else two
      const { user, revoked } =
        typeof repo.sessionOf === 'function'
          ? await repo.sessionOf(res.claims.sub, hashApiKey(token))
          : await Promise.all([repo.getUser(res.claims.sub), repo.isAccessTokenRevoked(hashApiKey(token))]).then(([u, r]) => ({ user: u, revoked: r }));
      if (revoked) throw authErrors.invalidToken('the session was logged out');
      if (!user || user.wallet !== res.claims.wallet) throw authErrors.invalidToken('unknown user');
      const roles = rolesOfUser(user);
      const principal: Principal = {
        kind: 'user',
        userId: user.id,
        wallet: user.wallet,
        isAdmin: roles.includes('admin'),
        roles,
        expiresAt: new Date(res.claims.exp * 1000),
        accessToken: token,
      };
      // an operator's principal is read afresh on every request (a revoked role stops at once)
      if (cacheTtlMs > 0 && roles.length === 0) principals.set(token, { principal, until: Math.min(t.getTime() + cacheTtlMs, res.claims.exp * 1000) });
      return principal;
    },

    /**
     * Logout: revoke the session's access token server-side (every replica refuses it from now until its
     * own expiry; this replica at once, others within principalCacheTtlMs). `principal` is the request's
     * (authenticate middleware). Only a login session (JWT) logs out: an API key or personal access token
     * is revoked with its own route (403 forbidden). Returns when the token would have expired.
     */
    async logout(principal: Principal): Promise<{ token_expires_at: string }> {
      const token = principal.kind === 'user' ? principal.accessToken : undefined;
      if (!token || !principal.userId) {
        throw new DomainError('forbidden', 'Logout ends a login session (an access token from verify_login); revoke an API key or a personal access token with its own route.');
      }
      const t = now();
      const res = await verifyAccessToken(token, settings.jwtSecret, t);
      if (!res.ok) throw res.reason === 'expired' ? authErrors.tokenExpired() : authErrors.invalidToken('bad or unreadable token');
      const expiresAt = new Date(res.claims.exp * 1000);
      await repo.revokeAccessToken(hashApiKey(token), principal.userId, t, expiresAt);
      principals.delete(token);
      return { token_expires_at: expiresAt.toISOString() };
    },

    /**
     * A personal access token -> principal of its user with its scopes, never admin (`isAdmin` false); its
     * `roles`: those its operator scopes name that the owner holds now (rolesOfToken, read per request);
     * 401 when unknown, revoked or expired.
     */
    async principalFromPat(token: string): Promise<Principal> {
      if (!looksLikePat(token)) throw authErrors.invalidToken('malformed personal access token');
      const row = await repo.findPatByHash(hashApiKey(token));
      if (!row) throw authErrors.invalidToken('unknown personal access token');
      if (row.revokedAt) throw authErrors.invalidToken('personal access token revoked');
      if (row.expiresAt && row.expiresAt <= now()) throw authErrors.tokenExpired();
      void repo.touchPat(row.id, now()).catch(() => undefined);
      return {
        kind: 'pat',
        userId: row.user.id,
        wallet: row.user.wallet,
        isAdmin: false,
        roles: rolesOfToken(row.scopes, rolesOfUser(row.user)),
        scopes: row.scopes,
        tokenId: row.id,
        expiresAt: row.expiresAt,
      };
    },

    /**
     * An API key -> principal (acts as its user when it has one). Roles: every role for an admin key (the
     * operator's command line made it), else its user's roles, read now.
     */
    async principalFromApiKey(key: string): Promise<Principal> {
      if (!looksLikeApiKey(key)) throw authErrors.invalidToken('malformed API key');
      const row = await repo.findApiKeyByHash(hashApiKey(key));
      if (!row) throw authErrors.invalidToken('unknown API key');
      if (row.revokedAt) throw authErrors.invalidToken('API key revoked');
      void repo.touchApiKey(row.id, now()).catch(() => undefined);
      const roles = apiKeyRoles(row);
      return {
        kind: 'api_key',
        userId: row.user?.id ?? null,
        wallet: row.user?.wallet ?? null,
        isAdmin: roles.includes('admin'),
        roles,
        apiKeyId: row.id,
        expiresAt: null,
      };
    },

    /**
     * Re-read the credential behind `p` (issue 20: a long-lived SSE stream re-checks its caller): the
     * principal as it stands now, or null when the credential no longer authenticates (a personal access
     * token or API key revoked, deleted or expired; a session whose JWT expired or whose user is gone or
     * has another wallet). `roles` and `isAdmin` follow the user's roles (session, token) or the key's flag
     * and its user's roles (API key) now.
     * Reads the database; never throws for a missing row.
     */
    async refreshPrincipal(p: Principal): Promise<Principal | null> {
      const t = now();
      if (p.expiresAt && p.expiresAt.getTime() <= t.getTime()) return null;
      if (p.kind === 'pat') {
        const row = p.tokenId ? await repo.findPatById(p.tokenId) : null;
        if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= t) || !row.user) return null;
        return { ...p, userId: row.user.id, wallet: row.user.wallet, scopes: row.scopes, roles: rolesOfToken(row.scopes, rolesOfUser(row.user)), expiresAt: row.expiresAt };
      }
      if (p.kind === 'api_key') {
        const row = p.apiKeyId ? await repo.findApiKeyById(p.apiKeyId) : null;
        if (!row || row.revokedAt) return null;
        const roles = apiKeyRoles(row);
        return { ...p, userId: row.user?.id ?? null, wallet: row.user?.wallet ?? null, isAdmin: roles.includes('admin'), roles };
      }
      const user = p.userId ? await repo.getUser(p.userId) : null;
      if (!user || user.wallet !== p.wallet) return null;
      const roles = rolesOfUser(user);
      return { ...p, isAdmin: roles.includes('admin'), roles };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
