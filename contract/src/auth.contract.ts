/**
 * Wallet login with Sign In With Solana (SIWS, the `solana:signIn` wallet-standard feature).
 *
 * 1. POST /auth/request_login {address, ...optional SIWS fields} -> a single-use nonce and the
 *    `sign_in_input` to pass to `wallet.signIn(input)` (or to sign as `createSignInMessage(input)` from
 *    @solana/wallet-standard-util with `signMessage`).
 * 2. POST /auth/verify_login {address, signed_message, signature} -> a JWT (and optionally a cookie).
 *
 * The server verifies the message the wallet signed (parsed with `parseSignInMessage`), not a copy of
 * the input it issued: wallets and dApps may add optional fields or re-serialise times. Every check and
 * its `reason` is in `loginFailureReasons`; the defaults of the lifetimes and limits are `authDefaults`.
 */
import { z } from 'zod';
import { Base64, c, extendApi, named, Pubkey, safeText, Timestamp } from './common.js';
import { access } from './access.js';
import { bodyProblems, loginFailureReasons, routeErrors } from './problems.js';
import { User } from './users.contract.js';

export const SESSION_COOKIE_NAME = 'bazaar_session';
export const API_KEY_HEADER = 'X-API-Key';

/**
 * Defaults of the login settings, documented here and applied by the server (server/src/config.ts
 * reads the variables named in each comment and falls back to these): one value each.
 */
export const authDefaults = {
  /** access token lifetime, seconds (JWT_TTL_SECONDS) */
  jwtTtlSeconds: 3600,
  /** lifetime of a login nonce, seconds (LOGIN_NONCE_TTL_SECONDS) */
  nonceTtlSeconds: 300,
  /** clock skew allowed on the SIWS time fields, seconds (SIWS_CLOCK_SKEW_SECONDS) */
  clockSkewSeconds: 60,
  /** requests per minute per client IP, counted per login route (AUTH_RATE_LIMIT_PER_MINUTE) */
  rateLimitPerIpPerMinute: 120,
  /**
   * verify_login requests per minute per wallet address whose signature does not verify with that address
   * (AUTH_ADDRESS_RATE_LIMIT_PER_MINUTE); a request the address's key signed is never counted nor refused by it,
   * so nobody can lock a wallet out of login by naming it (issue 20 item 5)
   */
  rateLimitPerAddressPerMinute: 10,
  /** statement of the sign-in input when request_login names none */
  statement: 'Sign in to Bazaar',
} as const;

/** "3600 s (1 h)" style text of a duration in seconds, for descriptions. */
const seconds = (n: number) =>
  n % 3600 === 0 ? `${n} s (${n / 3600} h)` : n % 60 === 0 ? `${n} s (${n / 60} min)` : `${n} s`;

const rateLimitText =
  `Rate-limited per login route (request_login and verify_login are counted apart): ` +
  `${authDefaults.rateLimitPerIpPerMinute} requests per minute per client IP (AUTH_RATE_LIMIT_PER_MINUTE), and on ` +
  `verify_login ${authDefaults.rateLimitPerAddressPerMinute} per minute per wallet \`address\` of requests whose ` +
  'signature does not verify with that address (AUTH_ADDRESS_RATE_LIMIT_PER_MINUTE; a request the wallet really ' +
  'signed is never refused by it, so naming a wallet cannot lock it out), defaults shown; over a budget the answer ' +
  'is 429 rate-limited with Retry-After (seconds). The SDK\'s loginWithWallet waits Retry-After and retries once.';

/** SIWS nonce: at least 8 alphanumerics (the server issues 24). */
export const Nonce = z.string().regex(/^[A-Za-z0-9]{8,64}$/, 'must be 8..64 alphanumerics');

/** One line of a SIWS message: no line break (it would end the field), no control characters. */
const SiwsLine = (max: number) =>
  safeText(z.string().min(1).max(max)).regex(/^[^\r\n]*$/, 'must be a single line (SIWS message field)');

/** Cluster names of the SIWS `chainId` field, bare or with the CAIP-2 style `solana:` prefix. */
export const SiwsChainId = z
  .string()
  .regex(/^(solana:)?(mainnet|devnet|testnet|localnet)$/, 'must be mainnet, devnet, testnet or localnet, optionally solana: prefixed')
  .describe('Solana cluster: mainnet, devnet, testnet or localnet, bare or "solana:" prefixed (both accepted)');

export const SignInInput = named(
  'SignInInput',
  z.object({
    domain: z.string().min(1).describe('RFC 4501 authority that asks for the sign-in, e.g. "bazaar.dev" or "localhost:5173"'),
    address: Pubkey,
    statement: z.string().optional().describe('Human-readable statement shown by the wallet'),
    uri: z.string().url().describe('RFC 3986 URI of the dApp or service'),
    version: z.literal('1'),
    chainId: SiwsChainId,
    nonce: Nonce,
    issuedAt: Timestamp,
    expirationTime: Timestamp.describe('When the nonce expires (the login must be verified before)'),
    notBefore: Timestamp.optional(),
    requestId: z.string().optional(),
    resources: z.array(z.string()).optional().describe('URIs the sign-in is about (RFC 3986), one per line in the message'),
  }),
  'SIWS input (wallet-standard SolanaSignInInput): pass it to wallet.signIn(input), or sign ' +
    'createSignInMessage(input) with signMessage',
);

/**
 * Body of request_login. Its example is the minimal body (only `address`): every optional field has a
 * default that fits this service, so "Try it out" in /docs and generated clients succeed with it.
 */
export const RequestLoginBody = named(
  'RequestLoginBody',
  extendApi(
    z
      .object({
        address: Pubkey.describe('Wallet that will sign in'),
        domain: SiwsLine(253)
          .regex(/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/, 'must be host or host:port')
          .optional()
          .describe(
            'Authority of the page asking for the sign-in (wallets compare it with the page\'s origin), e.g. ' +
              '"localhost:5173"; must be an allowed SIWS domain (SIWS_DOMAINS). Default: the host of this service\'s public URL',
          ),
        uri: SiwsLine(2048)
          .url()
          .optional()
          .describe(
            'URI of the dApp (default: this service\'s public URL); its origin must be this service\'s public URL or ' +
              'http(s) on an allowed SIWS domain (SIWS_DOMAINS)',
          ),
        statement: SiwsLine(500).optional().describe(`Statement the wallet shows (default "${authDefaults.statement}")`),
        chain_id: SiwsChainId.optional().describe('Cluster the dApp expects; must be the one this service runs on'),
        request_id: SiwsLine(200).optional().describe('The dApp\'s own request id, signed as "Request ID"'),
        resources: z.array(SiwsLine(2048).url()).max(20).optional().describe('URIs to list under "Resources"'),
      })
      .strict(),
    { example: { address: 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r' } },
  ),
);

/**
 * The answer of request_login. Its component name in openapi.json is LoginChallenge: generators name an
 * operation's own response type `<OperationId>Response` (RequestLoginResponse), which a component of that
 * name would collide with (@hey-api/openapi-ts then emits `RequestLoginResponse2`).
 */
export const RequestLoginResponse = named(
  'LoginChallenge',
  z.object({
    nonce: Nonce,
    sign_in_input: SignInInput,
    expires_at: Timestamp.describe('When the nonce expires (same as sign_in_input.expirationTime)'),
  }),
);

export const VerifyLoginBody = named(
  'VerifyLoginBody',
  z
  .object({
    address: Pubkey,
    signed_message: Base64.describe('Base64 of the exact UTF-8 bytes the wallet signed (the SIWS message; signIn\'s signedMessage)'),
    signature: Base64.describe('Base64 of the 64-byte ed25519 signature'),
    set_cookie: z
      .boolean()
      .optional()
      .describe('When true the response also sets the bazaar_session cookie (HttpOnly, Secure, SameSite=Strict)'),
  })
  .strict(),
);

export const LoginResponse = named(
  'LoginResponse',
  z.object({
    access_token: z.string().min(1).describe('JWT (HS256), send as Authorization: Bearer'),
    token_type: z.literal('Bearer'),
    expires_in: z
      .number()
      .int()
      .positive()
      .describe(`Token lifetime in seconds (JWT_TTL_SECONDS; default ${authDefaults.jwtTtlSeconds})`),
    expires_at: Timestamp,
    user: User,
  }),
);

/** The answer of logout; component name SessionRevoked (generators derive `LogoutResponse` from the operationId). */
export const LogoutResponse = named(
  'SessionRevoked',
  z.object({
    logged_out: z.literal(true),
    token_expires_at: Timestamp.describe('When the revoked token would have expired; it is refused until then, and forgotten after'),
  }),
);

const reasonList = Object.entries(loginFailureReasons)
  .map(([reason, text]) => `\`${reason}\` (${text})`)
  .join('; ');

const requestLogin = routeErrors(access.public(), [...bodyProblems]);
const verifyLogin = routeErrors(access.public(), ['login-failed', 'account-suspended', ...bodyProblems]);
// a session logs itself out; an API key or a personal access token is not a session (403)
const logout = routeErrors(access.noToken(), ['forbidden']);

export const auth = c.router({
  requestLogin: {
    method: 'POST',
    path: '/auth/request_login',
    summary: 'Request a wallet login nonce',
    description:
      `Public. Issues a single-use nonce bound to \`address\` (valid ${seconds(authDefaults.nonceTtlSeconds)} by default, ` +
      'LOGIN_NONCE_TTL_SECONDS) and returns the SIWS `sign_in_input`: domain (the requested `domain`, else this ' +
      'service\'s host), uri, statement, version "1", chainId of the configured cluster, nonce, issuedAt, ' +
      'expirationTime (= the nonce expiry) and the optional requestId and resources the body asked for. Pass it to ' +
      '`wallet.signIn(sign_in_input)`, or sign `createSignInMessage(sign_in_input)` with `signMessage`. A `domain` ' +
      'that is not an allowed SIWS domain (SIWS_DOMAINS), a `uri` whose origin is neither this service\'s public URL nor ' +
      'http(s) on an allowed SIWS domain, or a `chain_id` of another cluster is 400 validation-error. The nonce is bound ' +
      'to the domain it was issued for. ' +
      rateLimitText,
    body: RequestLoginBody,
    responses: { 200: RequestLoginResponse, ...requestLogin.responses },
    metadata: requestLogin.metadata,
  },
  verifyLogin: {
    method: 'POST',
    path: '/auth/verify_login',
    summary: 'Verify a signed login message and get a token',
    description:
      'Public. Verifies the SIWS message the wallet signed (`signed_message`, parsed as SIWS; optional fields ' +
      'such as statement, uri, requestId, resources, notBefore, and times with or without milliseconds or as ' +
      '`+00:00` are accepted) and the ed25519 signature over those exact bytes by `address`. Checked: the ' +
      'message\'s address is `address`; its domain is an allowed SIWS domain (SIWS_DOMAINS: by default the host ' +
      'of this service\'s public URL, plus localhost and 127.0.0.1 on any port under `npm start`) and the one its ' +
      'nonce was issued for; its URI, when present, is on this service\'s public origin or http(s) on an allowed ' +
      'SIWS domain; ' +
      'Version, when present, is 1; Chain ID, when present, is the configured cluster (bare or "solana:" ' +
      'prefixed); the nonce was issued by this service to `address`, is unexpired and unused (consumed ' +
      'atomically: of concurrent verifications one succeeds); Issued At is not in the future nor before the ' +
      'nonce was issued, Expiration Time has not passed, Not Before has passed, each allowing ' +
      `${authDefaults.clockSkewSeconds} s of clock skew (SIWS_CLOCK_SKEW_SECONDS). On success the nonce is ` +
      'consumed, the user is created on first login, and a JWT is returned (`token_type` Bearer, lifetime ' +
      `\`expires_in\` seconds: ${seconds(authDefaults.jwtTtlSeconds)} by default, JWT_TTL_SECONDS). With ` +
      '`set_cookie: true` the same token is also set as the `bazaar_session` cookie (HttpOnly, Secure, ' +
      'SameSite=Strict, Path=/). Each refusal is 401 login-failed with a `reason` member naming the field and ' +
      `\`detail\` saying why: ${reasonList}. ` +
      'A wallet whose account a moderator suspended or banned gets 403 account-suspended (`account_status`, `until`) ' +
      'once its signature checked out (the nonce is consumed). ' +
      rateLimitText,
    body: VerifyLoginBody,
    responses: { 200: LoginResponse, ...verifyLogin.responses },
    metadata: verifyLogin.metadata,
  },
  logout: {
    method: 'POST',
    path: '/auth/logout',
    body: c.noBody(),
    summary: 'Log out: revoke this session\'s access token',
    description:
      'Revokes the access token (JWT) the request authenticates with, as Bearer or as the `bazaar_session` cookie, ' +
      'on the server: from now on every request with it is 401 invalid-token ("the session was logged out") ' +
      'until it would have expired (`token_expires_at`); on other replicas within 5 s (their principal cache). ' +
      'Also expires the `bazaar_session` cookie. Other sessions of the same wallet stay valid. An API key or ' +
      'a personal access token does not log out (403 forbidden / insufficient-scope): revoke it with its own route.',
    responses: { 200: LogoutResponse, ...logout.responses },
    metadata: logout.metadata,
  },
});

export type SignInInput = z.infer<typeof SignInInput>;
export type RequestLoginBody = z.infer<typeof RequestLoginBody>;
export type RequestLoginResponse = z.infer<typeof RequestLoginResponse>;
export type VerifyLoginBody = z.infer<typeof VerifyLoginBody>;
export type LoginResponse = z.infer<typeof LoginResponse>;
export type LogoutResponse = z.infer<typeof LogoutResponse>;
