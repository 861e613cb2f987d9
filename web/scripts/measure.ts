/**
 * Measure the web app (issue 23): the bundle (web/dist, raw, gzip and brotli) and the time until the
 * marketplace page shows its listings in headless Chromium, cold (a new browser context: empty cache)
 * and warm (a reload of the same page), each the median of RUNS.
 *
 *   npm run -s web:build && npx tsx web/scripts/measure.ts          # prints a JSON line
 *
 * The service runs in process (tests/helpers/app.ts: PGlite, the in-memory FakeChain) with LISTINGS
 * listings of one seller; the page is opened by a signed-in buyer (its session put in sessionStorage
 * before the app starts, as a reload of a signed-in tab has it). "Listings rendered": the first
 * min(LISTINGS, 20) listing cards are in the list named "Listings" (measured with performance.now(),
 * from the navigation's start).
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync } from 'node:zlib';
import request from 'supertest';
import { chromium } from 'playwright-core';
import { API, createTestApp, loginAs } from '../../tests/helpers/app.js';
import { FakeChain } from '../../tests/helpers/fake-chain.js';
import { chunks, totals } from './budget.js';

const DIST = process.env.WEB_DIST ?? fileURLToPath(new URL('../dist', import.meta.url));
const LISTINGS = Number(process.env.LISTINGS ?? 50);
const RUNS = Number(process.env.RUNS ?? 5);

/**
 * Sizes of the built JS and CSS in bytes: raw, gzip -9, brotli (max quality): all of it, and `initial`, the
 * files index.html loads (the chunks loaded on demand, e.g. the order page's milestones and the conversations
 * of issue 24, are the rest: `lazy_gzip`). The same count as the first-load budget (budget.ts).
 */
export function bundleSize(dir = DIST) {
  const list = chunks(dir);
  const brotli = list.reduce((n, c) => n + brotliCompressSync(readFileSync(join(dir, 'assets', c.name))).length, 0);
  const { files, raw, gzip, initial_gzip, lazy_gzip } = totals(list);
  return { files, raw, gzip, brotli, initial_gzip, lazy_gzip };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const t = await createTestApp({ chain: new FakeChain() as never, webAppDir: DIST, config: { publicMarketplace: true } });
  const server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const seller = await loginAs(t);
  for (let i = 0; i < LISTINGS; i++) {
    const res = await request(t.app)
      .post(`${API}/listings`)
      .set(seller.headers)
      .send({ title: `Service number ${i + 1}`, description: 'Measured listing.', price: 1 + i, currency: 'USDC', category: 'design', duration: 3 });
    if (res.status !== 201) throw new Error(`create listing ${res.status}: ${JSON.stringify(res.body)}`);
  }
  const buyer = await loginAs(t);
  const session = { token: buyer.token, wallet: buyer.wallet, walletName: 'Bazaar Test Wallet', chain: 'solana:localnet', expiresAt: new Date(Date.now() + 3_600_000).toISOString() };
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const want = Math.min(LISTINGS, 20);
  const rendered = async (page: import('playwright-core').Page) => {
    await page.waitForFunction((n) => document.querySelectorAll('[aria-label="Listings"] .card').length >= n, want, { polling: 'raf', timeout: 30_000 });
    return page.evaluate(() => performance.now());
  };
  const cold: number[] = [];
  const warm: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
      await context.addInitScript((s) => sessionStorage.setItem('bazaar.session', s), JSON.stringify(session));
      const page = await context.newPage();
      await page.goto(`${origin}/app/#/`);
      cold.push(await rendered(page));
      await page.reload();
      warm.push(await rendered(page));
      await context.close();
    }
  } finally {
    await browser.close();
    await new Promise((r) => server.close(r));
    await t.close();
  }
  const out = { bundle: bundleSize(), listings: LISTINGS, runs: RUNS, cold_ms: Math.round(median(cold)), warm_ms: Math.round(median(warm)), cold_all: cold.map(Math.round), warm_all: warm.map(Math.round) };
  console.log(JSON.stringify(out));
}

await main();
