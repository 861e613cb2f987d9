/**
 * The API client and the session, shared by every page.
 *
 * - `client`: `createBazaarClient` from the published SDK package. The API is the page's own origin when
 *   the server serves the app at /app (`npm start`); under `vite` dev (mode development) it is VITE_BAZAAR_URL
 *   of web/.env.development, http://localhost:3000 (`npm start` allows http://localhost:* origins).
 * - The session (access token, wallet address, wallet name, SIWS chain) lives in sessionStorage: it
 *   survives a reload of the tab and ends with it; the token expires after `expiresAt` (the server's
 *   JWT_TTL_SECONDS), and a 401 from any call signs out.
 */
import { createBazaarClient, isProblem } from '@bazaar/client-sdk';

export const API_ORIGIN: string = import.meta.env.VITE_BAZAAR_URL || window.location.origin;

export const client = createBazaarClient({ baseUrl: API_ORIGIN });

/** What a signed-in tab remembers. `chain` is the Wallet Standard chain of the SIWS login, e.g. "solana:localnet". */
export interface Session {
  token: string;
  /** base58 wallet address */
  wallet: string;
  /** Wallet Standard name of the wallet that signed in (to find it again after a reload) */
  walletName: string;
  chain: `solana:${string}`;
  /** ISO 8601 */
  expiresAt: string;
}

const KEY = 'bazaar.session';
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
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
  for (const l of listeners) l(s);
}

export function onSessionChange(listener: (s: Session | null) => void): void {
  listeners.add(listener);
}

/** Restore the session of this tab (call once at start-up). */
export function restoreSession(): void {
  const saved = sessionStorage.getItem(KEY);
  if (!saved) return;
  try {
    setSession(JSON.parse(saved) as Session);
    session();
  } catch {
    setSession(null);
  }
}

/** Thrown by `ok()` for any answer but the expected status; the message is what the user reads. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(
      isProblem(body)
        ? `${body.title}${body.detail ? `: ${body.detail}` : ''}`
        : `The service answered HTTP ${status}.`,
    );
  }
}

/**
 * The body of an SDK answer with the expected status, else an ApiError carrying the RFC 9457 problem.
 * A 401 (token expired or revoked) also ends the session.
 */
export function ok<R extends { status: number; body: unknown }, S extends R['status']>(
  res: R,
  expected: S,
): Extract<R, { status: S }>['body'] {
  if (res.status === expected) return res.body as Extract<R, { status: S }>['body'];
  if (res.status === 401) setSession(null);
  throw new ApiError(res.status, res.body);
}
