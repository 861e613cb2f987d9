/**
 * Seed a running service (`npm start` with CUSTODY_ENABLED) for the property-based run of .ci/schemathesis,
 * through the SDK, so that the tester holds real ids and the credentials of each party: without them every
 * order action, message and withdrawal answers only 404 and the money paths are never fuzzed.
 *
 * Creates a seller and a buyer (fresh wallets with SOL and test USDC, logged in with SIWS), and with them:
 *  - listings still available (for POST /orders) and one per order below;
 *  - wallet-paid orders in each state a party acts on: awaiting payment (pay, payment, Solana Pay), funded
 *    (seller: deliver, refund; buyer: dispute, messages), delivered (buyer: confirm, dispute), disputed
 *    (arbiter: resolve), completed (buyer: review);
 *  - a custodial balance for the buyer (a real deposit to its deposit address, credited by the custody
 *    worker), so custodial orders and withdrawals can succeed, and one withdrawal;
 *  - an inquiry conversation, order messages, a webhook endpoint (with its deliveries) and a personal access
 *    token of the buyer.
 * The arbiter is an admin API key created before the service started (read from <arbiter-key-file>; PGlite has one
 * process).
 *
 * Output: shell assignments on stdout (`BAZAAR_BUYER_TOKEN`, `BAZAAR_SELLER_TOKEN`, ...), and the TOML
 * that binds the seeded ids to the operations that take them (schemathesis dictionaries: a seeded id in
 * about half of the generated requests, generated ones in the others) written to the file named by the first
 * argument, to be appended to .ci/schemathesis.toml.
 *
 *   BAZAAR_URL=http://127.0.0.1:3310 DATA_DIR=/tmp/x/data \
 *     npx tsx server/scripts/schemathesis-seed.ts /tmp/x/seed.toml /tmp/x/arbiter.key > /tmp/x/seed.env
 *
 * Errors: any refused step exits 1 with the step and the answer.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import {
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { createBazaarClient, newIdempotencyKey, type BazaarClient } from '@bazaar/client-sdk';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';
import { loadToolConfig } from '../src/config.js';
import { TEST_USDC_DECIMALS, ensureSol, mintTestUsdc, readChainFile } from './bootstrap-localnet.js';

const [tomlOut, arbiterKeyFile] = process.argv.slice(2);
if (!tomlOut || !arbiterKeyFile) {
  console.error('usage: schemathesis-seed.ts <toml-out> <arbiter-key-file>  (env: BAZAAR_URL, DATA_DIR)');
  process.exit(2);
}
const tool = loadToolConfig(process.env);
const { baseUrl, dataDir } = tool;
// a file, not the environment: configuration is read only through config.ts (ENV_VARS), and this is a CI fixture
const arbiterKey = readFileSync(arbiterKeyFile, 'utf8').trim();
if (!arbiterKey) throw new Error(`${arbiterKeyFile} holds no API key (an admin API key: npm run api-key -- create --admin)`);
const t0 = Date.now();

type Answer = { status: number; body: unknown };
/** The answer's body when its status is `want`, else exit with the step and the answer. */
function ok<T extends Answer>(what: string, res: T, want: number): T['body'] & Record<string, any> {
  if (res.status !== want) {
    console.error(`schemathesis seed: ${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    process.exit(1);
  }
  return res.body as T['body'] & Record<string, any>;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) {
      console.error(`schemathesis seed: ${what} did not happen within ${ms} ms`);
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

const chainFile = readChainFile(dataDir);
if (!chainFile) throw new Error(`${dataDir}/chain.json is missing: start the service first`);
const rpcUrl = tool.solanaRpcUrl ?? chainFile.rpcUrl;
const connection = new Connection(rpcUrl, 'confirmed');
const usdcMint = new PublicKey(chainFile.usdcMint);

const sellerKp = Keypair.generate();
const buyerKp = Keypair.generate();
await Promise.all([
  ensureSol(connection, sellerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 5 * LAMPORTS_PER_SOL),
  ensureSol(connection, buyerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 5 * LAMPORTS_PER_SOL),
]);
await mintTestUsdc(dataDir, rpcUrl, buyerKp.publicKey.toBase58(), 10_000n * 10n ** BigInt(TEST_USDC_DECIMALS));

const seller: BazaarClient = createBazaarClient({ baseUrl });
const buyer: BazaarClient = createBazaarClient({ baseUrl });
const arbiter: BazaarClient = createBazaarClient({ baseUrl, apiKey: arbiterKey });
const [sellerLogin, buyerLogin] = await Promise.all([
  loginWithWallet(seller, keypairSigner(sellerKp.secretKey)),
  loginWithWallet(buyer, keypairSigner(buyerKp.secretKey)),
]);
// a second session of the buyer's, for POST /auth/logout alone: logging out the session every other operation
// uses would leave the rest of the run at 401
const logoutLogin = await loginWithWallet(createBazaarClient({ baseUrl }), keypairSigner(buyerKp.secretKey));

const newListing = async (n: number) =>
  ok(
    'createListing',
    await seller.listings.createListing({
      body: { title: `Seeded service ${n}`, description: 'A service listed for the property-based run.', price: 1 + n, currency: 'USDC', category: 'design', duration: 7 },
    }),
    201,
  ).listing_id as string;

/** A wallet-paid order of the buyer on a new listing; paid unless `pay` is false. */
async function order(n: number, pay = true): Promise<string> {
  const listingId = await newListing(n);
  const created = ok(
    'createOrder',
    await buyer.orders.createOrder({ headers: { 'idempotency-key': newIdempotencyKey() }, body: { listing_id: listingId } }),
    201,
  );
  if (!pay) return created.order_id;
  const tx = Transaction.from(Buffer.from(created.payment.transaction, 'base64'));
  tx.partialSign(buyerKp);
  ok(
    'submitOrderTransaction',
    await buyer.orders.submitOrderTransaction({ params: { order_id: created.order_id }, body: { signed_transaction: tx.serialize().toString('base64') } }),
    200,
  );
  return created.order_id;
}

// listings and orders (each order holds its listing), several at once
const [available, awaiting, funded, delivered, disputed, completed] = await Promise.all([
  Promise.all([1, 2, 3].map((n) => newListing(n))),
  Promise.all([4, 5].map((n) => order(n, false))),
  Promise.all([6, 7].map((n) => order(n))),
  order(8),
  order(9),
  order(10),
]);
ok('deliverOrder', await seller.orders.deliverOrder({ params: { order_id: delivered } }), 200);
ok('disputeOrder', await buyer.orders.disputeOrder({ params: { order_id: disputed }, body: { reason: 'Nothing was delivered so far.' } }), 200);
ok('deliverOrder', await seller.orders.deliverOrder({ params: { order_id: completed } }), 200);
ok('confirmOrder', await buyer.orders.confirmOrder({ params: { order_id: completed } }), 200);

// messages: on a funded order, and an inquiry on an available listing
const orderMessage = ok('sendOrderMessage', await buyer.chat.sendOrderMessage({ params: { order_id: funded[0]! }, body: { body: 'When can I expect a first draft?' } }), 201);
// the seller's webhook for redeliverWebhook (run with the seller's credential): the buyer's endpoints are listed to
// the buyer's fuzzed requests, whose stateful links (listWebhooks -> deleteWebhook) may delete them mid-run
const sellerHook = ok('createWebhook', await seller.webhooks.createWebhook({ body: { url: 'http://127.0.0.1:9/bazaar-seed-3', description: 'schemathesis seed (redeliver)' } }), 201);
const inquiry = ok('createInquiry', await buyer.chat.createInquiry({ params: { listing_id: available[0]! }, body: { body: 'Do you also do icons?' } }), 201);
// custom offers (issue 24) in that conversation: one for the buyer to read, accept or decline, one for the seller to withdraw
const offerBody = { title: 'Icon set', description: 'Ten icons in the style of the logo', currency: 'USDC', price: 20, revisions: 1, delivery_days: 5 };
const offerToDecide = ok('createOffer', await seller.offers.createOffer({ params: { conversation_id: inquiry.conversation.conversation_id }, body: offerBody }), 201);
const offerToWithdraw = ok('createOffer', await seller.offers.createOffer({ params: { conversation_id: inquiry.conversation.conversation_id }, body: offerBody }), 201);

// moderation (issue 25): a listing taken down (restore, appeal by its seller), one to take down (reported by the buyer:
// the queue has a target to dismiss), and an account for suspend / ban / reinstate that no other operation uses
const [toRestore, toTakeDown] = await Promise.all([newListing(11), newListing(12)]);
ok('takeDownListing', await arbiter.moderation.takeDownListing({ params: { listing_id: toRestore }, body: { reason: 'Seeded takedown' } }), 200);
ok('createReport', await buyer.moderation.createReport({ body: { target_type: 'listing', listing_id: toTakeDown, reason: 'spam', text: 'Seeded report' } }), 201);
// three more reported listings only dismissReports uses (each can be dismissed once; then it answers 404)
const toDismiss = await Promise.all([newListing(13), newListing(14), newListing(15)]);
for (const id of toDismiss) ok('createReport', await buyer.moderation.createReport({ body: { target_type: 'listing', listing_id: id, reason: 'other', text: 'Seeded report to dismiss' } }), 201);
const moderatedKp = Keypair.generate();
await loginWithWallet(createBazaarClient({ baseUrl }), keypairSigner(moderatedKp.secretKey));

// a webhook endpoint of the buyer (nothing listens there: its deliveries fail and are retried) and a token
const hook = ok('createWebhook', await buyer.webhooks.createWebhook({ body: { url: 'http://127.0.0.1:9/bazaar-seed', description: 'schemathesis seed' } }), 201);
// DELETE gets an endpoint of its own: once it is gone every other webhook operation on it answers 404
const doomedHook = ok('createWebhook', await buyer.webhooks.createWebhook({ body: { url: 'http://127.0.0.1:9/bazaar-seed-2', description: 'schemathesis seed (deleted)' } }), 201);
const token = ok('createToken', await buyer.tokens.createToken({ body: { name: 'schemathesis seed', scopes: ['orders:read'] } }), 201);

// custody: a real deposit to the buyer's deposit address, credited by the custody worker
const deposit = ok('createDeposit', await buyer.wallet.createDeposit({ body: { currency: 'USDC' } }), 200);
const depositAta = getAssociatedTokenAddressSync(usdcMint, new PublicKey(deposit.address), true, TOKEN_PROGRAM_ID);
const buyerAta = getAssociatedTokenAddressSync(usdcMint, buyerKp.publicKey, false, TOKEN_PROGRAM_ID);
const send = new Transaction().add(
  createAssociatedTokenAccountIdempotentInstruction(buyerKp.publicKey, depositAta, new PublicKey(deposit.address), usdcMint, TOKEN_PROGRAM_ID),
  createTransferCheckedInstruction(buyerAta, usdcMint, depositAta, buyerKp.publicKey, 1_000n * 10n ** BigInt(TEST_USDC_DECIMALS), TEST_USDC_DECIMALS, [], TOKEN_PROGRAM_ID),
);
await connection.sendTransaction(send, [buyerKp]).then((sig) => connection.confirmTransaction(sig, 'confirmed'));
await until('the deposit credit', async () => {
  const res = await buyer.wallet.getBalances();
  const line = res.status === 200 ? res.body.balances.find((b) => b.source === 'custodial' && b.currency === 'USDC') : undefined;
  return line && BigInt(line.amount_base_units) > 0n ? line : null;
});
const withdrawal = ok(
  'createWithdrawal',
  await buyer.wallet.createWithdrawal({
    headers: { 'idempotency-key': newIdempotencyKey() },
    body: { currency: 'USDC', amount: 1, destination: buyerKp.publicKey.toBase58() },
  }),
  202,
);
const deliveries = await until('a webhook delivery', async () => {
  const res = await buyer.webhooks.listWebhookDeliveries({ params: { webhook_id: hook.webhook_id }, query: {} });
  return res.status === 200 && res.body.data.length ? res.body.data : null;
}, 30_000);
const sellerDeliveries = await until('a delivery of the seller\'s webhook', async () => {
  const res = await seller.webhooks.listWebhookDeliveries({ params: { webhook_id: sellerHook.webhook_id }, query: {} });
  return res.status === 200 && res.body.data.length ? res.body.data : null;
}, 30_000);
// the arbiter's credential works
ok('getOrder (arbiter)', await arbiter.orders.getOrder({ params: { order_id: disputed } }), 200);

const env: Record<string, string> = {
  BAZAAR_BUYER_TOKEN: buyerLogin.token,
  BAZAAR_LOGOUT_TOKEN: logoutLogin.token,
  BAZAAR_SELLER_TOKEN: sellerLogin.token,
  BAZAAR_ARBITER_KEY: arbiterKey,
  BAZAAR_BUYER_WALLET: buyerKp.publicKey.toBase58(),
  BAZAAR_SELLER_WALLET: sellerKp.publicKey.toBase58(),
};
for (const [k, v] of Object.entries(env)) process.stdout.write(`export ${k}='${v}'\n`);

/** Seeded values per dictionary, and which operation parameters draw from which dictionary. */
const dictionaries: Record<string, string[]> = {
  orders_all: [...awaiting, ...funded, delivered, disputed, completed],
  orders_awaiting: awaiting,
  orders_funded: funded,
  orders_open: [...funded, delivered],
  orders_delivered: [delivered],
  orders_disputed: [disputed],
  orders_completed: [completed],
  listings_available: available,
  listings_all: [...available],
  wallets: [sellerKp.publicKey.toBase58(), buyerKp.publicKey.toBase58()],
  buyer_wallet: [buyerKp.publicKey.toBase58()],
  custody_currencies: ['USDC'],
  withdrawals: [withdrawal.withdrawal_id],
  webhooks: [hook.webhook_id],
  webhooks_deleted: [doomedHook.webhook_id],
  deliveries: deliveries.map((d: { delivery_id: string }) => d.delivery_id),
  conversations: [inquiry.conversation.conversation_id, orderMessage.conversation_id],
  // the 201 body's message (`message` is also a member of the Solana Pay routes' problem bodies in the answer's union)
  messages: [(inquiry.message as { message_id: string }).message_id, orderMessage.message_id],
  tokens: [token.token_id],
  offers: [offerToDecide.offer_id, offerToWithdraw.offer_id],
  seller_webhooks: [sellerHook.webhook_id],
  seller_deliveries: sellerDeliveries.map((d: { delivery_id: string }) => d.delivery_id),
  offers_withdrawable: [offerToWithdraw.offer_id],
  conversations_inquiry: [inquiry.conversation.conversation_id],
  listings_moderated: [toRestore, toTakeDown],
  listings_taken_down: [toRestore],
  listings_reported: [toTakeDown, ...toDismiss],
  report_target_types: ['listing'],
  wallets_moderated: [moderatedKp.publicKey.toBase58()],
};
const bindings: Array<[string[], Record<string, string>]> = [
  [['getOrder', 'listOrderMessages', 'sendOrderMessage'], { 'path.order_id': 'orders_all' }],
  [['submitOrderTransaction', 'createOrderPayment', 'getSolanaPayLabel'], { 'path.order_id': 'orders_awaiting' }],
  // the wallet that may pay: its buyer's (any other is 403)
  [['createSolanaPayTransaction'], { 'path.order_id': 'orders_awaiting', 'body.account': 'buyer_wallet' }],
  [['deliverOrder', 'refundOrder'], { 'path.order_id': 'orders_funded' }],
  [['disputeOrder'], { 'path.order_id': 'orders_open' }],
  [['confirmOrder'], { 'path.order_id': 'orders_delivered' }],
  [['resolveDispute'], { 'path.order_id': 'orders_disputed' }],
  // the dispute desk (issue 25): a dispute's id is its milestone's id, the order id of a one-milestone order
  [['getDispute', 'submitDisputeEvidence', 'ruleDispute'], { 'path.dispute_id': 'orders_disputed' }],
  [['createReview'], { 'path.order_id': 'orders_completed' }],
  [['createOrder'], { 'body.listing_id': 'listings_available' }],
  [['getListing', 'updateListing', 'getListingTokenMetadata', 'createInquiry'], { 'path.listing_id': 'listings_all' }],
  [['getUser'], { 'path.wallet': 'wallets' }],
  // operator roles (issue 25): the arbiter's admin key grants and revokes them on the seeded users
  [['grantRole', 'revokeRole'], { 'path.wallet': 'wallets' }],
  [['listSellerReviews'], { 'path.seller_wallet': 'wallets' }],
  [['getWithdrawal'], { 'path.withdrawal_id': 'withdrawals' }],
  // a destination the schema cannot tell from random base58 (a 32-byte key) and a custody currency
  [['createWithdrawal'], { 'body.destination': 'buyer_wallet', 'body.currency': 'custody_currencies' }],
  [['getWebhook', 'updateWebhook', 'rotateWebhookSecret', 'listWebhookDeliveries'], { 'path.webhook_id': 'webhooks' }],
  [['deleteWebhook'], { 'path.webhook_id': 'webhooks_deleted' }],
  [['redeliverWebhook'], { 'path.webhook_id': 'seller_webhooks', 'path.delivery_id': 'seller_deliveries' }],
  [['listConversationMessages', 'sendConversationMessage', 'markConversationRead'], { 'path.conversation_id': 'conversations' }],
  [['reportMessage'], { 'path.message_id': 'messages' }],
  [['revokeToken'], { 'path.token_id': 'tokens' }],
  [['getOffer', 'acceptOffer', 'declineOffer'], { 'path.offer_id': 'offers' }],
  [['withdrawOffer'], { 'path.offer_id': 'offers_withdrawable' }],
  [['createOffer'], { 'path.conversation_id': 'conversations_inquiry' }],
  [['takeDownListing', 'restoreListing'], { 'path.listing_id': 'listings_moderated' }],
  [['appealTakedown'], { 'path.listing_id': 'listings_taken_down' }],
  [['dismissReports'], { 'path.target_type': 'report_target_types', 'path.target_id': 'listings_reported' }],
  [['suspendUser', 'banUser', 'reinstateUser'], { 'path.wallet': 'wallets_moderated' }],
];
const q = (s: string) => JSON.stringify(s);
const toml = [
  '',
  `# seeded by server/scripts/schemathesis-seed.ts at ${new Date().toISOString()} (${Date.now() - t0} ms)`,
  ...Object.entries(dictionaries).flatMap(([name, values]) => [`[dictionaries.${name}]`, `values = [${values.map(q).join(', ')}]`, '']),
  ...bindings.flatMap(([ops, params]) => [
    '[[operations]]',
    `include-operation-id = [${ops.map(q).join(', ')}]`,
    // two seeded parameters are drawn independently: 0.75 each gives a seeded pair in about half the requests
    `parameters = { ${Object.entries(params).map(([k, d]) => `${q(k)} = { dictionary = ${q(d)}, probability = ${Object.keys(params).length > 1 ? 0.75 : 0.5} }`).join(', ')} }`,
    '',
  ]),
].join('\n');
writeFileSync(tomlOut, toml);
console.error(
  `schemathesis seed: seller ${env.BAZAAR_SELLER_WALLET}, buyer ${env.BAZAAR_BUYER_WALLET}; ` +
    `${dictionaries.orders_all.length} orders, ${available.length} available listings, deposit credited, withdrawal ${withdrawal.withdrawal_id} (${Date.now() - t0} ms)`,
);
// web3.js and the SDK keep sockets alive: the seed is done
process.exit(0);
