/**
 * Solana Pay interop on the real chain (issue 10 point 3; issue 26 item 3: Solana Pay 1.2), the way a wallet does
 * it, with the reference library @solana/pay 1.x on @solana/kit (no web3.js on the wallet's side): `parseURL` reads
 * the order's link (unencoded, as the spec wants for a link without query parameters), the wallet GETs label + icon
 * and loads the icon, POSTs its account with `fetchTransaction` (which checks the service's pre-signature, the fee
 * payer and that only the wallet's signature is missing), validates the transaction against the 1.2 answer (token
 * program, fee payer), signs it with Kit, sends it; the payment watcher sees the escrow funded. Then the 1.2
 * structured errors from the real routes (SP_ALREADY_PAID, SP_PRICE_EXPIRED, SP_UNAUTHORIZED_ACCOUNT,
 * SP_RESOURCE_NOT_FOUND, SP_INVALID_REQUEST), which `fetchTransaction` refuses as failed requests. Every wallet
 * request carries a foreign Origin and must be readable cross-origin. The app runs with the orders settings loaded
 * from the environment (SOLANA_PAY_LABEL, ORDER_PAYMENT_TTL_SECONDS) and an https PUBLIC_BASE_URL (wallets refuse
 * http links); its HTTP server listens on a local port, where the test maps the https link's path.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import {
  address,
  createKeyPairFromBytes,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  signTransaction,
} from '@solana/kit';
import { encodeURL, fetchTransaction, FetchTransactionError, parseURL, type TransactionRequestURL } from '@solana/pay';
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
/** the service's wall clock (payment windows) runs ahead of real time by this much */
let clockOffsetMs = 0;
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
    now: () => new Date(Date.now() + clockOffsetMs),
    config: { currencies: env.boot.currencies, publicBaseUrl: loaded.publicBaseUrl, orders: loaded.orders, siwsChainId: 'localnet', solanaRpcUrl: env.localnet.rpcUrl },
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

const LEGACY_TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

/** A buyer with SOL and USDC, a seller, both signed in, and an order of a 2 USDC listing awaiting payment. */
async function orderAwaitingPayment() {
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
  return { buyer, seller, b, created };
}

/** A wallet's POST to the transaction request, raw (to read an error body as the 1.2 draft defines it). */
async function walletPost(link: URL, body: unknown) {
  const res = await fetch(local(link), {
    method: 'POST',
    headers: { Origin: WALLET_ORIGIN, Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a wallet pays an order through Solana Pay', () => {
  it('parseURL, label + icon, fetchTransaction (@solana/pay 1.x on Kit), validate, sign, send: the escrow is funded', async () => {
    const { buyer, b, created } = await orderAwaitingPayment();
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
    const rpc = createSolanaRpc(env.localnet.rpcUrl);
    const account = address(buyer.publicKey.toBase58());
    const tx = await fetchTransaction(rpc, account, local(parsed.link));

    // validate what came back as a wallet treats it (untrusted): the fee payer is the account (unsponsored), the only
    // missing signature is the account's, and the 1.2 answer's token program is the one the transaction uses
    const answer = await walletPost(parsed.link, { account });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ tokenProgram: LEGACY_TOKEN_PROGRAM, message: expect.stringContaining('2 USDC') });
    expect(answer.body).not.toHaveProperty('feePayer');
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    expect(message.staticAccounts[0]).toBe(account);
    const missing = Object.entries(tx.signatures).filter(([, sig]) => !sig || sig.every((x) => x === 0)).map(([k]) => k);
    expect(missing).toEqual([account]);
    expect(Object.keys(tx.signatures)).toHaveLength(2); // the buyer and the platform authority
    expect(message.staticAccounts).toContain(answer.body.tokenProgram);

    // sign with Kit (the buyer's key pair as a WebCrypto CryptoKeyPair) and send
    const signed = await signTransaction([await createKeyPairFromBytes(buyer.secretKey)], tx);
    const signature = getSignatureFromTransaction(signed);
    expect(await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', preflightCommitment: 'confirmed' }).send()).toBe(signature);
    await expectConfirmedSignature(env.chain.connection, signature, 'the Solana Pay payment');
    expect(bs58.decode(signature)).toHaveLength(64);

    // the payment watcher finds the funded escrow
    await t.services.orders!.watcher.runOnce();
    const order = await request(t.app).get(`${API}/orders/${created.body.order_id}`).set(b.headers);
    expect(order.body).toMatchObject({ status: 'in_progress', escrow_state: 'funded' });
    // explorer links (issue 26 item 4): the wallet's transaction and the mints, on the localnet's custom cluster
    const custom = `?cluster=custom&customUrl=${encodeURIComponent(env.localnet.rpcUrl)}`;
    expect(order.body.transactions).toEqual([expect.objectContaining({ action: 'fund', signature, explorer_url: `https://explorer.solana.com/tx/${signature}${custom}` })]);
    expect(order.body).toMatchObject({
      payment_mint_explorer_url: `https://explorer.solana.com/address/${order.body.payment_mint}${custom}`,
      token_mint_explorer_url: `https://explorer.solana.com/address/${order.body.token_mint_address}${custom}`,
      escrow_account_explorer_url: `https://explorer.solana.com/address/${order.body.escrow_account_address}${custom}`,
    });

    // paid: the 1.2 structured error, which the reference library refuses as a failed request
    const again = await walletPost(parsed.link, { account });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      type: 'https://bazaar.dev/problems/invalid-state-transition',
      code: 'SP_ALREADY_PAID',
      message: expect.any(String),
      details: { order_status: 'in_progress' },
    });
    await expect(fetchTransaction(rpc, account, local(parsed.link))).rejects.toThrow(new FetchTransactionError('request failed: 409'));
  }, 120_000);

  it('structured errors from the real routes: another account, an unknown order, a bad body, a closed payment window', async () => {
    const { seller, created } = await orderAwaitingPayment();
    const link = (parseURL(created.body.payment.solana_pay_url) as TransactionRequestURL).link;
    // a wallet that keeps the 1.2 protocol parameter (a Token-2022 order's `token-program`) on the link it POSTs to
    const kept = await walletPost(new URL(`${link.href}?token-program=TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb`), { account: created.body.buyer_wallet });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    const other = await walletPost(link, { account: seller.publicKey.toBase58() });
    expect([other.status, other.body.code]).toEqual([403, 'SP_UNAUTHORIZED_ACCOUNT']);
    const unknown = new URL(link.href.replace(created.body.order_id, randomUUID()));
    const none = await walletPost(unknown, { account: seller.publicKey.toBase58() });
    expect([none.status, none.body.code]).toEqual([404, 'SP_RESOURCE_NOT_FOUND']);
    const label = await fetch(local(unknown), { headers: { Origin: WALLET_ORIGIN } });
    expect([label.status, ((await label.json()) as { code?: string }).code]).toEqual([404, 'SP_RESOURCE_NOT_FOUND']);
    const bad = await walletPost(link, { account: 'not-a-key' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'SP_INVALID_REQUEST', details: { errors: expect.arrayContaining([expect.objectContaining({ path: 'body.account' })]) } });
    // past the payment window (the service's clock moves on): the price quoted no longer stands
    clockOffsetMs = 601_000;
    try {
      const late = await walletPost(link, { account: created.body.buyer_wallet });
      expect(late.status, JSON.stringify(late.body)).toBe(409);
      expect(late.body).toMatchObject({ code: 'SP_PRICE_EXPIRED', type: 'https://bazaar.dev/problems/invalid-state-transition' });
      expect(late.body).not.toHaveProperty('retryAfterMs');
    } finally {
      clockOffsetMs = 0;
    }
  }, 120_000);
});
