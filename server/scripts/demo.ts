/**
 * `npm run demo`: a real client session through the typed SDK (@bazaar/client-sdk) against a
 * running service (`npm start`), with every money movement checked on the chain.
 *
 *  1. two fresh wallets (seller, buyer) get SOL (requestAirdrop) and the buyer 200 test USDC (the
 *     dev faucet: the bootstrap's test USDC mint authority from DATA_DIR/keys);
 *  2. both log in with Sign In With Solana (request_login -> signMessage -> verify_login);
 *  3. the seller creates a listing; its Token-2022 NFT is checked on chain (decimals 0, supply 1,
 *     metadata uri, held by the seller's associated token account, mint authority revoked);
 *  4. the buyer searches the marketplace and finds it;
 *  5. the buyer orders it (Idempotency-Key), signs the returned fund transaction and submits it;
 *  6. the seller delivers; 7. the buyer confirms: the seller's USDC balance rises by exactly
 *     price - fee on chain, the escrow account is closed;
 *  8. the buyer reviews; the seller's reputation shows it.
 * Part 2, work in stages (issue 24; `stagedOrder`): a listing in three packages (basic, standard, premium;
 * the premium one in two milestones with one revision), capacity 2, unlimited stock. The buyer orders the
 * premium package and funds milestone 1 only (one signature: the listing stays available, one of two
 * units taken); the seller delivers; the buyer asks for a revision (its message lands in the order's
 * chat); the seller delivers again; a second revision is refused (409 revision-limit-reached); the buyer
 * confirms milestone 1 (the seller gets 20 USDC - fee on chain). The buyer funds milestone 2; the seller
 * asks for 3 more days and the buyer accepts (extend_deadline on chain); the seller delivers; the buyer
 * proposes 20 % back and the seller accepts: the program pays exactly that split (the fee on the seller's
 * share only) and the order completes. The buyer tips 2 USDC (a plain token transfer; the seller's stats
 * show it). Then a custom offer: the buyer asks in a conversation, the seller sends an offer there, the
 * buyer accepts it into an order and funds it. Each step checks the balances on chain and waits for the
 * webhook events (milestone.*, revision.requested, extension.accepted, settlement.accepted,
 * order.completed, tip.received, offer.accepted).
 * Events (issue 11): after logging in, the seller registers a webhook (a receiver inside this
 * script, on 127.0.0.1: `npm start` allows private webhook URLs) and follows the event stream; the
 * webhook is told of the payment (order.funded, signature verified with the SDK's verifyWebhook),
 * and the buyer and the seller exchange a message on the order, which reaches the seller live
 * (message.created on the stream).
 * Each step prints its transaction signature and time; any failure exits non-zero.
 *
 * Env (server/src/config.ts loadToolConfig): BAZAAR_URL (default http://127.0.0.1:3000), DATA_DIR
 * (default ./data: chain.json and the dev faucet key written by `npm start`), SOLANA_RPC_URL (default:
 * the rpcUrl in chain.json). `npm start` prints the exact command when they differ from the defaults.
 */
import { randomBytes } from 'node:crypto';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import {
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  getAccount,
  getAssociatedTokenAddressSync,
  getMint,
  getTokenMetadata,
} from '@solana/spl-token';
import { BazaarApiError, createBazaarClient, newIdempotencyKey, type BazaarClient } from '@bazaar/client-sdk';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';
import { followEvents } from '@bazaar/client-sdk/events';
import { verifyWebhook } from '@bazaar/client-sdk/webhooks';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Event } from '@bazaar/contract';
import { loadToolConfig } from '../src/config.js';
import { ensureSol, mintTestUsdc, readChainFile } from './bootstrap-localnet.js';
import { demoSteps } from './demo-steps.js';

const tool = loadToolConfig(process.env);
const { baseUrl, dataDir } = tool;
const PRICE_USDC = 25;

const { step, done, summary } = demoSteps();

/** Resolve when `pick` finds an item in `list` (checked as items arrive), or fail after `ms`. */
async function waitFor<T>(list: T[], pick: (x: T) => boolean, what: string, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const hit = list.find(pick);
    if (hit) return hit;
    if (Date.now() > until) fail(`${what} did not arrive within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Fail the demo with a message (and the problem document when the API refused). */
function fail(what: string, res?: { status: number; body: unknown }): never {
  throw new Error(res ? `${what}: HTTP ${res.status} ${JSON.stringify(res.body)}` : what);
}
function expectThat(cond: unknown, what: string): asserts cond {
  if (!cond) fail(`check failed: ${what}`);
}

async function usdcBalance(connection: Connection, mint: PublicKey, owner: PublicKey): Promise<bigint> {
  const ata = getAssociatedTokenAddressSync(mint, owner, true, TOKEN_PROGRAM_ID);
  return getAccount(connection, ata, 'confirmed', TOKEN_PROGRAM_ID).then(
    (a) => a.amount,
    () => 0n,
  );
}

const lastSignature = (order: { transactions: Array<{ action: string; signature: string }> }, action: string) =>
  [...order.transactions].reverse().find((t) => t.action === action)?.signature ?? fail(`no ${action} transaction on the order`);

async function run() {
  const chainFile = readChainFile(dataDir) ?? fail(`${dataDir}/chain.json is missing: start the service first (npm start)`);
  const rpcUrl = tool.solanaRpcUrl ?? chainFile.rpcUrl;
  const connection = new Connection(rpcUrl, 'confirmed');
  const usdcMint = new PublicKey(chainFile.usdcMint);
  console.log(`Bazaar demo against ${baseUrl} (RPC ${rpcUrl})`);

  step('two fresh wallets get SOL and test USDC');
  const sellerKp = Keypair.generate();
  const buyerKp = Keypair.generate();
  await Promise.all([
    ensureSol(connection, sellerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL),
    ensureSol(connection, buyerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL),
  ]);
  const faucet = await mintTestUsdc(dataDir, rpcUrl, buyerKp.publicKey.toBase58(), 200_000_000n);
  expectThat((await usdcBalance(connection, usdcMint, buyerKp.publicKey)) === 200_000_000n, 'buyer holds 200 USDC');
  done(`seller ${sellerKp.publicKey.toBase58()}, buyer ${buyerKp.publicKey.toBase58()} (2 SOL each); 200 USDC minted to the buyer, tx ${faucet.signature}`);

  step('both log in with Sign In With Solana');
  const seller: BazaarClient = createBazaarClient({ baseUrl });
  const buyer: BazaarClient = createBazaarClient({ baseUrl });
  const [sellerLogin, buyerLogin] = await Promise.all([
    loginWithWallet(seller, keypairSigner(sellerKp.secretKey)),
    loginWithWallet(buyer, keypairSigner(buyerKp.secretKey)),
  ]);
  expectThat(sellerLogin.user.wallet === sellerKp.publicKey.toBase58(), 'the seller token belongs to the seller wallet');
  done(`seller user ${sellerLogin.user.user_id}, buyer user ${buyerLogin.user.user_id}; tokens valid until ${buyerLogin.expiresAt.toISOString()}`);

  step('the seller registers a webhook (a receiver in this script) and follows the event stream');
  const hooked: Array<{ event: Event; at: number }> = [];
  let secret = '';
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        hooked.push({ event: verifyWebhook(Buffer.concat(chunks), req.headers, secret), at: Date.now() });
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiver.unref();
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bazaar`;
  const hook = await seller.webhooks.createWebhook({ body: { url: hookUrl, event_types: [...HOOKED_TYPES], description: 'demo' } });
  if (hook.status !== 201) fail('createWebhook', hook);
  secret = hook.body.secret;
  const streamed: Array<{ event: Event; at: number }> = [];
  const stopStream = new AbortController();
  const following = followEvents({
    baseUrl,
    token: sellerLogin.token,
    types: ['order.funded', 'message.created'],
    signal: stopStream.signal,
    onEvent: (event) => void streamed.push({ event, at: Date.now() }),
  });
  done(`webhook ${hook.body.webhook_id} -> ${hookUrl} (${HOOKED_TYPES.join(', ')}); event stream open`);

  step('the seller creates a listing (its Token-2022 NFT is minted on chain)');
  const word = `demo${randomBytes(4).toString('hex')}`;
  const created = await seller.listings.createListing({
    body: {
      title: `Logo design ${word}`,
      description: `Three logo concepts and two revisions, delivered as SVG (${word}).`,
      price: PRICE_USDC,
      currency: 'USDC',
      category: 'design',
      duration: 5,
    },
  });
  if (created.status !== 201) fail('createListing', created);
  const listing = created.body;
  const nft = new PublicKey(listing.token_mint_address);
  const mintInfo = await getMint(connection, nft, 'confirmed', TOKEN_2022_PROGRAM_ID);
  expectThat(mintInfo.supply === 1n && mintInfo.decimals === 0, 'listing mint: supply 1, decimals 0');
  expectThat(mintInfo.mintAuthority === null, 'listing mint authority revoked');
  const meta = await getTokenMetadata(connection, nft, 'confirmed', TOKEN_2022_PROGRAM_ID);
  expectThat(meta?.uri.includes(listing.listing_id), 'token metadata uri points at the listing');
  const sellerNft = await getAccount(
    connection,
    getAssociatedTokenAddressSync(nft, sellerKp.publicKey, false, TOKEN_2022_PROGRAM_ID),
    'confirmed',
    TOKEN_2022_PROGRAM_ID,
  );
  expectThat(sellerNft.amount === 1n, "the seller's token account holds the listing NFT");
  done(`listing ${listing.listing_id} (${listing.price} ${listing.currency}); mint ${nft.toBase58()} checked on chain; tx ${listing.mint_transaction.signature}`);

  step('the buyer searches the marketplace and finds it');
  const found = await buyer.marketplace.searchListings({ query: { query: word, sort: 'relevance', limit: 10 } });
  if (found.status !== 200) fail('searchListings', found);
  expectThat(found.body.data.some((l) => l.listing_id === listing.listing_id), `search "${word}" returns the listing`);
  done(`search "${word}": ${found.body.data.length} result(s), first "${found.body.data[0]!.title}"`);

  step('the buyer orders it, signs the escrow fund transaction and submits it');
  const ordered = await buyer.orders.createOrder({
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { listing_id: listing.listing_id },
  });
  if (ordered.status !== 201) fail('createOrder', ordered);
  const orderId = ordered.body.order_id;
  const payment = ordered.body.payment ?? fail('createOrder returned no payment transaction for a wallet-paid order');
  const tx = Transaction.from(Buffer.from(payment.transaction, 'base64'));
  tx.partialSign(buyerKp);
  const submitted = await buyer.orders.submitOrderTransaction({
    params: { order_id: orderId },
    body: { signed_transaction: tx.serialize().toString('base64') },
  });
  if (submitted.status !== 200) fail('submitOrderTransaction', submitted);
  expectThat(submitted.body.status === 'in_progress', `order funded (status ${submitted.body.status})`);
  const escrowInfo = await connection.getAccountInfo(new PublicKey(submitted.body.escrow_account_address), 'confirmed');
  expectThat(escrowInfo !== null, 'the escrow account exists on chain');
  const vault = await getAccount(connection, new PublicKey(submitted.body.vault_address), 'confirmed', TOKEN_PROGRAM_ID);
  expectThat(vault.amount === BigInt(submitted.body.amount_base_units), 'the vault holds the price');
  done(`order ${orderId} in escrow ${submitted.body.escrow_account_address} (vault ${vault.amount} base units); fund tx ${lastSignature(submitted.body, 'fund')}`);

  step("the seller's webhook is told of the payment, and so is its event stream");
  const paidAt = Date.now();
  const viaHook = await waitFor(hooked, (h) => h.event.type === 'order.funded' && h.event.resource_id === orderId, 'webhook order.funded');
  const viaStream = await waitFor(streamed, (h) => h.event.type === 'order.funded' && h.event.resource_id === orderId, 'stream order.funded');
  expectThat(viaHook.event.type === 'order.funded' && viaHook.event.data.status === 'in_progress', 'the webhook carries the funded order');
  expectThat(viaHook.event.signature === lastSignature(submitted.body, 'fund'), 'the webhook names the fund transaction');
  done(
    `webhook (signature verified): ${viaHook.event.type} order ${orderId}, ${viaHook.event.data.amount} ${viaHook.event.data.currency}, ` +
      `tx ${viaHook.event.signature} (+${Math.max(0, viaHook.at - paidAt)} ms); stream: event ${viaStream.event.event_id} at position ${viaStream.event.position}`,
  );

  step('buyer and seller exchange messages on the order');
  const asked = await buyer.chat.sendOrderMessage({ params: { order_id: orderId }, body: { body: 'Hi! Could you use dark blue as the main colour?' } });
  if (asked.status !== 201) fail('sendOrderMessage (buyer)', asked);
  const heard = await waitFor(streamed, (h) => h.event.type === 'message.created' && h.event.resource_id === asked.body.message_id, 'stream message.created');
  const answered = await seller.chat.sendOrderMessage({ params: { order_id: orderId }, body: { body: 'Sure, dark blue it is. First drafts tomorrow.' } });
  if (answered.status !== 201) fail('sendOrderMessage (seller)', answered);
  const thread = await buyer.chat.listOrderMessages({ params: { order_id: orderId }, query: { limit: 10 } });
  if (thread.status !== 200) fail('listOrderMessages', thread);
  expectThat(thread.body.data.length === 2 && thread.body.conversation.unread_count === 1, 'the buyer sees both messages, one unread');
  for (const m of [...thread.body.data].reverse()) console.log(`   ${m.sender_role}: ${m.body}`);
  stopStream.abort();
  await following;
  done(`the seller's stream got the buyer's message live (event ${heard.event.event_id}); conversation ${thread.body.conversation.conversation_id}`);

  step('the seller delivers');
  const sellerUsdcBefore = await usdcBalance(connection, usdcMint, sellerKp.publicKey);
  const delivered = await seller.orders.deliverOrder({ params: { order_id: orderId } });
  if (delivered.status !== 200) fail('deliverOrder', delivered);
  expectThat(delivered.body.status === 'delivered', `order delivered (status ${delivered.body.status})`);
  done(`auto-release at ${delivered.body.auto_release_at}; mark_delivered tx ${lastSignature(delivered.body, 'mark_delivered')}`);

  step('the buyer confirms; the escrow pays the seller price - fee');
  const confirmed = await buyer.orders.confirmOrder({ params: { order_id: orderId } });
  if (confirmed.status !== 200) fail('confirmOrder', confirmed);
  expectThat(confirmed.body.status === 'completed', `order completed (status ${confirmed.body.status})`);
  const sellerUsdcAfter = await usdcBalance(connection, usdcMint, sellerKp.publicKey);
  const expected = BigInt(confirmed.body.seller_receives_base_units);
  expectThat(
    expected === BigInt(confirmed.body.amount_base_units) - BigInt(confirmed.body.fee_base_units),
    'seller_receives = amount - fee',
  );
  expectThat(sellerUsdcAfter - sellerUsdcBefore === expected, `seller USDC rose by ${expected} base units on chain`);
  expectThat((await connection.getAccountInfo(new PublicKey(confirmed.body.escrow_account_address), 'confirmed')) === null, 'escrow account closed');
  done(
    `seller USDC ${sellerUsdcBefore} -> ${sellerUsdcAfter} base units (+${Number(expected) / 1e6} USDC = ${PRICE_USDC} - ${confirmed.body.fee_bps / 100}% fee); ` +
      `release tx ${lastSignature(confirmed.body, 'release')}`,
  );

  step("the buyer reviews; the seller's reputation shows it");
  const reviewed = await buyer.reviews.createReview({
    params: { order_id: orderId },
    body: { rating: 5, text: 'Great concepts, fast revisions.' },
  });
  if (reviewed.status !== 201) fail('createReview', reviewed);
  const profile = await buyer.users.getUser({ params: { wallet: sellerKp.publicKey.toBase58() } });
  if (profile.status !== 200) fail('getUser', profile);
  const rep = profile.body.reputation;
  expectThat(rep.count === 1 && rep.average === 5 && rep.distribution['5'] === 1, 'reputation: one 5-star review');
  expectThat(profile.body.stats.completed_sales === 1, 'seller stats: one completed sale');
  done(`review ${reviewed.body.review_id}; seller reputation ${rep.average} (${rep.count} review), completed sales ${profile.body.stats.completed_sales}`);

  await stagedOrder({ connection, usdcMint, seller, buyer, sellerKp, buyerKp, hooked });

  console.log(`\n${summary('demo')}`);
}

/** Event types the seller's webhook subscribes to (both parts of the demo). */
const HOOKED_TYPES = [
  'order.funded',
  'order.completed',
  'milestone.funded',
  'milestone.delivered',
  'milestone.released',
  'milestone.resolved',
  'revision.requested',
  'extension.accepted',
  'settlement.accepted',
  'tip.received',
  'offer.accepted',
] as const;

type Hooked = Array<{ event: Event; at: number }>;
type OrderBody = { order_id: string; milestones: Array<{ index: number; transactions: Array<{ action: string; signature: string }> }> };

/** The last `action` transaction of milestone `index` of an order. */
function milestoneSignature(order: OrderBody, index: number, action: string): string {
  const m = order.milestones.find((x) => x.index === index) ?? fail(`order ${order.order_id} has no milestone ${index}`);
  return lastSignature(m, action);
}

/** Base units -> a UI string of 6 decimals (USDC). */
const usdc = (units: bigint) => `${units < 0n ? '-' : ''}${(Number(units < 0n ? -units : units) / 1e6).toFixed(6).replace(/\.?0+$/, '')} USDC`;

/** The program's split (programs/escrow payout.rs): buyer floor(amount*bps/1e4), fee floor(rest*fee_bps/1e4) on the seller's share. */
function split(amount: bigint, feeBps: number, buyerBps: number) {
  const buyer = (amount * BigInt(buyerBps)) / 10_000n;
  const fee = ((amount - buyer) * BigInt(feeBps)) / 10_000n;
  return { buyer, fee, seller: amount - buyer - fee };
}

/**
 * Wait until the webhook received every `types` event of order `orderId` (for milestone.* events, of
 * milestone `index` when given; `after`: only events received since then) and return them.
 */
async function hookedEvents(hooked: Hooked, orderId: string, types: string[], opts: { index?: number; after?: number } = {}): Promise<string> {
  const got: string[] = [];
  for (const type of types) {
    const h = await waitFor(
      hooked,
      (x) =>
        x.event.type === type &&
        x.event.resource_id === orderId &&
        x.at >= (opts.after ?? 0) &&
        (opts.index === undefined || !type.startsWith('milestone.') || (x.event.data as { milestone_index?: number }).milestone_index === opts.index),
      `webhook ${type} (order ${orderId}${opts.index ? `, milestone ${opts.index}` : ''})`,
    );
    got.push(`${h.event.type}${h.event.signature ? ` (tx ${h.event.signature.slice(0, 12)}…)` : ''}`);
  }
  return got.join(', ');
}

/**
 * Part 2 (issue 24): a listing in three packages, capacity 2; the buyer buys the premium package (two
 * milestones) and pays it in stages: milestone 1 funded, delivered, one revision asked for in the chat,
 * delivered again, confirmed; milestone 2 funded, its deadline extended by agreement, delivered and settled
 * by agreement (20 % back to the buyer); the order completes, the buyer tips. Then a custom offer in a
 * conversation, accepted into an order and funded. Every payout is checked against the chain.
 */
async function stagedOrder(ctx: {
  connection: Connection;
  usdcMint: PublicKey;
  seller: BazaarClient;
  buyer: BazaarClient;
  sellerKp: Keypair;
  buyerKp: Keypair;
  hooked: Hooked;
}) {
  const { connection, usdcMint, seller, buyer, sellerKp, buyerKp, hooked } = ctx;
  const balances = async () => ({
    buyer: await usdcBalance(connection, usdcMint, buyerKp.publicKey),
    seller: await usdcBalance(connection, usdcMint, sellerKp.publicKey),
  });
  const signAndSubmit = async (orderId: string, transaction: string) => {
    const tx = Transaction.from(Buffer.from(transaction, 'base64'));
    tx.partialSign(buyerKp);
    const res = await buyer.orders.submitOrderTransaction({ params: { order_id: orderId }, body: { signed_transaction: tx.serialize().toString('base64') } });
    if (res.status !== 200) fail('submitOrderTransaction', res);
    return res.body;
  };

  step('the seller lists a service in three packages (premium: two milestones, one revision), capacity 2, unlimited stock');
  const word = `stages${randomBytes(4).toString('hex')}`;
  const created = await seller.listings.createListing({
    body: {
      title: `Brand identity ${word}`,
      description: `Logo, palette and brand sheet, in stages (${word}).`,
      currency: 'USDC',
      category: 'design',
      capacity: 2,
      stock: null,
      packages: [
        { key: 'basic', name: 'Logo', price: 10, delivery_days: 3, revisions: 0, description: 'One logo concept as SVG.' },
        { key: 'standard', name: 'Logo + palette', price: 25, delivery_days: 5, revisions: 1, description: 'Two concepts and a colour palette.' },
        {
          key: 'premium',
          name: 'Brand identity',
          price: 60,
          delivery_days: 10,
          revisions: 1,
          description: 'Concepts first, then the final logo, palette and brand sheet.',
          milestones: [
            { title: 'Concepts', amount: 20, delivery_days: 4 },
            { title: 'Final files and brand sheet', amount: 40, delivery_days: 6 },
          ],
        },
      ],
    },
  });
  if (created.status !== 201) fail('createListing (packages)', created);
  const listing = created.body;
  expectThat(listing.packages.length === 3 && listing.price === 10, 'three packages; the listing reads the cheapest price');
  expectThat(listing.capacity === 2 && listing.stock === null, 'capacity 2, unlimited stock');
  done(
    `listing ${listing.listing_id}: ${listing.packages.map((p) => `${p.key} ${p.price} USDC (${p.milestones?.length ?? 1} milestone(s), ${p.revisions} revision(s))`).join(', ')}; mint tx ${listing.mint_transaction.signature}`,
  );

  step('the buyer orders the premium package and funds milestone 1 (one wallet signature)');
  const before1 = await balances();
  const ordered = await buyer.orders.createOrder({
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { listing_id: listing.listing_id, package: 'premium' },
  });
  if (ordered.status !== 201) fail('createOrder (premium)', ordered);
  const orderId = ordered.body.order_id;
  expectThat(ordered.body.milestones.length === 2 && ordered.body.milestones[1]!.status === 'scheduled', 'two milestones, the second scheduled');
  expectThat(ordered.body.package_name === 'Brand identity' && ordered.body.revisions_included === 1, 'the premium terms are frozen into the order');
  const funded1 = await signAndSubmit(orderId, (ordered.body.payment ?? fail('no payment for milestone 1')).transaction);
  const m1 = funded1.milestones[0]!;
  expectThat(m1.status === 'in_progress' && funded1.current_milestone === 1, `milestone 1 funded (status ${m1.status})`);
  const vault1 = await getAccount(connection, new PublicKey(m1.vault_address), 'confirmed', TOKEN_PROGRAM_ID);
  expectThat(vault1.amount === 20_000_000n && BigInt(m1.amount_base_units) === 20_000_000n, 'the vault of milestone 1 holds 20 USDC');
  const after1 = await balances();
  expectThat(before1.buyer - after1.buyer === 20_000_000n, 'the buyer paid 20 USDC, not the whole price');
  const listed = await buyer.listings.getListing({ params: { listing_id: listing.listing_id } });
  if (listed.status !== 200) fail('getListing', listed);
  expectThat(listed.body.status === 'available', `one open order of capacity 2: the listing stays available (${listed.body.status})`);
  const ev1 = await hookedEvents(hooked, orderId, ['order.funded', 'milestone.funded'], { index: 1 });
  done(`order ${orderId}: milestone 1 escrow ${m1.escrow_account_address} holds ${usdc(vault1.amount)}; buyer ${usdc(before1.buyer)} -> ${usdc(after1.buyer)}; listing still ${listed.body.status}; fund tx ${milestoneSignature(funded1, 1, 'fund')}; webhook: ${ev1}`);

  step('the seller delivers milestone 1; the buyer asks for a revision (its message goes into the chat)');
  const d1 = await seller.orders.deliverMilestone({ params: { order_id: orderId, index: 1 } });
  if (d1.status !== 200) fail('deliverMilestone 1', d1);
  expectThat(d1.body.milestones[0]!.status === 'delivered', 'milestone 1 delivered');
  const revisionMessage = 'Close! Please try a bolder typeface for the wordmark.';
  const rev = await buyer.orders.requestRevision({
    params: { order_id: orderId },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { message: revisionMessage },
  });
  if (rev.status !== 200) fail('requestRevision', rev);
  const r1 = rev.body.milestones[0]!;
  expectThat(r1.status === 'in_progress' && r1.revisions_used === 1 && r1.auto_release_at === null, 'milestone 1 back in progress, timer stopped, 1 revision used');
  expectThat(Date.parse(r1.delivery_deadline!) >= Date.parse(d1.body.milestones[0]!.delivery_deadline!), 'the delivery deadline did not move earlier');
  const chat = await seller.chat.listOrderMessages({ params: { order_id: orderId }, query: { limit: 10 } });
  if (chat.status !== 200) fail('listOrderMessages', chat);
  expectThat(chat.body.data.some((m) => m.body.includes(revisionMessage)), "the revision request is in the order's chat");
  const ev2 = await hookedEvents(hooked, orderId, ['milestone.delivered', 'revision.requested'], { index: 1 });
  done(`mark_delivered tx ${milestoneSignature(d1.body, 1, 'mark_delivered')}; request_revision tx ${milestoneSignature(rev.body, 1, 'request_revision')}; deadline now ${r1.delivery_deadline}; chat: "${revisionMessage}"; webhook: ${ev2}`);

  step('the seller delivers again; a second revision is refused (one included); the buyer confirms milestone 1');
  const d2 = await seller.orders.deliverMilestone({ params: { order_id: orderId, index: 1 } });
  if (d2.status !== 200) fail('deliverMilestone 1 (again)', d2);
  const again = await buyer.orders.requestRevision({
    params: { order_id: orderId },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { message: 'One more change, please.' },
  });
  expectThat(again.status === 409 && (again.body as { type?: string }).type?.endsWith('revision-limit-reached'), `a second revision: 409 revision-limit-reached (got ${again.status})`);
  const beforeC = await balances();
  const c1 = await buyer.orders.confirmMilestone({ params: { order_id: orderId, index: 1 } });
  if (c1.status !== 200) fail('confirmMilestone 1', c1);
  const mc1 = c1.body.milestones[0]!;
  const afterC = await balances();
  const want1 = split(20_000_000n, c1.body.fee_bps, 0);
  expectThat(mc1.status === 'completed' && c1.body.status === 'in_progress' && c1.body.current_milestone === 2, `milestone 1 completed, the order goes on (${c1.body.status}, current ${c1.body.current_milestone})`);
  expectThat(afterC.seller - beforeC.seller === want1.seller, `seller USDC rose by ${usdc(want1.seller)} on chain`);
  expectThat(BigInt(mc1.payout!.seller_base_units) === want1.seller && BigInt(mc1.payout!.treasury_base_units) === want1.fee, 'the payout shows 20 USDC - fee');
  expectThat((await connection.getAccountInfo(new PublicKey(mc1.escrow_account_address), 'confirmed')) === null, 'the escrow of milestone 1 is closed');
  const ev3 = await hookedEvents(hooked, orderId, ['milestone.released'], { index: 1 });
  done(`refused: ${(again.body as { title?: string }).title}; seller ${usdc(beforeC.seller)} -> ${usdc(afterC.seller)} (+${usdc(want1.seller)}, fee ${usdc(want1.fee)}); release tx ${milestoneSignature(c1.body, 1, 'release')}; webhook: ${ev3}`);

  step('the buyer funds milestone 2 (one wallet signature)');
  const before2 = await balances();
  const pay2 = await buyer.orders.fundOrderMilestones({
    params: { order_id: orderId },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { milestones: [2] },
  });
  if (pay2.status !== 200) fail('fundOrderMilestones [2]', pay2);
  const funded2 = await signAndSubmit(orderId, pay2.body.transaction);
  const m2 = funded2.milestones[1]!;
  expectThat(m2.status === 'in_progress', `milestone 2 funded (status ${m2.status})`);
  const vault2 = await getAccount(connection, new PublicKey(m2.vault_address), 'confirmed', TOKEN_PROGRAM_ID);
  expectThat(vault2.amount === 40_000_000n, 'the vault of milestone 2 holds 40 USDC');
  const after2 = await balances();
  expectThat(before2.buyer - after2.buyer === 40_000_000n, 'the buyer paid 40 USDC');
  const ev4 = await hookedEvents(hooked, orderId, ['milestone.funded'], { index: 2 });
  done(`milestone 2 escrow ${m2.escrow_account_address} holds ${usdc(vault2.amount)}, deadline ${m2.delivery_deadline}; buyer ${usdc(before2.buyer)} -> ${usdc(after2.buyer)}; fund tx ${milestoneSignature(funded2, 2, 'fund')}; webhook: ${ev4}`);

  step('the seller asks for 3 more days on milestone 2; the buyer accepts (the program moves the deadline)');
  const newDeadline = new Date(Date.parse(m2.delivery_deadline!) + 3 * 86_400_000).toISOString();
  const proposed = await seller.orders.proposeExtension({
    params: { order_id: orderId },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { new_deadline: newDeadline, message: 'The brand sheet needs a few more days.' },
  });
  if (proposed.status !== 200) fail('proposeExtension', proposed);
  expectThat(proposed.body.extension_proposal !== null, 'the proposal is pending');
  const accepted = await buyer.orders.acceptExtension({
    params: { order_id: orderId },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { new_deadline: proposed.body.extension_proposal!.new_deadline },
  });
  if (accepted.status !== 200) fail('acceptExtension', accepted);
  const x2 = accepted.body.milestones[1]!;
  expectThat(Date.parse(x2.delivery_deadline!) === Date.parse(newDeadline) && accepted.body.extension_proposal === null, `milestone 2 deadline moved to ${newDeadline}`);
  const ev5 = await hookedEvents(hooked, orderId, ['extension.accepted']);
  done(`deadline ${m2.delivery_deadline} -> ${x2.delivery_deadline}; extend_deadline tx ${milestoneSignature(accepted.body, 2, 'extend_deadline')}; webhook: ${ev5}`);

  step('the seller delivers milestone 2; the buyer proposes 20 % back, the seller accepts: the program pays that split');
  const d3 = await seller.orders.deliverMilestone({ params: { order_id: orderId, index: 2 } });
  if (d3.status !== 200) fail('deliverMilestone 2', d3);
  const offered = await buyer.orders.proposeSettlement({
    params: { order_id: orderId },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { buyer_bps: 2000 },
  });
  if (offered.status !== 200) fail('proposeSettlement', offered);
  expectThat(offered.body.settlement_proposal?.buyer_bps === 2000, 'the proposal is pending on chain and in the order');
  const beforeS = await balances();
  const settled = await seller.orders.acceptSettlement({
    params: { order_id: orderId },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { buyer_bps: 2000 },
  });
  if (settled.status !== 200) fail('acceptSettlement', settled);
  const afterS = await balances();
  const want2 = split(40_000_000n, settled.body.fee_bps, 2000);
  const ms2 = settled.body.milestones[1]!;
  expectThat(ms2.status === 'resolved', `milestone 2 resolved (${ms2.status})`);
  expectThat(afterS.buyer - beforeS.buyer === want2.buyer, `buyer USDC rose by ${usdc(want2.buyer)} on chain`);
  expectThat(afterS.seller - beforeS.seller === want2.seller, `seller USDC rose by ${usdc(want2.seller)} on chain`);
  expectThat(BigInt(ms2.payout!.buyer_base_units) === want2.buyer && BigInt(ms2.payout!.treasury_base_units) === want2.fee, 'the payout shows the split');
  expectThat(settled.body.status === 'completed' && settled.body.current_milestone === null, `the order completed (${settled.body.status})`);
  expectThat((await connection.getAccountInfo(new PublicKey(ms2.escrow_account_address), 'confirmed')) === null, 'the escrow of milestone 2 is closed');
  const ev6 = await hookedEvents(hooked, orderId, ['milestone.delivered', 'settlement.accepted', 'order.completed'], { index: 2 });
  done(
    `buyer +${usdc(want2.buyer)}, seller +${usdc(want2.seller)} (fee ${usdc(want2.fee)} on the seller's share only); ` +
      `propose_settlement tx ${milestoneSignature(offered.body, 2, 'propose_settlement')}, accept_settlement tx ${milestoneSignature(settled.body, 2, 'accept_settlement')}; webhook: ${ev6}`,
  );

  step('the buyer tips the seller 2 USDC (one wallet signature, a plain token transfer)');
  const beforeT = await balances();
  const tip = await buyer.tips.createTip({
    params: { order_id: orderId },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { amount: 2 },
  });
  if (tip.status !== 201) fail('createTip', tip);
  const tipTx = Transaction.from(Buffer.from(tip.body.payment.transaction, 'base64'));
  tipTx.partialSign(buyerKp);
  const tipped = await buyer.tips.submitTipTransaction({
    params: { order_id: orderId, tip_id: tip.body.tip_id },
    body: { signed_transaction: tipTx.serialize().toString('base64') },
  });
  if (tipped.status !== 200) fail('submitTipTransaction', tipped);
  expectThat(tipped.body.status === 'confirmed', `tip confirmed (${tipped.body.status})`);
  const afterT = await balances();
  expectThat(afterT.seller - beforeT.seller === 2_000_000n && beforeT.buyer - afterT.buyer === 2_000_000n, 'exactly 2 USDC moved from the buyer to the seller');
  const ev7 = await hookedEvents(hooked, tip.body.tip_id, ['tip.received']); // resource: the tip
  const profile = await buyer.users.getUser({ params: { wallet: sellerKp.publicKey.toBase58() } });
  if (profile.status !== 200) fail('getUser', profile);
  const tips = profile.body.stats.tips_received.find((t) => t.currency === 'USDC');
  expectThat(tips?.amount === 2, `seller stats: 2 USDC in tips (${JSON.stringify(profile.body.stats.tips_received)})`);
  done(`seller ${usdc(beforeT.seller)} -> ${usdc(afterT.seller)}; tip tx ${tipped.body.signature}; stats tips_received ${tips.amount} USDC; webhook: ${ev7}`);

  step('a custom offer: the buyer asks in a conversation, the seller offers, the buyer accepts it into an order and funds it');
  const asked = await buyer.chat.createInquiry({
    params: { listing_id: listing.listing_id },
    body: { body: 'Could you also design business cards? No package has them.' },
  });
  if (asked.status !== 201) fail('createInquiry', asked);
  const conversationId = asked.body.conversation.conversation_id;
  const sent = await seller.offers.createOffer({
    params: { conversation_id: conversationId },
    body: { title: 'Business cards', description: 'Front and back, print-ready PDF.', currency: 'USDC', price: 15, revisions: 1, delivery_days: 3 },
  });
  if (sent.status !== 201) fail('createOffer', sent);
  const thread = await buyer.chat.listConversationMessages({ params: { conversation_id: conversationId }, query: { limit: 10 } });
  if (thread.status !== 200) fail('listConversationMessages', thread);
  const offerMsg = thread.body.data.find((m) => m.kind === 'offer');
  expectThat(offerMsg?.offer?.offer_id === sent.body.offer_id, 'the offer is a message of kind offer in the conversation');
  const taken = await buyer.offers.acceptOffer({
    params: { offer_id: sent.body.offer_id },
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: {},
  });
  if (taken.status !== 201) fail('acceptOffer', taken);
  const offerOrder = taken.body.order;
  expectThat(taken.body.offer.status === 'accepted' && offerOrder.offer_id === sent.body.offer_id, 'the offer is accepted into an order');
  expectThat(BigInt(offerOrder.amount_base_units) === 15_000_000n && offerOrder.revisions_included === 1, "the order carries the offer's terms");
  const beforeO = await balances();
  const fundedO = await signAndSubmit(offerOrder.order_id, (offerOrder.payment ?? fail('no payment for the offer order')).transaction);
  expectThat(fundedO.status === 'in_progress', `the offer's order is funded (${fundedO.status})`);
  const afterO = await balances();
  expectThat(beforeO.buyer - afterO.buyer === 15_000_000n, 'the buyer paid 15 USDC into escrow');
  const ev8 = `${await hookedEvents(hooked, sent.body.offer_id, ['offer.accepted'])}, ${await hookedEvents(hooked, offerOrder.order_id, ['order.funded'])}`;
  done(`offer ${sent.body.offer_id} ("${offerMsg!.body}") -> order ${offerOrder.order_id}, funded: tx ${lastSignature(fundedO, 'fund')}; webhook: ${ev8}`);
}

run().catch((err) => {
  console.error(`\ndemo FAILED: ${err instanceof BazaarApiError ? `${err.message} ${JSON.stringify(err.problem)}` : err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
