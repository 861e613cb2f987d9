/**
 * /docs "Try it out" in a real browser (headless Debian Chromium driven by playwright-core): the page is
 * opened at the origin the start banner announces, a token is entered with "Authorize", then searchListings
 * (authenticated, pre-filled example parameters) and request_login (public, pre-filled example body) are
 * executed: both answer 200, with no CSP violation and no "Failed to fetch".
 *
 * Needs /usr/bin/chromium (`apt-get install -y chromium`; CHROMIUM_PATH overrides). Without it the suite is
 * skipped with a message, unless BAZAAR_REQUIRE_CHROMIUM=1 (.ci/run sets it after installing chromium),
 * where a missing browser fails.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announcedOrigin } from '../server/src/http/docs.js';
import { createTestApp, loginAs, type TestApp } from './helpers/app.js';
import { launchChromium, runBrowserSuite } from './helpers/chromium.js';

describe.skipIf(!runBrowserSuite('docs.browser.test'))('/docs in headless Chromium', () => {
  let t: TestApp;
  let server: Server;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let token: string;
  const problems: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ config: { publicBaseUrl: 'http://localhost:3000' } });
    token = (await loginAs(t)).token;
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    origin = announcedOrigin(t.ctx.config, (server.address() as AddressInfo).port);
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise((resolve) => server.close(resolve));
    await t?.close();
  });

  /** Open an operation, press "Try it out" and "Execute"; the API response the page received. */
  async function tryItOut(operationDomId: string, apiPath: string) {
    const op = page.locator(`#${operationDomId}`);
    await op.locator('.opblock-summary').first().click();
    await op.locator('button.try-out__btn').click();
    const answered = page.waitForResponse((r) => r.url().startsWith(`${origin}${apiPath}`));
    await op.locator('button.execute').click();
    const response = await answered;
    await op.locator('.live-responses-table tr.response .response-col_status').first().waitFor();
    return {
      status: response.status(),
      request: response.request(),
      body: await response.json(),
      shown: (await op.locator('.live-responses-table tr.response .response-col_status').first().innerText()).trim(),
    };
  }

  it('loads the API description from the origin it was opened at', async () => {
    await page.goto(`${origin}/docs/`);
    await page.locator('.swagger-ui .info .title').waitFor();
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('Bazaar API');
    expect(await page.locator('.servers select').inputValue()).toBe(origin);
  }, 60_000);

  it('authorizes with a bearer token', async () => {
    await page.locator('.auth-wrapper button.authorize').click();
    const bearer = page.locator('.auth-container').filter({ hasText: 'bearerAuth' });
    await bearer.locator('input').first().fill(token);
    await bearer.locator('button.authorize').click();
    await page.locator('button.btn-done').first().click();
    // Swagger UI holds the token for bearerAuth (what "Try it out" sends; swagger-ui-express exposes it
    // as window.ui) and shows the lock closed
    const authorized = await page.evaluate(() => (globalThis as unknown as { ui: { authSelectors: { authorized(): { toJS(): unknown } } } }).ui.authSelectors.authorized().toJS());
    expect(authorized).toEqual({ bearerAuth: expect.objectContaining({ name: 'bearerAuth', value: token }) });
    expect(await page.locator('.auth-wrapper button.authorize').getAttribute('class')).toMatch(/\blocked\b/);
  }, 60_000);

  it('searches listings with the pre-filled example parameters: 200, sent with the token', async () => {
    const res = await tryItOut('operations-marketplace-searchListings', '/api/v1/marketplace/search');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.shown).toBe('200');
    expect(await res.request.headerValue('authorization')).toBe(`Bearer ${token}`);
    expect(res.body).toEqual({ data: [], next_cursor: null });
  }, 60_000);

  it('requests a login nonce with the pre-filled example body: 200', async () => {
    const res = await tryItOut('operations-auth-requestLogin', '/api/v1/auth/request_login');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.shown).toBe('200');
    expect(res.body.sign_in_input.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  }, 60_000);

  it('logged no CSP violation or failed fetch', () => {
    expect(problems.filter((p) => /Content Security Policy|Failed to fetch|Refused to/i.test(p))).toEqual([]);
  });
});
