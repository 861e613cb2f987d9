/**
 * Issue 24 in the web app (web/src/pages/order-deals.tsx, conversations.tsx, listing.tsx), end to end in
 * headless Debian Chromium against a real localnet, a buyer and a seller each with a Wallet Standard test
 * wallet (server/scripts/test-wallet.ts), at a desktop size and on a 390×844 phone:
 *
 * - a package purchase: the listing shows its packages (name, price, days, revisions, milestones) and its
 *   units left; the buyer orders the package "Two steps" (two milestones, one revision) with the keyboard;
 * - the two-milestone order driven through the UI only: the buyer pays milestone 1, the seller delivers,
 *   the buyer requests changes (one revision: then none left, the button disabled with its reason), the
 *   seller delivers again, the buyer releases milestone 1, funds milestone 2 (one wallet signature), the
 *   seller asks for more time and the buyer accepts the new deadline, the seller proposes a settlement of 40 % to the buyer with the percent field and its payout preview, the
 *   buyer accepts naming the same split; then the buyer tips the seller from the wallet;
 * - checked against the API (statuses, revisions_used, settled_by, payouts) and the chain balances;
 * - a custom offer: the buyer asks the seller from the listing, the seller sends an offer in the
 *   conversation and withdraws it, sends one in two milestones, the buyer sees the offer cards and accepts
 *   the pending one into an order.
 * Every new page state: no horizontal scroll, axe-core without critical or serious violations; no console
 * error and no uncaught page error.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const sessionStorage: { getItem(key: string): string | null };

const TITLE = 'Brand identity in two steps';

interface Actor {
  name: 'seller' | 'buyer';
  keypair: Keypair;
  context: BrowserContext;
  page: Page;
  wallet: TestWallet;
}

describe.skipIf(!runBrowserSuite('web.milestones.browser.test')).each(PROFILES)('issue 24 in the web app ($name)', (profile) => {
  let env: BootstrappedChain;
  let t: TestApp;
  let server: Server;
  let browser: Browser;
  let origin: string;
  let usdcMint: string;
  let seller: Actor;
  let buyer: Actor;
  let listingId: string;
  let orderId: string;
  const problems: string[] = [];

  async function actor(name: Actor['name']): Promise<Actor> {
    const keypair = Keypair.generate();
    const context = await browser.newContext({ ...profile.context });
    const wallet = await installTestWallet(context, keypair, env.localnet.rpcUrl);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[19]/.test(m.text())) problems.push(`${name}: console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`${name}: page error: ${e.message}`));
    return { name, keypair, context, page, wallet };
  }

  async function checkState(page: Page, state: string) {
    await expectNoHorizontalScroll(page, `${profile.name} ${state}`);
    await expectAccessible(page, `${profile.name} ${state}`);
  }

  async function heading(page: Page, text: string | RegExp) {
    const h1 = page.locator('main h1');
    await expect.poll(() => h1.innerText(), { timeout: 20_000 }).toSatisfy((s: string) => (typeof text === 'string' ? s === text : text.test(s)));
    await checkState(page, String(text));
  }

  async function signIn(a: Actor) {
    await a.page.goto(`${origin}/app/#/sign-in`);
    await heading(a.page, 'Sign in');
    await a.page.getByRole('button', { name: `Sign in with ${TEST_WALLET_NAME}` }).click();
    await heading(a.page, 'Marketplace');
  }

  const token = (a: Actor) => a.page.evaluate(() => JSON.parse(sessionStorage.getItem('bazaar.session')!).token as string);
  const api = async (a: Actor, path: string) => {
    const res = await request(t.app).get(`${API}${path}`).set('authorization', `Bearer ${await token(a)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const usdc = async (owner: PublicKey) => {
    const accounts = await env.chain.connection.getParsedTokenAccountsByOwner(owner, { mint: new PublicKey(usdcMint) }, 'confirmed');
    return accounts.value.reduce((sum, a) => sum + BigInt(a.account.data.parsed.info.tokenAmount.amount), 0n);
  };
  const milestone = (page: Page, index: number) => page.locator(`[data-testid="milestone"][data-index="${index}"]`);
  const milestoneStatus = (page: Page, index: number) => () => milestone(page, index).getAttribute('data-status');

  beforeAll(async () => {
    ensureWebApp({ quiet: true });
    env = await sharedBootstrappedChain('web-milestones');
    usdcMint = env.boot.currencies.find((c) => c.code === 'USDC')!.mint;
    t = await createTestApp({
      chain: env.chain,
      config: { currencies: env.boot.currencies, siwsDomains: ['bazaar.test', '127.0.0.1:*'] },
      orders: { watcherIntervalMs: 1000 },
    });
    await t.services.start();
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    [seller, buyer] = await Promise.all([actor('seller'), actor('buyer')]);
    await Promise.all([seller, buyer].map((a) => ensureSol(env.chain.connection, a.keypair.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL)));
    await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, buyer.keypair.publicKey.toBase58(), 10_000_000n);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise((resolve) => server.close(resolve));
    await t?.close();
    await env?.stop();
  });

  it('the listing shows its packages, their milestones and the units left; the buyer orders a package', async () => {
    await signIn(seller);
    const created = await request(t.app)
      .post(`${API}/listings`)
      .set('authorization', `Bearer ${await token(seller)}`)
      .send({
        title: TITLE,
        description: 'A logo, then the brand sheet.',
        currency: 'USDC',
        category: 'design',
        capacity: 2,
        stock: 5,
        packages: [
          {
            key: 'basic',
            name: 'Two steps',
            price: 2.5,
            delivery_days: 7,
            revisions: 1,
            description: 'Logo first, brand sheet second.',
            milestones: [
              { title: 'Logo sketches', amount: 1, delivery_days: 3 },
              { title: 'Brand sheet', amount: 1.5, delivery_days: 4 },
            ],
          },
          { key: 'premium', name: 'All at once', price: 4, delivery_days: 5, revisions: 3, description: 'Everything in one delivery.' },
        ],
      });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    listingId = created.body.listing_id;

    await signIn(buyer);
    const page = buyer.page;
    // the marketplace: "from" the cheapest package
    await expect.poll(() => page.locator(`[data-listing="${listingId}"] .price`).innerText(), { timeout: 20_000 }).toBe('from 2.5 USDC');
    await page.goto(`${origin}/app/#/listings/${listingId}`);
    await heading(page, TITLE);
    expect(await page.getByTestId('units-left').innerText()).toBe('5 left · takes 2 orders at once');
    const basic = page.locator('[data-package="basic"]').first();
    const text = await basic.innerText();
    expect(text).toContain('Two steps · 2.5 USDC');
    expect(text).toContain('Delivery in 7 days · 1 revision included');
    expect(text).toContain('Logo sketches: 1 USDC, 3 days');
    expect(text).toContain('Brand sheet: 1.5 USDC, 4 days');
    expect(await page.getByRole('button', { name: /^Order this package/ }).count()).toBe(2);
    // keyboard only: Tab from the heading to the package's button, then Enter
    const order = page.getByRole('button', { name: 'Order this package (Two steps, 2.5 USDC)' });
    for (let i = 0; i < 40 && !(await order.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab');
    expect(await order.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await heading(page, `Order for “${TITLE}”`);
    orderId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
    expect(await page.getByTestId('order-context').innerText()).toMatch(/package “Two steps”.*2 milestones.*1 revision included/s);
    await expect.poll(() => page.getByTestId('milestone').count()).toBe(2);
    expect(await milestone(page, 1).getAttribute('data-status')).toBe('awaiting_payment');
    expect(await milestone(page, 2).getAttribute('data-status')).toBe('scheduled');
    const created2 = await api(buyer, `/orders/${orderId}`);
    expect(created2).toMatchObject({ package_name: 'Two steps', revisions_included: 1, current_milestone: 1 });
    expect(created2.milestones.map((m: { amount_base_units: string }) => m.amount_base_units)).toEqual(['1000000', '1500000']);
    await checkState(page, 'two-milestone order awaiting payment');
  }, 180_000);

  it('milestone 1: paid, delivered, one revision requested (then none left), delivered again and released', async () => {
    const b = buyer.page;
    await b.getByRole('button', { name: 'Pay with wallet' }).click();
    await expect.poll(milestoneStatus(b, 1), { timeout: 30_000 }).toBe('in_progress');
    // a buyer sees no seller action; the fund button is there exactly when milestone 2's allowed_actions has fund
    expect(await milestone(b, 1).getAttribute('data-actions')).not.toContain('deliver');
    const fundable = (await api(buyer, `/orders/${orderId}`)).milestones[1].allowed_actions.includes('fund');
    expect(await b.locator('[data-action="fund"]').count()).toBe(fundable ? 1 : 0);

    const s = seller.page;
    await s.goto(`${origin}/app/#/orders/${orderId}`);
    await heading(s, `Order for “${TITLE}”`);
    await s.getByRole('button', { name: 'Mark milestone 1 delivered' }).click();
    await expect.poll(milestoneStatus(s, 1), { timeout: 30_000 }).toBe('delivered');
    await checkState(s, 'seller delivered milestone 1');

    await expect.poll(milestoneStatus(b, 1), { timeout: 30_000 }).toBe('delivered');
    expect(await b.getByTestId('revisions-left').innerText()).toBe('1 of 1 revision left.');
    await b.getByLabel('What should change?').fill('Please try a darker blue.');
    await checkState(b, 'buyer asks for changes');
    await b.getByRole('button', { name: 'Request changes' }).click();
    await expect.poll(milestoneStatus(b, 1), { timeout: 30_000 }).toBe('in_progress');
    let order = await api(buyer, `/orders/${orderId}`);
    expect(order.milestones[0]).toMatchObject({ status: 'in_progress', revisions_used: 1 });
    expect(order.revisions_used).toBe(1);
    // the message went into the order's conversation
    await expect.poll(() => b.getByTestId('message').allInnerTexts(), { timeout: 20_000 }).toEqual([expect.stringContaining('Please try a darker blue.')]);

    await s.reload();
    await heading(s, `Order for “${TITLE}”`);
    await s.getByRole('button', { name: 'Mark milestone 1 delivered' }).click();
    await expect.poll(milestoneStatus(s, 1), { timeout: 30_000 }).toBe('delivered');

    await expect.poll(milestoneStatus(b, 1), { timeout: 30_000 }).toBe('delivered');
    // no revision left: the button is there but disabled, with its reason
    expect(await b.getByTestId('revisions-left').innerText()).toBe('You used all 1 revision this order includes.');
    const disabled = b.getByRole('button', { name: 'Request changes' });
    expect(await disabled.isDisabled()).toBe(true);
    expect(await b.locator('#revision-why').innerText()).toContain('No revisions left');
    expect((await api(buyer, `/orders/${orderId}`)).allowed_actions).not.toContain('request_revision');
    await checkState(b, 'no revision left');
    await b.getByRole('button', { name: 'Release 1 USDC to the seller' }).click();
    await expect.poll(milestoneStatus(b, 1), { timeout: 30_000 }).toBe('completed');
    order = await api(buyer, `/orders/${orderId}`);
    expect(order.milestones[0].payout).toMatchObject({ seller_base_units: '975000', buyer_base_units: '0' });
    expect(order.current_milestone).toBe(2);
  }, 180_000);

  it('milestone 2: funded with one signature; a deadline extension accepted; the seller proposes 40 % to the buyer, the buyer accepts the same split', async () => {
    const b = buyer.page;
    const before = buyer.wallet.requests.length;
    await b.getByRole('button', { name: 'Fund milestone 2 with wallet (1.5 USDC)' }).click();
    await expect.poll(milestoneStatus(b, 2), { timeout: 30_000 }).toBe('in_progress');
    expect(buyer.wallet.requests.slice(before)).toEqual(['solana:signTransaction']);

    const s = seller.page;
    await s.reload();
    await heading(s, `Order for “${TITLE}”`);
    await expect.poll(milestoneStatus(s, 2), { timeout: 20_000 }).toBe('in_progress');
    // an extension: the seller asks for more time (the date field's default: 3 days later), the buyer accepts it
    await s.getByLabel('Why (for the buyer)').fill('The font licence arrives next week.');
    await s.getByRole('button', { name: 'Ask for more time' }).click();
    await expect.poll(() => s.getByTestId('extension-proposal').count(), { timeout: 30_000 }).toBe(1);
    const proposed = (await api(seller, `/orders/${orderId}`)).extension_proposal;
    expect(Date.parse(proposed.new_deadline)).toBeGreaterThan(Date.parse((await api(seller, `/orders/${orderId}`)).milestones[1].delivery_deadline));
    await b.reload();
    await heading(b, `Order for “${TITLE}”`);
    await expect.poll(() => b.getByTestId('extension-proposal').innerText(), { timeout: 20_000 }).toContain('The font licence arrives next week.');
    await checkState(b, 'buyer sees the extension proposal');
    await b.getByRole('button', { name: 'Accept the new deadline' }).click();
    await expect.poll(async () => (await api(buyer, `/orders/${orderId}`)).milestones[1].delivery_deadline, { timeout: 30_000 }).toBe(proposed.new_deadline);
    await s.reload();
    await heading(s, `Order for “${TITLE}”`);
    await s.getByLabel('Exact percent').fill('40');
    // the payout preview: 0.6 back to the buyer, the seller 0.9 minus the 2.5 % fee on it
    expect(await s.getByTestId('settlement-preview').innerText()).toBe(
      "The buyer gets 0.6 USDC; the seller receives 0.8775 USDC (the 2.5 % fee, 0.0225 USDC, is charged on the seller's share only).",
    );
    await checkState(s, 'seller proposes a settlement');
    await s.getByRole('button', { name: 'Propose 40 % to the buyer' }).click();
    await expect.poll(() => s.getByTestId('settlement-proposal').getAttribute('data-bps'), { timeout: 30_000 }).toBe('4000');
    // the proposer may withdraw, not accept
    expect(await s.locator('[data-action="withdraw_settlement"]').count()).toBe(1);
    expect(await s.locator('[data-action="accept_settlement"]').count()).toBe(0);

    await b.reload();
    await heading(b, `Order for “${TITLE}”`);
    const proposal = b.getByTestId('settlement-proposal');
    await expect.poll(() => proposal.innerText(), { timeout: 20_000 }).toContain('The seller proposes');
    expect(await proposal.innerText()).toContain('40 % back to the buyer (0.6 USDC), the seller receives 0.8775 USDC');
    await checkState(b, 'buyer sees the settlement proposal');
    await b.getByRole('button', { name: 'Accept: 40 % to the buyer' }).click();
    await expect.poll(milestoneStatus(b, 2), { timeout: 30_000 }).toBe('resolved');

    const order = await api(buyer, `/orders/${orderId}`);
    expect(order.milestones[1]).toMatchObject({ status: 'resolved', payout: { buyer_base_units: '600000', seller_base_units: '877500', treasury_base_units: '22500' } });
    expect(order.current_milestone).toBeNull();
    expect(await usdc(buyer.keypair.publicKey)).toBe(10_000_000n - 1_000_000n - 1_500_000n + 600_000n);
    expect(await usdc(seller.keypair.publicKey)).toBe(975_000n + 877_500n);
    await checkState(b, 'settled');
  }, 180_000);

  it('the buyer tips the seller from the wallet; the confirmation shows', async () => {
    const b = buyer.page;
    await b.getByLabel('Tip the seller (USDC)').fill('0.1');
    await b.getByRole('button', { name: 'Send tip' }).click();
    await expect.poll(() => b.locator('#status').innerText(), { timeout: 30_000 }).toBe('Thank you: your tip of 0.1 USDC reached the seller.');
    await expect.poll(() => b.getByTestId('tips').innerText(), { timeout: 20_000 }).toContain('0.1 USDC tip, confirmed');
    expect(await usdc(seller.keypair.publicKey)).toBe(975_000n + 877_500n + 100_000n);
    await checkState(b, 'tipped');
  }, 120_000);

  it('a custom offer: the buyer asks, the seller sends an offer in the conversation, the buyer accepts it into an order', async () => {
    const b = buyer.page;
    await b.goto(`${origin}/app/#/listings/${listingId}`);
    await heading(b, TITLE);
    await b.getByText('Ask the seller, or for a custom offer').click();
    await b.getByLabel('Your message').fill('Could you do just a favicon?');
    await b.getByRole('button', { name: 'Send to the seller' }).click();
    await heading(b, 'Conversation with the seller');
    const conversationId = decodeURIComponent(new URL(b.url()).hash.split('/')[2]!);

    const s = seller.page;
    await s.goto(`${origin}/app/#/conversations`);
    await heading(s, 'Messages');
    await s.locator(`[data-conversation="${conversationId}"] a`).click();
    await heading(s, 'Conversation with the buyer');
    await s.getByText('Send a custom offer').click();
    await s.getByLabel('Offer title').fill('Favicon set');
    await s.getByLabel('What you will do').fill('A favicon in 16, 32 and 180 px.');
    await s.getByLabel('Price (USDC)').fill('9');
    await s.getByLabel('Delivery time (days)').fill('2');
    await s.getByRole('button', { name: 'Send the offer' }).click();
    await expect.poll(() => s.getByTestId('offer').count(), { timeout: 20_000 }).toBe(1);
    // the seller thinks again: withdraws it, and sends one in two milestones
    await s.getByRole('button', { name: 'Withdraw the offer' }).click();
    await expect.poll(() => s.getByTestId('offer').first().getAttribute('data-status'), { timeout: 20_000 }).toBe('withdrawn');
    await s.getByLabel('Offer title').fill('Favicon set');
    await s.getByLabel('What you will do').fill('A favicon in 16, 32 and 180 px.');
    await s.getByLabel('Price (USDC)').fill('1.2');
    await s.getByRole('button', { name: 'Add a milestone' }).click();
    await s.getByRole('button', { name: 'Add a milestone' }).click();
    await s.getByLabel('Milestone 1 title').fill('Drafts');
    await s.getByLabel('Milestone 1 amount').fill('0.5');
    await s.getByLabel('Milestone 2 title').fill('Final icons');
    await s.getByLabel('Milestone 2 amount').fill('0.7');
    await s.getByLabel('Revisions included').fill('1');
    await checkState(s, 'offer form');
    await s.getByRole('button', { name: 'Send the offer' }).click();
    await expect.poll(() => s.getByTestId('offer').count(), { timeout: 20_000 }).toBe(2);
    expect(await s.locator('[data-action="withdraw-offer"]').count()).toBe(1);

    await b.reload();
    await heading(b, 'Conversation with the seller');
    const card = b.locator('[data-testid="offer"][data-status="pending"]');
    await expect.poll(() => card.innerText(), { timeout: 20_000 }).toContain('Custom offer: Favicon set · 1.2 USDC');
    expect(await card.innerText()).toContain('1 revision included');
    expect(await card.innerText()).toMatch(/Drafts: 0\.5 USDC, 3 days.*Final icons: 0\.7 USDC, 3 days/s);
    // the withdrawn one reads so, with nothing to accept
    expect(await b.locator('[data-testid="offer"][data-status="withdrawn"]').innerText()).toContain('Withdrawn by the seller');
    expect(await b.getByRole('button', { name: /^Accept and order/ }).count()).toBe(1);
    await checkState(b, 'offer card');
    await b.getByRole('button', { name: 'Accept and order (1.2 USDC)' }).click();
    await heading(b, `Order for “${TITLE}”`);
    const offerOrder = decodeURIComponent(new URL(b.url()).hash.split('/')[2]!);
    const order = await api(buyer, `/orders/${offerOrder}`);
    expect(order).toMatchObject({ status: 'awaiting_payment', amount_base_units: '1200000', revisions_included: 1 });
    expect(order.milestones.map((m: { title: string; amount_base_units: string }) => [m.title, m.amount_base_units])).toEqual([
      ['Drafts', '500000'],
      ['Final icons', '700000'],
    ]);
    expect(order.offer_id).toEqual(expect.any(String));
    const offer = await api(buyer, `/offers/${order.offer_id}`);
    expect(offer).toMatchObject({ status: 'accepted', order_id: offerOrder, conversation_id: conversationId });
  }, 180_000);

  it('logged no console error and no uncaught page error', () => {
    expect(problems).toEqual([]);
  });
});
