/**
 * Response compression (issue 23 item 5): gzip or brotli, as the client's Accept-Encoding asks, for
 * responses of at least COMPRESSION_THRESHOLD_BYTES (1 kB), by the `compression` middleware (expressjs,
 * 1.8.x: brotli at quality 4). Below the threshold the saving does not pay for the CPU; `Vary:
 * Accept-Encoding` is set on every response the middleware considers, compressed or not.
 *
 * Never compressed:
 * - the event stream (text/event-stream): a compressor buffers, and each event must reach the client when
 *   written (the stream also flushes nothing through a gzip window);
 * - responses that carry a secret issued to this request (SECRET_BEARING_ROUTES: the login JWT, a personal
 *   access token, a webhook signing secret) next to text the request itself chose: the BREACH attack
 *   (CVE-2013-3587) recovers a secret from compressed sizes when an attacker can reflect guesses next to
 *   it. Other responses are safe to compress: the session cookie is SameSite=Strict and Bearer tokens are
 *   never sent by a browser on its own, so another site cannot make a victim's browser fetch authenticated
 *   JSON with guesses in it, and the secrets above are the only ones a response body holds
 *   (docs/threat-model.md, "Text, transport and network").
 * - responses already encoded (the web app's pre-compressed files, http/web-app.ts).
 */
import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';
import { contract } from '@bazaar/contract';
import type { AppRoute } from '@ts-rest/core';
import { ROUTE_PATTERNS } from './route-table.js';

/** Smallest response body compressed, bytes. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** Routes whose response body carries a secret issued to the request: never compressed (BREACH). */
export const SECRET_BEARING_ROUTES: readonly AppRoute[] = [
  contract.auth.verifyLogin,
  contract.tokens.createToken,
  contract.webhooks.createWebhook,
  contract.webhooks.rotateWebhookSecret,
];

const secretPatterns = ROUTE_PATTERNS.filter((p) => SECRET_BEARING_ROUTES.some((r) => r.method === p.method && r.path === p.path));

/** Does this request's response carry a secret (SECRET_BEARING_ROUTES)? */
export function carriesSecret(req: Request): boolean {
  return secretPatterns.some((p) => p.method === req.method && p.regex.test(req.path));
}

const isEventStream = (req: Request, res: Response) =>
  String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream') || /text\/event-stream/.test(req.headers.accept ?? '');

/** The compression middleware with the rules above. */
export function compressResponses(): RequestHandler {
  return compression({
    threshold: COMPRESSION_THRESHOLD_BYTES,
    filter: (req, res) => !isEventStream(req, res) && !carriesSecret(req) && compression.filter(req, res),
  });
}
