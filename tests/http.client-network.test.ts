/**
 * The client network per-source limits count (lib/client-network.ts): an IPv4 address, an IPv6 /64.
 */
import { describe, expect, it } from 'vitest';
import { clientNetwork } from '../server/src/lib/client-network';

describe('clientNetwork', () => {
  it('IPv4 as it is, IPv4-mapped IPv6 as IPv4', () => {
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetwork('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetwork('::ffff:cb00:7107')).toBe('203.0.113.7');
  });

  it('IPv6 as its /64: addresses of one subscriber prefix are one network, the next prefix is another', () => {
    const net = '2001:db8:7:7::/64';
    for (const ip of ['2001:db8:7:7::1', '2001:DB8:7:7:abcd::2', '2001:db8:7:7:ffff:ffff:ffff:ffff', '2001:db8:0007:0007:0:0:0:9']) {
      expect(clientNetwork(ip)).toBe(net);
    }
    expect(clientNetwork('2001:db8:7:8::1')).toBe('2001:db8:7:8::/64');
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64');
  });

  it('anything else is kept as given; no address is "unknown"', () => {
    expect(clientNetwork(undefined)).toBe('unknown');
    expect(clientNetwork('not-an-ip')).toBe('not-an-ip');
  });
});
