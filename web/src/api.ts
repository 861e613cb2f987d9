/**
 * The API client and the session, shared by every page.
 *
 * - `client`: `createBazaarClient` from the published SDK package's `lite` entry point: the same typed client
 *   over the contract's table of methods and paths, without the contract's zod schemas (the app does not
 *   validate the service's answers at run time; the schemas were most of the first load). The API is the
 *   page's own origin when the server serves the app at /app (`npm start`); under `vite` dev (mode
 *   development) it is VITE_BAZAAR_URL of web/.env.development, http://localhost:3000 (`npm start` allows
 *   http://localhost:* origins).
 * - The session: sign-in asks the service for its `bazaar_session` cookie (HttpOnly, SameSite=Strict) as
 *   well as the token. The token stays in this tab's sessionStorage (it survives a reload, ends with the
 *   tab); who is signed in (wallet, wallet name, expiry: no secret) goes to localStorage, so a new tab
 *   of the same origin knows the user and its requests carry the cookie instead of a token. A 401 from any
 *   call signs out.
 */
import { createBazaarClient, isProblem } from '@bazaar/client-sdk/lite';

export const API_ORIGIN: string = import.meta.env.VITE_BAZAAR_URL || window.location.origin;

/**
 * Every call revalidates (fetch `cache: 'no-cache'`): public reads carry `Cache-Control: public, max-age=5` for
 * CDNs and shared caches, but a shopper who just listed, ordered or reloaded must see the service's answer now,
 * not the browser's copy of a few seconds ago. The browser sends the stored ETag as If-None-Match, so an
 * unchanged answer costs a 304 without a body (docs/performance.md section 2).
 */
const revalidatingFetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, { ...init, cache: init?.cache ?? 'no-cache' });

export const client = createBazaarClient({ baseUrl: API_ORIGIN, fetch: revalidatingFetch });

/** What a signed-in tab remembers. `chain` is the Wallet Standard chain of the SIWS login, e.g. "solana:localnet". */
export interface Session {
  /** the access token; absent in a tab opened later, whose requests carry the session cookie */
  token?: string;
  /** base58 wallet address */
  wallet: string;
  /** Wallet Standard name of the wallet that signed in (to find it again after a reload) */
  walletName: string;
  chain: `solana:${string}`;
  /** ISO 8601 */
  expiresAt: string;
}

const KEY = 'bazaar.session';
const PROFILE_KEY = 'bazaar.profile';
let current: Session | null = null;
const listeners = new Set<(s: Session | null) => void>();

/** The signed-in session, or null (also once its token expired). */
export function session(): Session | null {
  if (current && Date.parse(current.expiresAt) <= Date.now()) setSession(null);
  return current;
}

/** Sign in (a session) or out (null): sets the token on `client` and tells the listeners. */
export function setSession(s: Session | null): void {
  current = s;
  client.setToken(s?.token ?? null);
  if (s) {
    if (s.token) sessionStorage.setItem(KEY, JSON.stringify(s));
    const { token: _secret, ...profile } = s;
    localStorage.setItem(PROFILE_KEY, JSON.stringify(profile));
  } else {
    sessionStorage.removeItem(KEY);
    localStorage.removeItem(PROFILE_KEY);
  }
  for (const l of listeners) l(s);
}

/** Subscribe to sign-in and sign-out; returns the unsubscribe function. */
export function onSessionChange(listener: (s: Session | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Restore the session: this tab's (with its token), else the one another tab signed in (the cookie). */
export function restoreSession(): void {
  try {
    const saved = sessionStorage.getItem(KEY) ?? localStorage.getItem(PROFILE_KEY);
    if (saved) setSession(JSON.parse(saved) as Session);
    session();
  } catch {
    setSession(null);
  }
}

/** Sign out: the service revokes the token and expires its cookie; this browser forgets the session. */
export async function signOut(): Promise<void> {
  await client.auth.logout().catch(() => undefined);
  setSession(null);
}

/** Thrown by `ok()` for any answer but the expected status; carries the RFC 9457 problem when there is one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(isProblem(body) ? `${body.title}${body.detail ? `: ${body.detail}` : ''}` : `The service answered HTTP ${status}.`);
  }
}

/**
 * The body of an SDK answer with the expected status, else an ApiError carrying the RFC 9457 problem.
 * A 401 (token expired or revoked) also ends the session.
 */
export function ok<R extends { status: number; body: unknown }, S extends R['status']>(res: R, expected: S): Extract<R, { status: S }>['body'] {
  if (res.status === expected) return res.body as Extract<R, { status: S }>['body'];
  if (res.status === 401 && current) setSession(null);
  throw new ApiError(res.status, res.body);
}
