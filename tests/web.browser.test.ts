/**
 * The reference web app (web/, issue 13) end to end in headless Chromium against a real localnet: one
 * browser context per person, each with a Wallet Standard test wallet (server/scripts/test-wallet.ts)
 * holding its own keypair. The seller signs in, lists a service and edits it; the buyer signs in, finds it by search,
 * buys it (keyboard only), sees the Solana Pay QR code, pays from the wallet; the seller sees the order
 * and delivers; the buyer's open order page updates by itself, the buyer confirms and reviews; both
 * balances pages show what the chain holds. A third wallet, without solana:signIn and solana:signTransaction,
 * takes the app's fallbacks: signMessage to sign in, signAndSendTransaction to pay; it disputes, and the seller
 * refunds. The whole story runs twice: at a desktop size and on a 390×844 phone with touch (issue 23).
 * Every page state is checked for labelled controls, focus on its heading, no horizontal scroll
 * (document width <= viewport width) and axe-core (no critical or serious violation); any console error
 * or uncaught page error fails the suite. The order pages must name what was bought and from whom, and
 * the delivery carries a message with a link that the buyer reads in the order's conversation.
 *
 * The app is the production build (`npm run web:build` when stale: it imports the packaged SDK's
 * dist/), served by the app under test at /app/ like `npm start` does. Screenshots of the main pages
 * are written to SCREENSHOT_DIR (default web/screenshots/latest, git-ignored; web/screenshots/*.png is
 * one committed set for the README).
 */
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet.js';
import { ensureWebApp } from '../server/scripts/web-build.js';
import { API, createTestApp, type TestApp } from './helpers/app.js';
import { launchChromium, runBrowserSuite } from './helpers/chromium.js';
import { expectAccessible, expectNoHorizontalScroll, PROFILES } from './helpers/web-checks.js';
import { type BootstrappedChain } from './helpers/localnet.js';
import { sharedBootstrappedChain } from './helpers/shared-chain.js';
import { installTestWallet, TEST_WALLET_NAME, type TestWallet } from '../server/scripts/test-wallet.js';

// page.evaluate callbacks run in the browser; the root tsconfig has no DOM lib (Node code only)
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const sessionStorage: { getItem(key: string): string | null };

const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? fileURLToPath(new URL('../web/screenshots/latest', import.meta.url));
const TITLE = 'Logo design in three concepts';
const DELIVERY_NOTE = 'Here are the three concepts as SVG:';
const DELIVERY_LINK = 'https://files.example/concepts.zip';

interface Actor {
  name: 'seller' | 'buyer' | 'buyer2';
  keypair: Keypair;
  context: BrowserContext;
  page: Page;
  wallet: TestWallet;
  /** URLs of every request the page made (fetch/XHR and documents) */
  requests: string[];
}

describe.skipIf(!runBrowserSuite('web.browser.test')).each(PROFILES)('the web app in headless Chromium ($name)', (profile) => {
  let env: BootstrappedChain;
  let t: TestApp;
  let server: Server;
  let browser: Browser;
  let origin: string;
  let usdcMint: string;
  let seller: Actor;
  let buyer: Actor;
  /** a wallet without solana:signIn and solana:signTransaction: the app's fallbacks */
  let buyer2: Actor;
  let listingId: string;
  let orderId: string;
  let orderId2: string;
  const problems: string[] = [];

  async function actor(name: Actor['name'], without?: string[]): Promise<Actor> {
    const keypair = Keypair.generate();
    const context = await browser.newContext({ ...profile.context });
    const wallet = await installTestWallet(context, keypair, env.localnet.rpcUrl, { without });
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      // the browser logs every refused request; a 401 is expected once: the anonymous visit of a
      // marketplace that is not public (the app then asks to sign in)
      if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`${name}: console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`${name}: page error: ${e.message}`));
    return { name, keypair, context, page, wallet, requests };
  }

  /**
   * The <h1> of the page once the router rendered it; it holds the keyboard focus. The page state is
   * then checked: no horizontal scroll, no critical or serious axe-core violation.
   */
  async function heading(page: Page, text: string | RegExp) {
    const h1 = page.locator('main h1');
    await expect.poll(() => h1.innerText(), { timeout: 20_000 }).toSatisfy((t: string) => (typeof text === 'string' ? t === text : text.test(t)));
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    await checkState(page, `${profile.name} ${String(text)}`);
  }

  /** Every page state: no sideways scroll, accessible (axe-core). */
  async function checkState(page: Page, state: string) {
    await expectNoHorizontalScroll(page, state);
    await expectAccessible(page, state);
  }

  /** Every form control of the page has an accessible name (a <label> or aria-label). */
  async function expectLabelledControls(page: Page) {
    const unlabelled = await page.evaluate(() =>
      ([...document.querySelectorAll('input, select, textarea')] as any[])
        .filter((el) => !(el.labels?.length || el.getAttribute('aria-label')))
        .map((el) => el.outerHTML),
    );
    expect(unlabelled).toEqual([]);
    const nameless = await page.evaluate(() =>
      ([...document.querySelectorAll('button, a[href]')] as any[]).filter((el) => !(el.textContent?.trim() || el.getAttribute('aria-label'))).map((el) => el.outerHTML),
    );
    expect(nameless).toEqual([]);
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOT_DIR, profile.name, `${name}.png`), fullPage: true });

  /** What the chain holds for `owner`: lamports and base units of the test USDC mint. */
  async function chainBalances(owner: PublicKey) {
    const conn = env.chain.connection;
    const accounts = await conn.getParsedTokenAccountsByOwner(owner, { mint: new PublicKey(usdcMint) }, 'confirmed');
    const usdc = accounts.value.reduce((sum, a) => sum + BigInt(a.account.data.parsed.info.tokenAmount.amount), 0n);
    return { lamports: String(await conn.getBalance(owner, 'confirmed')), usdc: String(usdc) };
  }

  async function signIn(a: Actor, expectedRequests = ['standard:connect', 'solana:signIn']) {
    await a.page.goto(`${origin}/app/`);
    await heading(a.page, 'Sign in to continue');
    await a.page.getByRole('link', { name: 'Sign in with a wallet' }).click();
    await heading(a.page, 'Sign in');
    await expectLabelledControls(a.page);
    await a.page.getByRole('button', { name: `Sign in with ${TEST_WALLET_NAME}` }).click();
    await heading(a.page, 'Marketplace');
    await expect.poll(() => a.page.locator('#session').innerText()).toContain(`Signed in as ${a.wallet.address.slice(0, 4)}`);
    // the wallet was asked to connect, then to sign the SIWS input (solana:signIn where it has it)
    expect(a.wallet.requests).toEqual(expectedRequests);
  }

  beforeAll(async () => {
    mkdirSync(join(SCREENSHOT_DIR, profile.name), { recursive: true });
    ensureWebApp({ quiet: true });
    env = await sharedBootstrappedChain('web');
    usdcMint = env.boot.currencies.find((c) => c.code === 'USDC')!.mint;
    t = await createTestApp({
      chain: env.chain,
      // the page's host is 127.0.0.1:<port>: the SIWS domain it asks for
      config: { currencies: env.boot.currencies, siwsDomains: ['bazaar.test', '127.0.0.1:*'] },
      // the payment watcher finds escrows funded by a wallet that sent the transaction itself
      orders: { watcherIntervalMs: 1000 },
    });
    await t.services.start(); // the background workers, as main.ts starts them
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    [seller, buyer, buyer2] = await Promise.all([
      actor('seller'),
      actor('buyer'),
      actor('buyer2', ['solana:signIn', 'solana:signTransaction']),
    ]);
    await Promise.all([seller, buyer, buyer2].map((a) => ensureSol(env.chain.connection, a.keypair.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL)));
    for (const a of [buyer, buyer2]) await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, a.keypair.publicKey.toBase58(), 10_000_000n);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise((resolve) => server.close(resolve));
    await t?.close();
    await env?.stop();
  });

  it('the seller signs in with the wallet (SIWS through solana:signIn)', async () => {
    await signIn(seller);
    await shot(seller.page, 'sign-in-done-marketplace');
  }, 60_000);

  it('the seller lists a service (its token minted on chain), then edits the price', async () => {
    const page = seller.page;
    await page.getByRole('link', { name: 'Sell', exact: true }).click();
    await heading(page, 'Sell a service');
    await expectLabelledControls(page);
    await page.getByLabel('Title', { exact: true }).fill(TITLE);
    await page.getByLabel('Description', { exact: true }).fill('Three logo concepts and two rounds of revisions, delivered as SVG.');
    await page.getByLabel('Price', { exact: true }).fill('2');
    await page.getByLabel('Currency', { exact: true }).selectOption('USDC');
    await page.getByLabel('Category', { exact: true }).selectOption('design');
    await page.getByLabel('Delivery time (days)', { exact: true }).fill('5');
    await shot(page, 'create-listing');
    await page.getByRole('button', { name: 'Create listing' }).click();
    await heading(page, TITLE);
    listingId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
    const mint = (await page.getByTestId('mint-link').getAttribute('data-mint'))!;
    // the page's mint is the listing's Token-2022 NFT, owned by the seller on chain
    const onChain = await env.chain.connection.getParsedTokenAccountsByOwner(seller.keypair.publicKey, { mint: new PublicKey(mint) }, 'confirmed');
    expect(onChain.value.map((a) => a.account.data.parsed.info.tokenAmount.amount)).toEqual(['1']);
    expect(await page.getByTestId('mint-link').getAttribute('href')).toContain(`/address/${mint}`);

    await page.getByRole('link', { name: 'Edit listing' }).click();
    await heading(page, `Edit “${TITLE}”`);
    await expectLabelledControls(page);
    await page.getByLabel('Price', { exact: true }).fill('2.5');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await heading(page, TITLE);
    await expect.poll(() => page.locator('main .price').innerText()).toBe('2.5 USDC');
    await shot(page, 'listing');
  }, 120_000);

  it('the buyer signs in, finds the listing by search, and buys it with the keyboard', async () => {
    await signIn(buyer);
    const page = buyer.page;
    await page.getByLabel('Search', { exact: true }).fill('logo concepts');
    await page.getByLabel('Search', { exact: true }).press('Enter');
    await heading(page, 'Results for “logo concepts”');
    await expectLabelledControls(page);
    await expect.poll(() => page.getByRole('list', { name: 'Listings' }).innerText()).toContain(TITLE);
    await shot(page, 'marketplace-search');
    await page.getByRole('link', { name: TITLE }).click();
    await heading(page, TITLE);
    expect(await page.getByTestId('listing-status').getAttribute('data-status')).toBe('available');
    expect(await page.getByTestId('listing-status').innerText()).toBe('For sale');
    // the seller: short address (the full one in its title), rating
    expect(await page.getByTestId('seller').innerText()).toContain(`${seller.wallet.address.slice(0, 4)}…${seller.wallet.address.slice(-4)}`);
    expect(await page.getByTestId('seller').locator(`[title="${seller.wallet.address}"]`).count()).toBe(1);

    // keyboard only: Tab from the heading until the Buy button has the focus, then Enter
    const buy = page.getByRole('button', { name: 'Buy for 2.5 USDC' });
    for (let i = 0; i < 30 && !(await buy.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab');
    expect(await buy.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await heading(page, /^Order /);
    orderId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
    expect(await page.getByTestId('order-status').getAttribute('data-status')).toBe('awaiting_payment');
    expect(await page.getByTestId('order-status').innerText()).toBe('Waiting for payment');
    expect(await page.getByTestId('escrow-state').innerText()).toMatch(/^none/);
    // the order page names what was bought and from whom, and what happens next with a countdown
    const context = await page.getByTestId('order-context').innerText();
    expect(context).toContain(TITLE);
    expect(context).toContain(`${seller.wallet.address.slice(0, 4)}…${seller.wallet.address.slice(-4)}`);
    expect(context).toContain('2.5 USDC');
    expect(await page.getByTestId('next-step').innerText()).toMatch(/You pay into escrow.*\d+:\d\d left/s);
    // a localnet without https: the Solana Pay link is explained (wallets refuse it)
    expect(await page.getByTestId('solana-pay-hint').innerText()).toMatch(/https|local/i);
    // the Solana Pay QR code and link for a phone wallet: the order's transaction request
    const link = await page.getByTestId('solana-pay-link').getAttribute('href');
    expect(link).toBe(`solana:http://bazaar.test${API}/orders/${orderId}/solana-pay`);
    expect(await page.getByRole('img', { name: 'Solana Pay QR code of this payment' }).getAttribute('src')).toMatch(/^data:image\//);
    await expectLabelledControls(page);
    await shot(page, 'order-payment');
  }, 120_000);

  it('the buyer pays from the wallet: the escrow is funded on chain', async () => {
    const page = buyer.page;
    await page.getByRole('button', { name: 'Pay with wallet' }).click();
    await expect.poll(() => page.getByTestId('order-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('in_progress');
    expect(await page.getByTestId('escrow-state').innerText()).toMatch(/^funded/);
    expect(buyer.wallet.requests.at(-1)).toBe('solana:signTransaction');
    await checkState(page, `${profile.name} order paid`);
    const order = await request(t.app).get(`${API}/orders/${orderId}`).set('authorization', `Bearer ${await token(buyer)}`);
    const vault = await env.chain.connection.getTokenAccountBalance(new PublicKey(order.body.vault_address), 'confirmed');
    expect(vault.value.amount).toBe('2500000');
    expect(await env.chain.connection.getAccountInfo(new PublicKey(order.body.escrow_account_address))).not.toBeNull();
  }, 60_000);

  it('the seller was told of the new sale as it happened, sees it among the sold ones and delivers with a message', async () => {
    const page = seller.page;
    // the seller's open page announced the sale (the event stream), without a reload
    await expect.poll(() => page.getByTestId('news').innerText(), { timeout: 20_000 }).toContain(`New sale: “${TITLE}”`);
    await page.getByRole('link', { name: 'My orders' }).click();
    await heading(page, 'My orders');
    const row = page.locator(`li[data-order="${orderId}"]`);
    await expect.poll(() => row.getAttribute('data-status')).toBe('in_progress');
    // the agreement actions (issue 24) are the seller's too; their forms are on the order page, not on the row
    expect(await row.getAttribute('data-actions')).toBe('deliver,dispute,refund,propose_extension,propose_settlement');
    const text = await row.innerText();
    // the row names the listing and the buyer, the state in words, what happens next, the actions
    expect(text).toContain(TITLE);
    expect(text).toContain(`${buyer.wallet.address.slice(0, 4)}…${buyer.wallet.address.slice(-4)}`);
    expect(text).toContain('Paid: work in progress');
    expect(text).toContain('You deliver the work');
    expect(await row.locator('[data-action]').allInnerTexts()).toEqual(['Mark delivered', 'Open a dispute', 'Refund the buyer']);
    await shot(page, 'orders-seller');
    await row.getByRole('link', { name: TITLE }).click();
    await heading(page, `Order for “${TITLE}”`);
    expect(await page.getByTestId('order-context').innerText()).toContain(`You sold ${TITLE} to`);
    await page.getByLabel('Delivery message', { exact: true }).fill(`${DELIVERY_NOTE} ${DELIVERY_LINK}`);
    await page.getByRole('button', { name: 'Mark delivered' }).click();
    await expect.poll(() => page.getByTestId('order-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('delivered');
    expect(await page.getByTestId('escrow-state').innerText()).toMatch(/^delivered/);
    await expect.poll(() => page.getByTestId('message').allInnerTexts()).toEqual([expect.stringContaining(DELIVERY_NOTE)]);
    await checkState(page, `${profile.name} seller delivered`);
  }, 60_000);

  it("the buyer's open order page updates by itself; the buyer confirms and reviews", async () => {
    const page = buyer.page;
    // no reload: the page follows this order's events (web/src/live.ts) and shows the seller's delivery
    const streams = buyer.requests.map((u) => new URL(u)).filter((u) => u.pathname === `${API}/events/stream`);
    expect(streams.map((u) => [u.searchParams.get('resource_type'), u.searchParams.get('resource_id')])).toContainEqual(['order', orderId]);
    await expect.poll(() => page.getByTestId('order-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('delivered');
    // the delivery's message and its link, in the order's conversation
    await expect.poll(() => page.getByTestId('message').allInnerTexts(), { timeout: 20_000 }).toEqual([expect.stringContaining(DELIVERY_NOTE)]);
    expect(await page.getByTestId('message').getByRole('link', { name: DELIVERY_LINK }).getAttribute('href')).toBe(DELIVERY_LINK);
    expect(await page.getByTestId('next-step').innerText()).toMatch(/confirm it to pay the seller.*left.*released to the seller automatically/s);
    await checkState(page, `${profile.name} buyer sees the delivery`);
    await shot(page, 'order-delivered');
    await page.getByRole('button', { name: 'Confirm delivery and release payment' }).click();
    await expect.poll(() => page.getByTestId('order-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
    expect(await page.getByTestId('escrow-state').innerText()).toMatch(/^released/);
    await page.getByLabel('Rating', { exact: true }).selectOption('5');
    await page.getByLabel('Review', { exact: true }).fill('Three great concepts, fast revisions.');
    await expectLabelledControls(page);
    await page.getByRole('button', { name: 'Publish review' }).click();
    await expect.poll(() => page.locator('#status').innerText()).toBe('Thank you: review published.');
    await expect.poll(() => page.getByRole('button', { name: 'Publish review' }).count()).toBe(0);
    // the published review shows on the order
    await expect.poll(() => page.getByTestId('review').innerText()).toContain('Three great concepts, fast revisions.');
    await checkState(page, `${profile.name} reviewed`);
    await shot(page, 'order-completed');
    const reviews = await request(t.app).get(`${API}/users/${seller.wallet.address}/reviews`).set('authorization', `Bearer ${await token(buyer)}`);
    expect(reviews.body.data.map((r: { rating: number; text: string }) => [r.rating, r.text])).toEqual([[5, 'Three great concepts, fast revisions.']]);
  }, 60_000);

  it('both balances pages show what the chain holds (the seller got the price minus the 2.5 % fee)', async () => {
    for (const a of [buyer, seller]) {
      await a.page.getByRole('link', { name: 'Balances' }).click();
      await heading(a.page, 'Balances');
      const chain = await chainBalances(a.keypair.publicKey);
      const shown = (sel: string) => a.page.locator(`tr${sel} [data-testid="base-units"]`).innerText();
      expect(await shown('[data-mint="native"]'), `${a.name} SOL`).toBe(chain.lamports);
      expect(await shown(`[data-mint="${usdcMint}"]`), `${a.name} USDC`).toBe(chain.usdc);
      if (a.name === 'seller') expect(chain.usdc).toBe(String(2_500_000 - Math.floor((2_500_000 * 250) / 10_000)));
      else expect(chain.usdc).toBe(String(10_000_000 - 2_500_000));
    }
    await shot(buyer.page, 'balances');
  }, 60_000);

  it('a wallet without signIn and signTransaction: signs in with signMessage, pays with signAndSendTransaction', async () => {
    const listing = await request(t.app)
      .post(`${API}/listings`)
      .set('authorization', `Bearer ${await token(seller)}`)
      .send({ title: 'Business card design', description: 'Front and back, print-ready PDF.', price: 1, currency: 'USDC', category: 'design', duration: 2 });
    expect(listing.status, JSON.stringify(listing.body)).toBe(201);
    await signIn(buyer2, ['standard:connect', 'solana:signMessage']);
    const page = buyer2.page;
    await page.goto(`${origin}/app/#/listings/${listing.body.listing_id}`);
    await heading(page, 'Business card design');
    await page.getByRole('button', { name: 'Buy for 1 USDC' }).click();
    await heading(page, /^Order /);
    await page.getByRole('button', { name: 'Pay with wallet' }).click();
    // the wallet sent the transaction; the service's payment watcher sees the funded escrow, the page's poll shows it
    await expect.poll(() => page.getByTestId('order-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('in_progress');
    expect(buyer2.wallet.requests.at(-1)).toBe('solana:signAndSendTransaction');
    expect((await chainBalances(buyer2.keypair.publicKey)).usdc).toBe('9000000');
    orderId2 = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
  }, 90_000);

  it('the buyer disputes; the seller gives up the dispute and refunds: the buyer has the whole amount back', async () => {
    const page = buyer2.page;
    await page.getByText('Open a dispute').click();
    await page.getByLabel('Why do you dispute this order?', { exact: true }).fill('Nothing was delivered after two reminders.');
    await expectLabelledControls(page);
    await page.getByRole('button', { name: 'Send the dispute' }).click();
    await expect.poll(() => page.getByTestId('order-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('disputed');
    expect(await page.getByTestId('escrow-state').innerText()).toMatch(/^disputed/);
    // who decides and how, in words; the buyer is not left with "nothing to do"
    expect(await page.getByTestId('next-step').innerText()).toContain('The arbiter (the marketplace operator)');
    await checkState(page, `${profile.name} disputed`);

    const s = seller.page;
    await s.goto(`${origin}/app/#/orders/${orderId2}`);
    await heading(s, /^Order /);
    await s.getByText('Refund the buyer', { exact: true }).click();
    await s.getByRole('button', { name: 'Refund 1 USDC to the buyer' }).click();
    await expect.poll(() => s.getByTestId('order-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('refunded');
    await expect.poll(() => page.getByTestId('order-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('refunded');
    await checkState(s, `${profile.name} refunded`);
    expect((await chainBalances(buyer2.keypair.publicKey)).usdc).toBe('10000000');
  }, 90_000);

  it('logged no console error and no uncaught page error', () => {
    expect(problems).toEqual([]);
  });

  /** The access token the page holds (sessionStorage), for API reads the test checks against. */
  async function token(a: Actor): Promise<string> {
    return a.page.evaluate(() => JSON.parse(sessionStorage.getItem('bazaar.session')!).token as string);
  }
});
