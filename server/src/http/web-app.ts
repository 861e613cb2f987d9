/**
 * The reference web app (web/, built to web/dist by `npm run web:build`) served at /app/ on the API's
 * own origin: its calls are same-origin (no CORS), and SIWS takes the page's host as `domain`, which
 * is the service's own host. Not built (no web/dist/index.html): /app answers 404 like any unknown path.
 *
 * Pre-compressed files (issue 23 item 5): the build writes `<file>.br` and `<file>.gz` next to each
 * compressible asset (scripts/precompress.mjs, brotli at quality 11 and gzip at level 9, more than a
 * request-time compressor can afford). A GET of the file is answered with the brotli variant when the
 * client accepts `br`, else the gzip one when it accepts `gzip`, else the file itself, with
 * `Content-Encoding`, the original file's `Content-Type` and `Vary: Accept-Encoding` (appended: CORS's
 * `Vary: Origin` stays). A dozen lines rather than express-static-gzip 3.0.2, which overwrites `Vary`.
 */
import path from 'node:path';
import { existsSync, readdirSync } from 'node:fs';
import express, { type RequestHandler } from 'express';
import { REPO_ROOT } from '../db/migrate.js';

/** Mount path of the web app. */
export const WEB_APP_PATH = '/app';
/** Where `npm run web:build` writes the app. */
export const WEB_APP_DIR = path.join(REPO_ROOT, 'web', 'dist');

/** Encodings of pre-compressed siblings, in the server's order of preference, and their file suffixes. */
const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const;

/** URL path (from the mount point, `/assets/x.js`) -> the encodings whose sibling file exists. */
function precompressedFiles(dir: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = `${sub}/${entry.name}`;
      if (entry.isDirectory()) {
        walk(rel);
        continue;
      }
      const enc = ENCODINGS.find((e) => rel.endsWith(e.suffix));
      if (!enc) continue;
      const original = rel.slice(0, -enc.suffix.length);
      if (!existsSync(path.join(dir, original))) continue;
      const set = out.get(original) ?? new Set<string>();
      set.add(enc.name);
      out.set(original, set);
    }
  };
  walk('');
  return out;
}

/**
 * Static files of the built app under WEB_APP_PATH (`/app` redirects to `/app/`); hashed assets are
 * cached for a year, index.html never; pre-compressed variants as the module comment says. Null when
 * `dir` holds no build.
 */
export function webAppRoutes(dir: string = WEB_APP_DIR): RequestHandler | null {
  if (!existsSync(path.join(dir, 'index.html'))) return null;
  const variants = precompressedFiles(dir);
  const serve = express.static(dir, {
    index: 'index.html',
    setHeaders(res, file) {
      res.setHeader('Cache-Control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') {
      let file: string | null = null;
      try {
        file = decodeURIComponent(req.path);
      } catch {
        // not percent-decodable: express.static answers it
      }
      if (file?.endsWith('/')) file += 'index.html';
      const encodings = file ? variants.get(file) : undefined;
      if (file && encodings) {
        res.vary('Accept-Encoding');
        const enc = req.headers['accept-encoding'] ? ENCODINGS.find((e) => encodings.has(e.name) && req.acceptsEncodings(e.name) === e.name) : undefined;
        if (enc) {
          const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
          res.setHeader('Content-Encoding', enc.name);
          res.type(path.extname(file));
          req.url = encodeURI(file + enc.suffix) + query;
        }
      }
    }
    serve(req, res, next);
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The web app's shareable page URLs, `/app/listings/{id}` and `/app/orders/{id}`: what people share and
 * what `/actions.json` maps to the Solana Actions (a blink client unfurls them; http/actions). The app
 * routes on the URL fragment, so a person opening one is redirected (302) to the app's route for it
 * (`/app/#/listings/{id}`). Anything but a UUID after the prefix is left to the static files (404).
 */
export function webAppShareablePages(): RequestHandler {
  return (req, res, next) => {
    const m = /^\/(listings|orders)\/([^/]+)\/?$/.exec(req.path);
    if (!m || !UUID.test(m[2]!) || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.redirect(302, `${WEB_APP_PATH}/#/${m[1]}/${m[2]!.toLowerCase()}`);
  };
}
