/**
 * Solana Pay interop on the real chain (issue 10 point 3), the way a wallet does it: @solana/pay
 * `parseURL` reads the order's link (unencoded, as the spec wants for a link without query
 * parameters), the wallet GETs label + icon and loads the icon, POSTs its account with
 * `fetchTransaction` (which checks the service's pre-signature), signs, sends to the chain; the payment
 * watcher sees the escrow funded. Every wallet request carries a foreign Origin and must be readable
 * cross-origin. The app runs with the orders settings loaded from the environment (SOLANA_PAY_LABEL,
 * ORDER_PAYMENT_TTL_SECONDS) and an https PUBLIC_BASE_URL (wallets refuse http links); its HTTP
 * server listens on a local port, where the test maps the https link's path.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, sendAndConfirmRawTransaction } from '@solana/web3.js';
import { encodeURL, fetchTransaction, parseURL, type TransactionRequestURL } from '@solana/pay';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import { expectConfirmedSignature } from './helpers/signatures';
import { loadConfig } from '../server/src/config.js';
import { ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet.js';
import { type BootstrappedChain } from './helpers/localnet.js';
import { sharedBootstrappedChain } from './helpers/shared-chain.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';

let env: BootstrappedChain;
let t: TestApp;
let server: Server;
let origin: string;
const scratch = mkdtempSync(path.join(tmpdir(), 'bazaar-solana-pay-'));
const WALLET_ORIGIN = 'https://wallet.example';

beforeAll(async () => {
  env = await sharedBootstrappedChain('solana-pay');
  const loaded = loadConfig({
    DATA_DIR: scratch,
    JWT_SECRET: 'x'.repeat(40),
    PUBLIC_BASE_URL: 'https://bazaar.test',
    SOLANA_PAY_LABEL: 'Bazaar test market',
    ORDER_PAYMENT_TTL_SECONDS: '600',
  });
  t = await createTestApp({
    chain: env.chain,
    config: { currencies: env.boot.currencies, publicBaseUrl: loaded.publicBaseUrl, orders: loaded.orders },
  });
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await t?.close();
  await env?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The https link of the service, served here: same path on the local listener. */
const local = (link: URL) => new URL(`${link.pathname}${link.search}`, origin);

describe('a wallet pays an order through Solana Pay', () => {
  it('parseURL, label + icon, fetchTransaction, sign, send: the escrow is funded', async () => {
    const buyer = Keypair.generate();
    const seller = Keypair.generate();
    await Promise.all([buyer, seller].map((k) => ensureSol(env.chain.connection, k.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL)));
    await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, buyer.publicKey.toBase58(), 10_000_000n);
    const [b, s] = await Promise.all([loginAs(t, buyer), loginAs(t, seller)]);
    const listing = await request(t.app)
      .post(`${API}/listings`)
      .set(s.headers)
      .send({ title: 'Solana Pay interop', description: 'Paid by a wallet.', price: 2, currency: 'USDC', category: 'design', duration: 2 });
    expect(listing.status, JSON.stringify(listing.body)).toBe(201);
    const created = await request(t.app).post(`${API}/orders`).set(b.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: listing.body.listing_id });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(Date.parse(created.body.payment_expires_at) - Date.parse(created.body.created_at)).toBe(600_000);

    // the link: not URL-encoded (no query parameters), exactly what @solana/pay's encodeURL makes
    const url: string = created.body.payment.solana_pay_url;
    const endpoint = `https://bazaar.test${API}/orders/${created.body.order_id}/solana-pay`;
    expect(url).toBe(`solana:${endpoint}`);
    expect(url).toBe(String(encodeURL({ link: new URL(endpoint) })));
    const parsed = parseURL(url) as TransactionRequestURL;
    expect(parsed.link.href).toBe(endpoint);

    // GET: label and icon, readable cross-origin; the icon is an SVG the wallet can load
    const label = await fetch(local(parsed.link), { headers: { Origin: WALLET_ORIGIN, Accept: 'application/json' } });
    expect(label.status).toBe(200);
    expect(label.headers.get('access-control-allow-origin')).toBe('*');
    const { label: text, icon } = (await label.json()) as { label: string; icon: string };
    expect(text).toBe('Bazaar test market');
    expect(icon).toBe('https://bazaar.test/icon.svg');
    const image = await fetch(local(new URL(icon)), { headers: { Origin: WALLET_ORIGIN } });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await image.text()).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);

    // POST: the preflight a browser wallet sends, then fetchTransaction as the wallet runs it
    const pre = await fetch(local(parsed.link), {
      method: 'OPTIONS',
      headers: { Origin: WALLET_ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    const tx = await fetchTransaction(env.chain.connection, buyer.publicKey, local(parsed.link));
    expect(tx.feePayer?.equals(buyer.publicKey)).toBe(true);
    tx.partialSign(buyer);
    const signature = await sendAndConfirmRawTransaction(env.chain.connection, tx.serialize(), { commitment: 'confirmed' });
    expect(signature).toBe(bs58.encode(tx.signature!)); // the wallet's own transaction
    await expectConfirmedSignature(env.chain.connection, signature, 'the Solana Pay payment');

    // the payment watcher finds the funded escrow
    await t.services.orders!.watcher.runOnce();
    const order = await request(t.app).get(`${API}/orders/${created.body.order_id}`).set(b.headers);
    expect(order.body).toMatchObject({ status: 'in_progress', escrow_state: 'funded' });
  }, 120_000);
});
