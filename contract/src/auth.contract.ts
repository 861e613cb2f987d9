/**
 * Wallet login with Sign In With Solana (SIWS, the `solana:signIn` wallet-standard feature).
 *
 * 1. POST /auth/request_login {address} -> a single-use nonce and the exact `sign_in_input` to sign.
 * 2. The client builds the SIWS message text with `createSignInMessage(sign_in_input)` from
 *    @solana/wallet-standard-util (or the wallet's `signIn`), and the wallet signs it (ed25519).
 * 3. POST /auth/verify_login {address, signed_message, signature} -> a JWT (and optionally a cookie).
 *
 * The server checks: the nonce was issued by it for that address, is unused and unexpired (single use,
 * 5 minutes by default); the signed message parses as SIWS and matches the issued input (domain, address,
 * uri, chainId, nonce, issuedAt, expirationTime); the ed25519 signature verifies against `address`.
 * Any failure is 401 login-failed with `detail` naming the check.
 */
import { z } from 'zod';
import { Base64, c, named, Pubkey, Timestamp } from './common.js';
import { bodyProblems, routeErrors } from './problems.js';
import { User } from './users.contract.js';

export const SESSION_COOKIE_NAME = 'bazaar_session';
export const API_KEY_HEADER = 'X-API-Key';

/** SIWS nonce: at least 8 alphanumerics (the server issues 16..32). */
export const Nonce = z.string().regex(/^[A-Za-z0-9]{8,64}$/, 'must be 8..64 alphanumerics');

export const SignInInput = named(
  'SignInInput',
  z.object({
    domain: z.string().min(1).describe('RFC 4501 authority of the service, e.g. "bazaar.dev" or "localhost:3000"'),
    address: Pubkey,
    statement: z.string().describe('Human-readable statement shown by the wallet'),
    uri: z.string().url().describe('Origin of the service'),
    version: z.literal('1'),
    chainId: z.string().describe('Solana cluster: mainnet, devnet, testnet or localnet (optionally solana: prefixed)'),
    nonce: Nonce,
    issuedAt: Timestamp,
    expirationTime: Timestamp,
  }),
  'SIWS input (wallet-standard SolanaSignInInput); sign exactly createSignInMessage(sign_in_input)',
);

export const RequestLoginBody = named(
  'RequestLoginBody',
  z.object({ address: Pubkey.describe('Wallet that will sign in') }).strict(),
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
      signed_message: Base64.describe('Base64 of the exact UTF-8 bytes the wallet signed (the SIWS message)'),
      signature: Base64.describe('Base64 of the 64-byte ed25519 signature'),
      set_cookie: z
        .boolean()
        .optional()
        .describe('When true the response also sets the bazaar_session cookie (HttpOnly, Secure, SameSite=Lax)'),
    })
    .strict(),
);

export const LoginResponse = named(
  'LoginResponse',
  z.object({
    access_token: z.string().min(1).describe('JWT (HS256/EdDSA as configured), send as Authorization: Bearer'),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().positive().describe('Token lifetime in seconds (default 86400)'),
    expires_at: Timestamp,
    user: User,
  }),
);

const requestLogin = routeErrors('public', [...bodyProblems]);
const verifyLogin = routeErrors('public', ['login-failed', ...bodyProblems]);

export const auth = c.router({
  requestLogin: {
    method: 'POST',
    path: '/auth/request_login',
    summary: 'Request a wallet login nonce',
    description:
      'Public. Issues a single-use nonce bound to `address` (valid 5 minutes by default) and returns the SIWS ' +
      '`sign_in_input` the wallet must sign: domain and uri of this service, statement, version "1", chainId of ' +
      'the configured cluster, nonce, issuedAt, expirationTime. Sign the text produced by ' +
      '`createSignInMessage(sign_in_input)`. Rate-limited per IP and per address (429).',
    body: RequestLoginBody,
    responses: { 200: RequestLoginResponse, ...requestLogin.responses },
    metadata: requestLogin.metadata,
  },
  verifyLogin: {
    method: 'POST',
    path: '/auth/verify_login',
    summary: 'Verify a signed login message and get a token',
    description:
      'Public. Verifies the SIWS message and ed25519 signature against the nonce issued for `address`. On ' +
      'success the nonce is consumed, the user is created on first login, and a JWT is returned ' +
      '(`token_type` Bearer, lifetime `expires_in` seconds, 24 h by default). With `set_cookie: true` the ' +
      'same token is also set as the `bazaar_session` cookie (HttpOnly, Secure, SameSite=Lax, Path=/). ' +
      'Failures are 401 login-failed; `detail` names the failed check (nonce unknown, nonce used, nonce ' +
      'expired, signature invalid, domain mismatch, address mismatch, message malformed).',
    body: VerifyLoginBody,
    responses: { 200: LoginResponse, ...verifyLogin.responses },
    metadata: verifyLogin.metadata,
  },
});

export type SignInInput = z.infer<typeof SignInInput>;
export type RequestLoginBody = z.infer<typeof RequestLoginBody>;
export type RequestLoginResponse = z.infer<typeof RequestLoginResponse>;
export type VerifyLoginBody = z.infer<typeof VerifyLoginBody>;
export type LoginResponse = z.infer<typeof LoginResponse>;
