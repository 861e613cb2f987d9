/**
 * Sign In With Solana, server side. Pure functions (no I/O): build the input a wallet signs, and check
 * the message a wallet actually signed.
 *
 * The message is verified as signed, not compared with a copy of the input we issued: wallets and dApps
 * add optional fields (statement, notBefore, requestId, resources, a `solana:` chain id), drop the
 * milliseconds of `issuedAt` or re-serialise it (`…141Z` -> `…141000+00:00`). The signature covers the
 * exact bytes, so whatever the message says is what the wallet's owner agreed to; the server checks
 * that what it says is acceptable: address, signature, domain (allowed list), version, chain id, times
 * (with a stated skew). The nonce (issued to that address, unused, unexpired) is checked by the auth
 * service against the database (auth.service.ts), which consumes it atomically.
 *
 * Message format and field names: the wallet-standard `solana:signIn` feature (SolanaSignInInput) as
 * parsed and produced by @solana/wallet-standard-util (`parseSignInMessage`, `createSignInMessage`).
 */
import { createPublicKey, randomBytes, verify as cryptoVerify } from 'node:crypto';
import bs58 from 'bs58';
import { parseSignInMessage } from '@solana/wallet-standard-util';
import { authDefaults, type LoginFailureReason, type SignInInput } from '@bazaar/contract';

/** Statement of the sign-in input when request_login names none. */
export const SIWS_STATEMENT = authDefaults.statement;
const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 24 alphanumerics from the CSPRNG (rejection sampling: no modulo bias), ~143 bits. */
export function newNonce(length = 24): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHANUM[b % 62];
    }
  }
  return out;
}

/** A nonce as stored: issued to `address` for `domain` at `issuedAt`, usable until `expiresAt`. */
export interface IssuedNonce {
  nonce: string;
  address: string;
  domain: string;
  issuedAt: Date;
  expiresAt: Date;
}

/** What a dApp may ask request_login to put in the sign-in input (validated by the auth service). */
export interface SignInRequest {
  uri?: string;
  statement?: string;
  chainId?: string;
  requestId?: string;
  resources?: string[];
}

/**
 * The wallet-standard SolanaSignInInput for an issued nonce: `issuedAt`/`expirationTime` are the
 * nonce's (ISO-8601 with milliseconds, UTC), `uri` defaults to `defaultUri`, `chainId` is the
 * configured cluster (the request's own spelling of it when it named one), `statement` defaults to
 * SIWS_STATEMENT; `requestId`/`resources` only when requested.
 */
export function signInInputFor(n: IssuedNonce, defaults: { uri: string; chainId: string }, req: SignInRequest = {}): SignInInput {
  return {
    domain: n.domain,
    address: n.address,
    statement: req.statement ?? SIWS_STATEMENT,
    uri: req.uri ?? defaults.uri,
    version: '1',
    chainId: req.chainId ?? defaults.chainId,
    nonce: n.nonce,
    issuedAt: n.issuedAt.toISOString(),
    expirationTime: n.expiresAt.toISOString(),
    ...(req.requestId ? { requestId: req.requestId } : {}),
    ...(req.resources?.length ? { resources: req.resources } : {}),
  };
}

/** `solana:devnet` and `devnet` name the same cluster. */
export const normalizeChainId = (id: string): string => id.trim().replace(/^solana:/, '');

/**
 * Is `domain` (an RFC 4501 authority: host or host:port) in `allowed`? Entries are `host`, `host:port`
 * or `host:*` (any port, or none), compared case-insensitively.
 */
export function domainAllowed(domain: string, allowed: readonly string[]): boolean {
  const d = domain.toLowerCase();
  return allowed.some((entry) => {
    const e = entry.toLowerCase();
    if (e.endsWith(':*')) {
      const host = e.slice(0, -2);
      return d === host || (d.startsWith(`${host}:`) && /^\d{1,5}$/.test(d.slice(host.length + 1)));
    }
    return d === e;
  });
}

/**
 * May a SIWS `uri` (RFC 3986) name `uri`? Its origin must be one this service answers for: the origin of
 * `publicBaseUrl` (PUBLIC_BASE_URL), or http(s) on an allowed SIWS domain (`domainAllowed`: a frontend on
 * its own origin, e.g. `http://localhost:5173`). Anything else (`https://evil.example.com`, `javascript:`,
 * an unparsable text) is refused: a wallet shows the URI to its owner as what she signs in to.
 */
export function uriAllowed(uri: string, publicBaseUrl: string, domains: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  if (url.username || url.password) return false;
  return url.origin === new URL(publicBaseUrl).origin || domainAllowed(url.host, domains);
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * Milliseconds since the epoch of an RFC 3339 date-time (`2026-01-31T12:00:00Z`,
 * `…00.141Z`, `…00.141000+00:00`, `…00-05:00`), or null for anything else (Date.parse alone accepts
 * "Jan 1 2026" and 31 February). Fractions beyond milliseconds are truncated.
 */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, zone, zh, zm] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return null;
  if (zh !== undefined && (Number(zh) > 23 || Number(zm) > 59)) return null;
  const daysInMonth = new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  const ms = frac ? Number(frac.slice(1, 4).padEnd(3, '0')) : 0;
  const utc = Date.UTC(Number(y), month - 1, day, Number(h), Number(mi), Math.min(Number(s), 59), ms);
  const offsetMin = /^[Zz]$/.test(zone!) ? 0 : (zone!.startsWith('-') ? -1 : 1) * (Number(zh) * 60 + Number(zm));
  return utc - offsetMin * 60_000;
}

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4): the 32 raw key bytes follow. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Does `signature` (64 bytes) verify over `message` with the raw 32-byte Ed25519 `publicKey` (RFC 8032
 * Ed25519, pure: the message itself is signed, no pre-hash)? Never throws (a malformed key is false).
 *
 * Node's own crypto (OpenSSL's Ed25519), not the pure-JavaScript @noble/curves behind
 * @solana/wallet-standard-util's verifyMessageSignature: a SIWS login checks a signature twice (the
 * login rate limit's signedBy, then checkSignedMessage), and the flash sale's CPU profile put ed25519
 * arithmetic at about 9 % of the server's time (issue 28). OpenSSL follows RFC 8032's strict decoding
 * (rejects a non-canonical S); a wallet's signature verifies the same under both.
 */
export function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    return cryptoVerify(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * Did the key of `address` (base58) sign `signedMessageBase64` with `signatureBase64` (64-byte ed25519
 * over the exact bytes)? Only that, no SIWS rule: the login rate limit uses it to tell a wallet's own
 * verify_login requests from requests that merely name the wallet (issue 20 item 5). Never throws.
 */
export function signedBy(address: string, signedMessageBase64: string, signatureBase64: string): boolean {
  try {
    const publicKey = bs58.decode(address);
    const message = new Uint8Array(Buffer.from(signedMessageBase64, 'base64'));
    const signature = new Uint8Array(Buffer.from(signatureBase64, 'base64'));
    if (publicKey.length !== 32 || signature.length !== 64) return false;
    return ed25519Verify(publicKey, message, signature);
  } catch {
    return false;
  }
}

/** The SIWS rules of this service (config: SIWS_DOMAINS, SIWS_CHAIN_ID, SIWS_CLOCK_SKEW_SECONDS). */
export interface SiwsPolicy {
  /** allowed domains: `host`, `host:port` or `host:*` */
  domains: readonly string[];
  /** the service's public origin (PUBLIC_BASE_URL): a message's URI may name it (see uriAllowed) */
  publicBaseUrl: string;
  /** configured cluster, bare or `solana:` prefixed */
  chainId: string;
  /** clock skew allowed on every time field, seconds */
  skewSeconds: number;
}

/** A signed SIWS message that passed the stateless checks. */
export interface CheckedSignIn {
  address: string;
  domain: string;
  /** undefined when the message carries no nonce (the service refuses it: reason `nonce`) */
  nonce?: string;
  /** ms since the epoch, when the message has Issued At */
  issuedAtMs?: number;
}

export type SiwsCheck = { ok: true; message: CheckedSignIn } | { ok: false; reason: LoginFailureReason; detail: string };

const refuse = (reason: LoginFailureReason, detail: string): SiwsCheck => ({ ok: false, reason, detail });

/**
 * The checks that need no database, in this order: the bytes parse as SIWS (`message`), the message's
 * address is `address` (`address`), the 64-byte ed25519 signature verifies over the exact bytes with
 * `address` (`signature`), domain allowed (`domain`), URI on an allowed origin when present (`uri`,
 * uriAllowed), Version 1 when present (`version`), Chain ID the
 * configured cluster when present (`chain_id`), Issued At / Expiration Time / Not Before well-formed and
 * within `now` ± skew when present (`issued_at`, `expiration_time`, `not_before`). Never throws.
 *
 * `address` is base58; `signedMessage` the exact bytes the wallet signed; `signature` 64 bytes.
 */
export function checkSignedMessage(
  address: string,
  signedMessage: Uint8Array,
  signature: Uint8Array,
  now: Date,
  policy: SiwsPolicy,
): SiwsCheck {
  const parsed = parseSignInMessage(signedMessage);
  if (!parsed) return refuse('message', 'message malformed (not a Sign In With Solana message)');
  if (parsed.address !== address) return refuse('address', `address mismatch (the message is for ${parsed.address.slice(0, 64)})`);
  let publicKey: Uint8Array;
  try {
    publicKey = bs58.decode(address);
  } catch {
    return refuse('address', 'address mismatch (not a base58 public key)');
  }
  if (signature.length !== 64 || publicKey.length !== 32) return refuse('signature', 'signature invalid (want 64 bytes)');
  if (!ed25519Verify(publicKey, signedMessage, signature)) {
    return refuse('signature', 'signature invalid (does not verify over the signed message with this address)');
  }
  if (!domainAllowed(parsed.domain, policy.domains)) {
    return refuse('domain', `domain mismatch (${parsed.domain.slice(0, 253)} is not an allowed SIWS domain)`);
  }
  if (parsed.uri !== undefined && !uriAllowed(parsed.uri, policy.publicBaseUrl, policy.domains)) {
    return refuse('uri', `uri mismatch (${parsed.uri.slice(0, 200)} is not on an allowed origin)`);
  }
  if (parsed.version !== undefined && parsed.version !== '1') return refuse('version', `version ${parsed.version.slice(0, 20)} is not supported (want 1)`);
  if (parsed.chainId !== undefined && normalizeChainId(parsed.chainId) !== normalizeChainId(policy.chainId)) {
    return refuse('chain_id', `chain id mismatch (${parsed.chainId.slice(0, 64)}; this service runs on ${normalizeChainId(policy.chainId)})`);
  }
  const t = now.getTime();
  const skew = policy.skewSeconds * 1000;
  let issuedAtMs: number | undefined;
  if (parsed.issuedAt !== undefined) {
    const v = parseRfc3339(parsed.issuedAt);
    if (v === null) return refuse('issued_at', 'issued at is not an RFC 3339 date-time');
    if (v > t + skew) return refuse('issued_at', 'message issued in the future');
    issuedAtMs = v;
  }
  if (parsed.expirationTime !== undefined) {
    const v = parseRfc3339(parsed.expirationTime);
    if (v === null) return refuse('expiration_time', 'expiration time is not an RFC 3339 date-time');
    if (v <= t - skew) return refuse('expiration_time', 'message expired');
  }
  if (parsed.notBefore !== undefined) {
    const v = parseRfc3339(parsed.notBefore);
    if (v === null) return refuse('not_before', 'not before is not an RFC 3339 date-time');
    if (v > t + skew) return refuse('not_before', 'message not yet valid');
  }
  return { ok: true, message: { address: parsed.address, domain: parsed.domain, nonce: parsed.nonce, issuedAtMs } };
}
