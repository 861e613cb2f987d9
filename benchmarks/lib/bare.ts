/**
 * The floor the API is compared with: a bare Express app answering GET /bare with a fixed JSON body
 * (the bytes of a real listing response, BARE_BODY_FILE), no middleware, no database.
 *
 *   PORT=3110 BARE_BODY_FILE=listing.json node --import tsx benchmarks/lib/bare.ts
 */
import { readFileSync } from 'node:fs';
import express from 'express';

const body = process.env.BARE_BODY_FILE ? readFileSync(process.env.BARE_BODY_FILE, 'utf8') : '{"ok":true}';
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/bare', (_req, res) => {
  res.type('application/json').send(body);
});
const server = app.listen(Number(process.env.PORT ?? 3110), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
