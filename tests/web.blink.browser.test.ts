/**
 * A listing's blink URL opened in the web app (issue 26 item 1), in headless Debian Chromium, at a desktop size
 * and on a 390×844 phone: the page people share, `/app/listings/{id}` (what /actions.json maps to the listing's
 * action), opens the listing in the app for a visitor who is not signed in (PUBLIC_MARKETPLACE), and the listing
 * page shows "Share as a blink": the page URL, the `solana-action:` link to the action endpoint, and the card a
 * blink client renders, as the action serves it (marketplace icon, title, price, reputation, one button per
 * package). The page itself resolves its URL through /actions.json as a blink client does. No horizontal scroll,
 * axe-core without critical or serious violations, no console error. (FakeChain, configured on devnet: the card
 * needs no RPC; the buy itself is e2e.actions-listings.)
 *
 * The desktop card is written to SCREENSHOT_DIR (default: a temporary directory; `SCREENSHOT_DIR=docs/screenshots`
 * refreshes the one the README shows).
 */
import type { Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebApp } from '../server/scripts/web-build.js';
import { launchChromium, runBrowserSuite } from './helpers/chromium.js';
import { expectAccessible, expectNoHorizontalScroll, PROFILES } from './helpers/web-checks.js';
import { createListing, setup, user, type TestApp } from './helpers/marketplace-fixtures.js';
import { freePort } from './helpers/ports.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? join(tmpdir(), 'bazaar-blink-screenshots');

describe.skipIf(!runBrowserSuite('web.blink.browser.test'))('a listing\'s blink URL in the web app', () => {
  let t: TestApp;
  let server: Server;
  let browser: Browser;
  let origin: string;
  let listingId: string;

  beforeAll(async () => {
    ensureWebApp({ quiet: true });
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    ({ t } = await setup({ config: { actionsEnabled: true, publicMarketplace: true, siwsChainId: 'devnet', publicBaseUrl: origin, siwsDomains: [`127.0.0.1:${port}`] } }));
    server = t.app.listen(port, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const seller = await user(t);
    const pkg = (key: string, name: string, price: number, days: number) => ({ key, name, price, delivery_days: days, revisions: 1, description: `${name}: the ${key} package` });
    listingId = (
      await createListing(t.app, seller, {
        title: 'Logo and brand sheet',
        description: 'A logo in three sizes of service.',
        price: undefined,
        duration: undefined,
        packages: [pkg('basic', 'Logo', 40, 3), pkg('premium', 'Logo and brand sheet', 120, 7)],
      })
    ).listing_id;
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise((resolve) => server.close(resolve));
    await t?.close();
  });

  it.each(PROFILES)('opens /app/listings/{id} as the listing with its blink: page URL, solana-action: link, the card ($name)', async (profile) => {
    const context = await browser.newContext({ ...profile.context });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      // a visitor who is not signed in: the app's reads that need a session answer 401 (as in web.browser.test)
      if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

    const shared = `${origin}/app/listings/${listingId}`;
    await page.goto(shared);
    await expect.poll(() => page.locator('main h1').innerText(), { timeout: 20_000 }).toBe('Logo and brand sheet');
    expect(page.url()).toBe(`${origin}/app/#/listings/${listingId}`);

    const share = page.getByTestId('blink-share');
    await expect.poll(() => share.isVisible(), { timeout: 20_000, message: problems.join('\n') }).toBe(true);
    expect(await page.getByRole('heading', { name: 'Share as a blink' }).isVisible()).toBe(true);
    expect(await page.getByTestId('blink-page').getAttribute('href')).toBe(shared);
    expect(await page.getByTestId('blink-action-link').getAttribute('href')).toBe(`solana-action:${origin}/api/actions/listings/${listingId}`);
    const card = page.getByTestId('blink-card');
    expect(await card.locator('h3').innerText()).toBe('Logo and brand sheet');
    expect(await card.locator('img').getAttribute('src')).toBe(`${origin}/icon.svg`);
    expect(await card.locator('img').evaluate((img: any) => img.complete && img.naturalWidth > 0)).toBe(true);
    expect(await page.getByTestId('blink-description').innerText()).toBe(
      'from 40 USDC · delivery within 3 days. Seller: no reviews yet. Paid into an on-chain escrow: the seller is paid when you confirm delivery.',
    );
    expect(await page.getByTestId('blink-button').allInnerTexts()).toEqual(['Logo · 40 USDC · 3 days', 'Logo and brand sheet · 120 USDC · 7 days']);

    // the shared URL resolves to the listing's action through /actions.json, as a blink client resolves it
    const resolved = await page.evaluate(async (url: string) => {
      const rules = ((await (await fetch('/actions.json')).json()) as { rules: Array<{ pathPattern: string; apiPath: string }> }).rules;
      const path = new URL(url).pathname;
      for (const r of rules) {
        const m = new RegExp(`^${r.pathPattern.replace(/\*\*/g, '(.*)').replace(/(?<!\.)\*/g, '([^/]+)')}$`).exec(path);
        if (m) return r.apiPath.replace('*', m[1] as string);
      }
      return null;
    }, shared);
    expect(resolved).toBe(`/api/actions/listings/${listingId}`);

    await expectNoHorizontalScroll(page, `${profile.name} blink`);
    await expectAccessible(page, `${profile.name} blink`);
    if (profile.name === 'desktop') {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await share.screenshot({ path: join(SCREENSHOT_DIR, 'blink-card.png') });
    }
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
