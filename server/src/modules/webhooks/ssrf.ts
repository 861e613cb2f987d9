/**
 * SSRF guard of webhook URLs (OWASP "Server-Side Request Forgery Prevention"): a webhook URL must be
 * http(s) without credentials and every address its host resolves to must be public unicast
 * (ipaddr.js `range()` 'unicast'; IPv4-mapped IPv6 is judged as the IPv4 address; IPv6 only inside
 * global unicast 2000::/3, so IPv4-compatible `::7f00:1` and site-local fec0::/10 are refused). Loopback, private
 * (RFC 1918, fc00::/7), link-local (169.254/16 with cloud metadata, fe80::/10), CGNAT, multicast,
 * reserved, unspecified and the like are refused unless `allowPrivate` (development).
 *
 * Checked when the URL is registered (400 webhook-url-refused) and again at every delivery through
 * `guardedLookup`, the DNS lookup the sender's socket uses: the connection goes to an address that
 * was checked, so a host re-pointed to 127.0.0.1 after registration (DNS rebinding) is refused too.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../../errors.js';

/** IPv6 global unicast, the only IPv6 space that is public (RFC 4291 §2.4, IANA IPv6 address space). */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * Why an address is refused, or null when it is public unicast (or `allowPrivate`).
 *
 * IPv4 (and IPv4-mapped IPv6, judged as its IPv4 address): ipaddr.js `range()` must be 'unicast'.
 * IPv6: an allowlist, not a list of bad ranges: only global unicast 2000::/3, and within it what
 * ipaddr.js calls 'unicast' (not 6to4, Teredo, documentation, ...). Everything outside 2000::/3 is
 * refused, including what ipaddr.js leaves as 'unicast' there: IPv4-compatible addresses
 * (`::7f00:1` = 127.0.0.1, RFC 4291 §2.5.5.1, deprecated), site-local fec0::/10 (RFC 3879,
 * deprecated; still routed inside some networks) and unassigned space.
 */
export function refusedAddress(address: string, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const ip = ipaddr.process(address); // IPv4-mapped IPv6 -> IPv4
  if (ip.kind() === 'ipv6' && !(ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) {
    return `${address} is not an IPv6 global unicast address (2000::/3)`;
  }
  const range = ip.range();
  return range === 'unicast' ? null : `${address} is a ${range} address`;
}

/** Syntax rules of a webhook URL; the DomainError to answer, or null. */
export function urlProblem(raw: string): DomainError | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return new DomainError('webhook-url-refused', `"${raw}" is not a URL.`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return new DomainError('webhook-url-refused', `Webhook URLs must be http or https, not ${u.protocol}`);
  if (u.username || u.password) return new DomainError('webhook-url-refused', 'Webhook URLs must not carry credentials (user:password@).');
  return null;
}

/**
 * Check `raw` now: syntax, then every address its host resolves to. Throws 400 webhook-url-refused.
 * `resolve` is a seam for tests (default: the system resolver, every address).
 */
export async function assertWebhookUrl(
  raw: string,
  allowPrivate: boolean,
  resolve: (host: string) => Promise<string[]> = async (h) => (await dns.lookup(h, { all: true })).map((a) => a.address),
): Promise<void> {
  const bad = urlProblem(raw);
  if (bad) throw bad;
  // private addresses allowed (development): every address passes, so the host is not even resolved
  if (allowPrivate) return;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : await resolve(host);
  } catch {
    throw new DomainError('webhook-url-refused', `The host ${host} of the webhook URL does not resolve.`);
  }
  if (addresses.length === 0) throw new DomainError('webhook-url-refused', `The host ${host} of the webhook URL does not resolve.`);
  for (const a of addresses) {
    const why = refusedAddress(a, allowPrivate);
    if (why) throw new DomainError('webhook-url-refused', `The webhook URL's host ${host} resolves to a non-public address (${why}).`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http(s).request that refuses non-public addresses (the connection-time SSRF check). */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: object, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      for (const a of list) {
        const why = refusedAddress(a.address, allowPrivate);
        if (why) {
          const e = Object.assign(new Error(`refused address: ${why}`), { code: 'EADDRREFUSED' });
          return callback(e, '');
        }
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
