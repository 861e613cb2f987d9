/**
 * Errors in plain language with a next step. Every failure the app meets becomes a `Plain`: what
 * happened in words a buyer or seller understands, whether retrying may help (a network failure, a
 * busy or failing service), and the field errors of a validation problem (RFC 9457 `errors[]`, e.g.
 * `body.price`) by field name, for the form to place on the field.
 */
import { isProblem } from '@bazaar/client-sdk/lite';
import { ApiError } from './api.js';
import { DEFAULT_DECIMALS, formatAmount, formatClock } from './format.js';

export interface Plain {
  message: string;
  /** retrying the same request may work (network failure, 5xx, 429) */
  retry: boolean;
  /** field name (the last segment of the problem's path, e.g. "price") -> message */
  fields: Record<string, string>;
  /** the problem's slug (`type` without its base), when the service sent one */
  slug?: string;
  status?: number;
}

/** A fetch that never reached the service (offline, DNS, refused, CORS): the browser's TypeError. */
export class NetworkError extends Error {}

const slugOf = (type: unknown) => (typeof type === 'string' ? type.slice(type.lastIndexOf('/') + 1) : undefined);

type Json = Record<string, unknown>;

/**
 * "16.91 USDC and 0.002 SOL": what an insufficient-funds problem says is missing, per asset (`needed` and
 * `available`: FundsAmount, base units with the decimals and symbol); older services send only
 * `required_base_units` / `available_base_units` of one `balance` (token or sol).
 */
export function missingFunds(problem: Json): string | null {
  const parts: string[] = [];
  if (Array.isArray(problem.needed)) {
    const available = (Array.isArray(problem.available) ? problem.available : []) as Json[];
    for (const n of problem.needed as Json[]) {
      const have = available.find((a) => a.asset === n.asset && a.currency === n.currency);
      const short = BigInt(String(n.base_units ?? '0')) - BigInt(String(have?.base_units ?? '0'));
      if (short > 0n) parts.push(formatAmount(short, Number(n.decimals ?? 0), String(n.currency)));
    }
  } else if (problem.required_base_units !== undefined) {
    const sol = problem.balance === 'sol';
    const code = sol ? 'SOL' : String(problem.currency ?? '');
    const short = BigInt(String(problem.required_base_units)) - BigInt(String(problem.available_base_units ?? 0));
    if (short > 0n) parts.push(formatAmount(short, sol ? 9 : (DEFAULT_DECIMALS[code] ?? 0), code));
  }
  return parts.length ? parts.join(' and ') : null;
}

/** What the user reads for `e`, and whether a retry may help. */
export function plain(e: unknown): Plain {
  if (e instanceof NetworkError || e instanceof TypeError) {
    return { message: 'We could not reach the marketplace. Check your connection, then try again.', retry: true, fields: {} };
  }
  if (!(e instanceof ApiError)) return { message: e instanceof Error ? e.message : String(e), retry: false, fields: {} };
  const body = (isProblem(e.body) ? e.body : {}) as Json;
  const slug = slugOf(body.type);
  const base = { retry: false, fields: {} as Record<string, string>, slug, status: e.status };
  switch (slug) {
    case 'validation-error': {
      const errors = (body.errors ?? []) as { path: string; message: string }[];
      if (errors.some((x) => x.path.startsWith('params.'))) return { ...base, message: 'This link does not lead anywhere: check the address, or go back to the marketplace.' };
      for (const x of errors) base.fields[x.path.split('.').pop()!] = x.message;
      return { ...base, message: errors.length ? 'Please correct the marked fields.' : String(body.detail ?? body.title) };
    }
    case 'not-found':
      return { ...base, message: 'We could not find this: it may have been removed, or the link is wrong.' };
    case 'listing-unavailable':
      return {
        ...base,
        message: body.held_until
          ? `Another buyer is checking out this listing: it is reserved until ${formatClock(String(body.held_until))}. It comes back if they do not pay by then.`
          : 'This listing is no longer for sale.',
      };
    case 'insufficient-funds': {
      const missing = missingFunds(body);
      return { ...base, message: missing ? `Your wallet does not have enough: you need ${missing} more (SOL pays the network fee).` : 'Your wallet does not have enough to pay this order, and a little SOL for the network fee.' };
    }
    case 'own-listing':
      return { ...base, message: 'This is your own listing: you cannot buy it.' };
    case 'too-many-unpaid-orders':
      return { ...base, message: 'You already have the most unpaid orders allowed: pay one or let it expire first.' };
    case 'rate-limited':
      return { ...base, retry: true, message: 'Too many requests in a short time: wait a moment, then try again.' };
    case 'invalid-state-transition':
      return { ...base, message: `This order changed meanwhile: the page now shows what you can do.${body.detail ? ` (${String(body.detail)})` : ''}` };
    case 'forbidden':
      return { ...base, message: `Your account may not do this.${body.detail ? ` (${String(body.detail)})` : ''}` };
    case 'unauthorized':
    case 'invalid-token':
    case 'token-expired':
      return { ...base, message: 'Your session ended: sign in again.' };
  }
  if (e.status >= 500 || e.status === 408) return { ...base, retry: true, message: 'The service could not finish this just now. Please try again in a moment.' };
  return { ...base, message: e.message };
}
