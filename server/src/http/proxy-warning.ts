/**
 * Client IP and reverse proxies (TRUST_PROXY, Express `trust proxy`).
 *
 * Every per-IP limit (the login limits, http/security.ts) keys on `req.ip`. With TRUST_PROXY=0 (the
 * default) that is the TCP peer: behind a reverse proxy or load balancer the peer is the proxy, so every
 * client shares ONE login bucket (and one client's flood locks everybody out of login). The start-up
 * banner and the `bazaar listening` log say which IP is used (`clientIpNote`), and the first request that
 * arrives with `X-Forwarded-For` while no proxy is trusted logs one warning (`untrustedProxyWarning`):
 * it is the sign that a proxy is in front and TRUST_PROXY was forgotten.
 */
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';

/** One line for the start-up banner and log: where the client IP of the per-IP limits comes from. */
export function clientIpNote(trustProxy: number): string {
  return trustProxy > 0
    ? `client IP from X-Forwarded-For, ${trustProxy} proxy hop(s) trusted (TRUST_PROXY=${trustProxy})`
    : 'client IP = the TCP peer (TRUST_PROXY=0): behind a reverse proxy every client shares one login rate-limit bucket; set TRUST_PROXY to the number of proxies in front';
}

/**
 * Middleware: with `trustProxy` 0, log one warning (per process) when the first request carrying
 * `X-Forwarded-For` arrives, naming the peer that sent it; never again after that, and nothing at all
 * when a proxy is trusted. Passes every request on unchanged.
 */
export function untrustedProxyWarning(trustProxy: number, log: Logger): RequestHandler {
  let warned = trustProxy > 0;
  return (req, _res, next) => {
    if (!warned && req.headers['x-forwarded-for'] !== undefined) {
      warned = true;
      log.warn(
        { peer: req.socket.remoteAddress, x_forwarded_for: String(req.headers['x-forwarded-for']).slice(0, 200) },
        'a request arrived with X-Forwarded-For from a proxy that is not trusted (TRUST_PROXY=0): every client behind it shares one ' +
          'login rate-limit bucket; set TRUST_PROXY to the number of proxies in front (warned once)',
      );
    }
    next();
  };
}
