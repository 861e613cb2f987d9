/**
 * The reference web app (web/, built to web/dist by `npm run web:build`) served at /app/ on the API's
 * own origin: its calls are same-origin (no CORS), and SIWS takes the page's host as `domain`, which
 * is the service's own host. Not built (no web/dist/index.html): /app answers 404 like any unknown path.
 */
import path from 'node:path';
import { existsSync } from 'node:fs';
import express, { type RequestHandler } from 'express';
import { REPO_ROOT } from '../db/migrate.js';

/** Mount path of the web app. */
export const WEB_APP_PATH = '/app';
/** Where `npm run web:build` writes the app. */
export const WEB_APP_DIR = path.join(REPO_ROOT, 'web', 'dist');

/**
 * Static files of the built app under WEB_APP_PATH (`/app` redirects to `/app/`); hashed assets are
 * cached for a year, index.html never. Null when `dir` holds no build.
 */
export function webAppRoutes(dir: string = WEB_APP_DIR): RequestHandler | null {
  if (!existsSync(path.join(dir, 'index.html'))) return null;
  return express.static(dir, {
    index: 'index.html',
    setHeaders(res, file) {
      res.setHeader('Cache-Control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
