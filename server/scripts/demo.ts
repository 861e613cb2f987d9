/**
 * `npm run demo`: a real client session through the typed SDK (@bazaar/client-sdk) against a
 * running service (`npm start`), with every money movement checked on the chain.
 *
 *  1. two fresh wallets (seller, buyer) get SOL (requestAirdrop) and the buyer 100 test USDC (the
 *     dev faucet: the bootstrap's test USDC mint authority from DATA_DIR/keys);
 *  2. both log in with Sign In With Solana (request_login -> signMessage -> verify_login);
 *  3. the seller creates a listing; its Token-2022 NFT is checked on chain (decimals 0, supply 1,
 *     metadata uri, held by the seller's associated token account, mint authority revoked);
 *  4. the buyer searches the marketplace and finds it;
 *  5. the buyer orders it (Idempotency-Key), signs the returned fund transaction and submits it;
 *  6. the seller delivers; 7. the buyer confirms: the seller's USDC balance rises by exactly
 *     price - fee on chain, the escrow account is closed;
 *  8. the buyer reviews; the seller's reputation shows it.
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

const tool = loadToolConfig(process.env);
const { baseUrl, dataDir } = tool;
const PRICE_USDC = 25;

const t0 = Date.now();
let stepStart = Date.now();
let stepNo = 0;
const timings: Array<[string, number]> = [];

function step(title: string) {
  stepNo += 1;
  stepStart = Date.now();
  console.log(`\n${stepNo}. ${title}`);
}
function done(detail: string) {
  const ms = Date.now() - stepStart;
  timings.push([`${stepNo}`, ms]);
  console.log(`   ${detail}  (${ms} ms)`);
}

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
  const faucet = await mintTestUsdc(dataDir, rpcUrl, buyerKp.publicKey.toBase58(), 100_000_000n);
  expectThat((await usdcBalance(connection, usdcMint, buyerKp.publicKey)) === 100_000_000n, 'buyer holds 100 USDC');
  done(`seller ${sellerKp.publicKey.toBase58()}, buyer ${buyerKp.publicKey.toBase58()} (2 SOL each); 100 USDC minted to the buyer, tx ${faucet.signature}`);

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
  const hook = await seller.webhooks.createWebhook({ body: { url: hookUrl, event_types: ['order.funded', 'order.completed'], description: 'demo' } });
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
  done(`webhook ${hook.body.webhook_id} -> ${hookUrl} (order.funded, order.completed); event stream open`);

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

  console.log(`\ndemo ok in ${((Date.now() - t0) / 1000).toFixed(1)} s (${timings.map(([s, ms]) => `step ${s}: ${ms} ms`).join(', ')})`);
}

run().catch((err) => {
  console.error(`\ndemo FAILED: ${err instanceof BazaarApiError ? `${err.message} ${JSON.stringify(err.problem)}` : err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
