/**
 * GET /openapi.json and the Swagger UI at /docs, pointed at the service that serves them.
 *
 * The committed openapi.json lists a placeholder server (http://localhost:3000, the local default). The
 * served document replaces it with this service's origin: PUBLIC_BASE_URL when it is configured, else
 * the origin the request came to (`req.protocol`, which honours TRUST_PROXY, and the Host header). So
 * "Try it out" calls the service whatever its port, and from the page's own origin when PUBLIC_BASE_URL
 * is not set (the page's CSP allows those calls: `docsConnectSrc`). With PUBLIC_MARKETPLACE=true the
 * operations it opens say so in their `security` (withPublicMarketplace).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router, type Request } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Config } from '../config.js';
import { REPO_ROOT } from '../db/migrate.js';

type OpenApiDocument = Record<string, unknown> & { servers?: { url: string; description?: string }[] };

let committed: OpenApiDocument | undefined;
/** openapi.json as committed (read once). */
function committedDocument(): OpenApiDocument {
  committed ??= JSON.parse(readFileSync(path.join(REPO_ROOT, 'openapi.json'), 'utf8')) as OpenApiDocument;
  return committed;
}

/** A Host header value we are willing to echo back: host name or IP literal, optional port. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The origin (scheme://host[:port], no path) the served document names as its server: PUBLIC_BASE_URL
 * when configured, else the origin of `req`; PUBLIC_BASE_URL's default when the Host header is absent or
 * not a plain host.
 */
export function servedOrigin(config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlSet'>, req: Request): string {
  if (config.publicBaseUrlSet) return config.publicBaseUrl;
  const host = req.get('host');
  return host && HOST.test(host) ? `${req.protocol}://${host}` : config.publicBaseUrl;
}

/**
 * The origin to announce (the `npm start` banner): PUBLIC_BASE_URL when configured, else
 * http://localhost:<port the server listens on>, the default of PUBLIC_BASE_URL and so of the SIWS
 * domain. /docs opened there names the same origin in its /openapi.json (servedOrigin).
 */
export function announcedOrigin(config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlSet'>, port: number): string {
  return config.publicBaseUrlSet ? config.publicBaseUrl : `http://localhost:${port}`;
}

/** The CSP `connect-src` of the service's pages: its own origin and, when configured, PUBLIC_BASE_URL's. */
export function docsConnectSrc(config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlSet'>): string[] {
  return config.publicBaseUrlSet ? ["'self'", new URL(config.publicBaseUrl).origin] : ["'self'"];
}

type Operation = { security?: unknown[]; 'x-bazaar-public-marketplace'?: boolean };

/**
 * `doc` as this service answers it: with PUBLIC_MARKETPLACE=true the operations the contract marks
 * `x-bazaar-public-marketplace` (metadata.access.public_marketplace) also accept no credential, which
 * OpenAPI states as an empty security requirement `{}` next to the credentials (so /docs "Try it out"
 * sends them without one). Other operations are left as committed.
 */
export function withPublicMarketplace(doc: OpenApiDocument, publicMarketplace: boolean): OpenApiDocument {
  if (!publicMarketplace) return doc;
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  const open = Object.fromEntries(
    Object.entries(paths).map(([path, ops]) => [
      path,
      Object.fromEntries(
        Object.entries(ops).map(([method, op]) => [
          method,
          op['x-bazaar-public-marketplace'] ? { ...op, security: [...(op.security ?? []), {}] } : op,
        ]),
      ),
    ]),
  );
  return { ...doc, paths: open };
}

/** Routes GET /openapi.json (servers = servedOrigin) and /docs (Swagger UI loading /openapi.json). */
export function docsRoutes(config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlSet' | 'publicMarketplace'>): Router {
  const router = Router();
  let served: OpenApiDocument | undefined;
  router.get('/openapi.json', (req, res) => {
    served ??= withPublicMarketplace(committedDocument(), config.publicMarketplace);
    res.json({ ...served, servers: [{ url: servedOrigin(config, req), description: 'This service (API paths start with /api/v1)' }] });
  });
  router.use(
    '/docs',
    swaggerUi.serve,
    // validatorUrl null: no badge image from validator.swagger.io (another origin, refused by the CSP)
    swaggerUi.setup(undefined, { swaggerOptions: { url: '/openapi.json', validatorUrl: null } }),
  );
  return router;
}
