/**
 * The client network of a request, as per-source limits count it: an IPv4 address as it is, an IPv6
 * address as its /64 prefix (RFC 4291 §2.5.4: the interface identifier is the low 64 bits, and one
 * subscriber is routinely given a whole /64, so counting single IPv6 addresses would let one client
 * count as 2^64 clients). IPv4-mapped IPv6 (`::ffff:a.b.c.d`, what a dual-stack socket reports) is the
 * IPv4 address. Behind a reverse proxy the address is the one Express derives with `trust proxy`
 * (TRUST_PROXY).
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (zone id dropped, `::` expanded, embedded IPv4 folded). */
function ipv6Groups(address: string): number[] | null {
  let a = address.split('%')[0]!.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (v4) {
    const o = v4[1]!.split('.').map(Number);
    a = `${a.slice(0, -v4[1]!.length)}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const [head, tail] = a.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const groups = [...h, ...Array<string>(Math.max(0, fill)).fill('0'), ...t].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/**
 * `a.b.c.d` for IPv4 (and IPv4-mapped IPv6), `x:x:x:x::/64` for IPv6, the input itself for anything
 * else (e.g. `undefined` socket addresses become 'unknown'). Pure; never throws.
 */
export function clientNetwork(ip: string | undefined | null): string {
  if (!ip) return 'unknown';
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip.split('%')[0]!)) return ip;
  const g = ipv6Groups(ip);
  if (!g) return ip;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.');
  }
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}
