/**
 * `npm run demo:operator`: the operators' side of the marketplace (issue 25) through the typed SDK
 * (@bazaar/client-sdk) against a running service (`npm start` on its embedded defaults), with the money of the
 * ruling checked on chain. Beside `npm run demo` (server/scripts/demo.ts), same environment, same conventions.
 *
 *  1. five wallets: the admin (the dev admin key DATA_DIR/keys/admin.json, which `npm start` on the embedded
 *     localnet makes the first admin through the `npm run admin:grant` path), and fresh ones for a moderator,
 *     an arbiter, a seller and a buyer (SOL for the seller and the buyer, 50 test USDC for the buyer);
 *  2. all five log in with Sign In With Solana; the admin's user holds the admin role;
 *  3. the admin grants the moderator and the arbiter roles (PUT /admin/users/{wallet}/roles/{role}); before the
 *     grant the moderator's queue answers 403 forbidden naming the role;
 *  4. the seller lists two services; 5. the buyer reports the first (scam); the moderator finds it in the
 *     queue and takes it down with a reason: it leaves search, ordering it is 409 listing-taken-down; the
 *     seller is told why (listing.taken_down) and appeals (once: a second appeal is 409 already-appealed);
 *  6. the buyer orders the second and funds its escrow; the buyer opens a dispute (reason_code not_delivered);
 *  7. both parties submit evidence: a statement and a file given as an https link with its SHA-256;
 *  8. the arbiter reads the desk (both sides' evidence) and rules 50/50 with a rationale: the program splits
 *     the escrow (balances checked on chain); the buyer receives dispute.resolved with the rationale;
 *  9. the admin reads today's revenue report, JSON and CSV, marketplace-wide and for the seller (the seller's
 *     figures equal the split exactly);
 * 10. the admin reads the audit log with filters (the takedown, the ruling and its split, the role grants)
 *     and verifies its hash chain.
 * Each step prints what it checked and its time; any refusal or mismatch exits non-zero. A few seconds.
 *
 * Env (server/src/config.ts loadToolConfig): BAZAAR_URL (default http://127.0.0.1:3000), DATA_DIR (default
 * ./data: chain.json, the dev faucet and the dev admin key written by `npm start`), SOLANA_RPC_URL (default: the
 * rpcUrl in chain.json). Against a service whose first admin is another wallet (not the embedded defaults),
 * make the dev admin key's wallet an admin first: `npm run admin:grant -- <wallet> admin`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { BazaarApiError, createBazaarClient, newIdempotencyKey, type BazaarClient } from '@bazaar/client-sdk';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';
import { CSV_COLUMNS, type AuditEntry } from '@bazaar/contract';
import { loadToolConfig } from '../src/config.js';
import { readKeypairFile } from '../src/chain/keys.js';
import { ensureSol, mintTestUsdc, readChainFile } from './bootstrap-localnet.js';
import { demoSteps } from './demo-steps.js';

const tool = loadToolConfig(process.env);
const { baseUrl, dataDir } = tool;
const PRICE_USDC = 30;

const { t0, step, done, summary } = demoSteps();

/** Fail the demo with a message (and the problem document when the API refused). */
function fail(what: string, res?: { status: number; body: unknown }): never {
  throw new Error(res ? `${what}: HTTP ${res.status} ${JSON.stringify(res.body)}` : what);
}
function expectThat(cond: unknown, what: string): asserts cond {
  if (!cond) fail(`check failed: ${what}`);
}
/** The body of an answer with status `want`, else fail naming the call and the answer. */
function ok<R extends { status: number; body: unknown }, S extends R['status']>(what: string, res: R, want: S): Extract<R, { status: S }>['body'] {
  if (res.status !== want) fail(what, res);
  return res.body as Extract<R, { status: S }>['body'];
}
/** The problem `type` slug of a refusal (`https://bazaar.dev/problems/<slug>`). */
const slugOf = (res: { body: unknown }) => String((res.body as { type?: string }).type ?? '').split('/').pop();

/** Poll `get` until it yields a value (a condition awaited, not a fixed sleep), or fail after `ms`. */
async function eventually<T>(get: () => Promise<T | undefined>, what: string, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > until) fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function usdcBalance(connection: Connection, mint: PublicKey, owner: PublicKey): Promise<bigint> {
  const ata = getAssociatedTokenAddressSync(mint, owner, true, TOKEN_PROGRAM_ID);
  return getAccount(connection, ata, 'confirmed', TOKEN_PROGRAM_ID).then(
    (a) => a.amount,
    () => 0n,
  );
}

/** Base units -> a UI string of 6 decimals (USDC). */
const usdc = (units: bigint) => `${(Number(units) / 1e6).toFixed(6).replace(/\.?0+$/, '')} USDC`;

/** The program's split (programs/escrow payout.rs): buyer floor(amount*bps/1e4), fee floor(rest*fee_bps/1e4) on the seller's share. */
function split(amount: bigint, feeBps: number, buyerBps: number) {
  const buyer = (amount * BigInt(buyerBps)) / 10_000n;
  const fee = ((amount - buyer) * BigInt(feeBps)) / 10_000n;
  return { buyer, fee, seller: amount - buyer - fee };
}

/** A file given as evidence: its bytes stay with the party; the service gets the link and the SHA-256. */
function evidenceFile(name: string, content: string) {
  const sha256 = createHash('sha256').update(content).digest('hex');
  return { url: `https://files.example.com/evidence/${sha256.slice(0, 16)}/${name}`, name, sha256, size_bytes: Buffer.byteLength(content), content_type: 'text/plain' };
}

async function run() {
  const chainFile = readChainFile(dataDir) ?? fail(`${dataDir}/chain.json is missing: start the service first (npm start)`);
  const adminKeyFile = join(dataDir, 'keys', 'admin.json');
  if (!existsSync(adminKeyFile)) fail(`${adminKeyFile} is missing: start the service first (npm start)`);
  const rpcUrl = tool.solanaRpcUrl ?? chainFile.rpcUrl;
  const connection = new Connection(rpcUrl, 'confirmed');
  const usdcMint = new PublicKey(chainFile.usdcMint);
  console.log(`Bazaar operator demo against ${baseUrl} (RPC ${rpcUrl})`);

  step('five wallets: the dev admin key, and fresh ones for a moderator, an arbiter, a seller and a buyer');
  const adminKp = readKeypairFile(adminKeyFile);
  const [moderatorKp, arbiterKp, sellerKp, buyerKp] = [Keypair.generate(), Keypair.generate(), Keypair.generate(), Keypair.generate()];
  await Promise.all([sellerKp, buyerKp].map((kp) => ensureSol(connection, kp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL)));
  const faucet = await mintTestUsdc(dataDir, rpcUrl, buyerKp.publicKey.toBase58(), 50_000_000n);
  done(`admin ${adminKp.publicKey.toBase58()} (${adminKeyFile}); buyer got 50 USDC, tx ${faucet.signature}`);

  step('all five log in with Sign In With Solana');
  const clients = [adminKp, moderatorKp, arbiterKp, sellerKp, buyerKp].map(() => createBazaarClient({ baseUrl }));
  const [admin, moderator, arbiter, seller, buyer] = clients as [BazaarClient, BazaarClient, BazaarClient, BazaarClient, BazaarClient];
  const logins = await Promise.all([adminKp, moderatorKp, arbiterKp, sellerKp, buyerKp].map((kp, i) => loginWithWallet(clients[i]!, keypairSigner(kp.secretKey))));
  const [adminUser, moderatorUser, arbiterUser] = logins.map((l) => l.user);
  if (!adminUser!.roles.includes('admin')) {
    fail(
      `${adminUser!.wallet} (the dev admin key) does not hold the admin role: \`npm start\` grants it on the embedded localnet; ` +
        `elsewhere run \`npm run admin:grant -- ${adminUser!.wallet} admin\` (with PGlite, stop the server first)`,
    );
  }
  done(`admin user ${adminUser!.user_id} (roles ${adminUser!.roles.join(', ')}); moderator, arbiter, seller, buyer hold no role yet`);

  step('the admin grants the moderator and the arbiter roles');
  const early = await moderator.moderation.listReportQueue({ query: { target_type: 'listing', limit: 1 } });
  expectThat(early.status === 403 && slugOf(early) === 'forbidden', `before the grant the queue is 403 forbidden (got ${early.status})`);
  const gotMod = ok('grantRole moderator', await admin.users.grantRole({ params: { wallet: moderatorUser!.wallet, role: 'moderator' } }), 200);
  const gotArb = ok('grantRole arbiter', await admin.users.grantRole({ params: { wallet: arbiterUser!.wallet, role: 'arbiter' } }), 200);
  expectThat(gotMod.changed && gotMod.roles.includes('moderator') && gotArb.changed && gotArb.roles.includes('arbiter'), 'both grants changed the roles');
  const modMe = ok('getMe (moderator)', await moderator.users.getMe(), 200);
  expectThat(modMe.roles.join() === 'moderator', `the moderator's next request sees the role (${modMe.roles.join()})`);
  done(`moderator ${moderatorUser!.wallet}: [${gotMod.roles.join(', ')}]; arbiter ${arbiterUser!.wallet}: [${gotArb.roles.join(', ')}]; the refusal before: "${(early.body as { detail?: string }).detail}"`);

  step('the seller lists two services');
  const word = `ops${randomBytes(4).toString('hex')}`;
  const [flagged, honest] = await Promise.all(
    [
      { title: `Guaranteed 10k followers ${word}`, description: `Pay me directly outside the escrow and get followers overnight (${word}).` },
      { title: `Landing page copy ${word}`, description: `A landing page written for your product, two drafts (${word}).` },
    ].map(async (l) => ok('createListing', await seller.listings.createListing({ body: { ...l, price: PRICE_USDC, currency: 'USDC', category: 'writing', duration: 3 } }), 201)),
  );
  done(`"${flagged!.title}" ${flagged!.listing_id}, "${honest!.title}" ${honest!.listing_id}; mint txs ${flagged!.mint_transaction.signature}, ${honest!.mint_transaction.signature}`);

  step('the buyer reports the first listing; the moderator finds it in the queue and takes it down; the seller appeals');
  const report = ok(
    'createReport',
    await buyer.moderation.createReport({ body: { target_type: 'listing', listing_id: flagged!.listing_id, reason: 'scam', text: 'Asks to be paid outside the escrow.' } }),
    201,
  );
  // the queue is oldest first and may hold other targets: page until this listing's group
  let group: Awaited<ReturnType<typeof queueGroup>> = undefined;
  async function queueGroup() {
    let cursor: string | undefined;
    for (;;) {
      const page = ok('listReportQueue', await moderator.moderation.listReportQueue({ query: { target_type: 'listing', limit: 100, ...(cursor ? { cursor } : {}) } }), 200);
      const hit = page.data.find((g) => g.target_id === flagged!.listing_id);
      if (hit || !page.next_cursor) return hit;
      cursor = page.next_cursor;
    }
  }
  group = (await queueGroup()) ?? fail('the reported listing is not in the moderator queue');
  expectThat(group.report_count === 1 && group.reasons.scam === 1 && group.reports[0]!.report_id === report.report_id, 'the queue shows the report with its count per reason');
  const reason = 'Asks buyers to pay outside the escrow (scam reports); services paid outside Bazaar are not allowed.';
  const down = ok('takeDownListing', await moderator.moderation.takeDownListing({ params: { listing_id: flagged!.listing_id }, body: { reason } }), 200);
  expectThat(down.taken_down?.reason === reason, 'the listing carries the takedown and its reason');
  const search = ok('searchListings', await buyer.marketplace.searchListings({ query: { query: word, sort: 'relevance', limit: 10 } }), 200);
  expectThat(search.data.length === 1 && search.data[0]!.listing_id === honest!.listing_id, 'search finds only the listing still up');
  const refused = await buyer.orders.createOrder({ headers: { 'idempotency-key': newIdempotencyKey() }, body: { listing_id: flagged!.listing_id } });
  expectThat(refused.status === 409 && slugOf(refused) === 'listing-taken-down', `ordering it: 409 listing-taken-down (got ${refused.status})`);
  const told = ok('listEvents (seller)', await seller.events.listEvents({ query: { type: 'listing.taken_down', resource_id: flagged!.listing_id, limit: 5 } }), 200);
  const toldData = told.data[0]?.data as { taken_down?: { reason?: string } } | undefined;
  expectThat(toldData?.taken_down?.reason === reason, 'the seller received listing.taken_down with the reason');
  ok('appealTakedown', await seller.moderation.appealTakedown({ params: { listing_id: flagged!.listing_id }, body: { text: 'The description was unclear: payment goes through the escrow. Fixed.' } }), 200);
  const again = await seller.moderation.appealTakedown({ params: { listing_id: flagged!.listing_id }, body: { text: 'Please?' } });
  expectThat(again.status === 409 && slugOf(again) === 'already-appealed', `a second appeal: 409 already-appealed (got ${again.status})`);
  done(`report ${report.report_id} (queue: ${group.report_count} report, reasons ${JSON.stringify(group.reasons)}); taken down: "${reason}"; search "${word}": ${search.data.length} result; order: 409 listing-taken-down; event ${told.data[0]!.event_id}; appealed once`);

  step('the buyer orders the second listing, funds the escrow, and opens a dispute');
  const ordered = ok('createOrder', await buyer.orders.createOrder({ headers: { 'idempotency-key': newIdempotencyKey() }, body: { listing_id: honest!.listing_id } }), 201);
  const orderId = ordered.order_id;
  const tx = Transaction.from(Buffer.from((ordered.payment ?? fail('createOrder returned no payment transaction')).transaction, 'base64'));
  tx.partialSign(buyerKp);
  const funded = ok('submitOrderTransaction', await buyer.orders.submitOrderTransaction({ params: { order_id: orderId }, body: { signed_transaction: tx.serialize().toString('base64') } }), 200);
  expectThat(funded.status === 'in_progress', `order funded (${funded.status})`);
  ok('sendOrderMessage (seller)', await seller.chat.sendOrderMessage({ params: { order_id: orderId }, body: { body: 'Thanks! First draft in two days.' } }), 201);
  const disputed = ok(
    'disputeOrder',
    await buyer.orders.disputeOrder({ params: { order_id: orderId }, body: { reason: 'No draft after the agreed two days, and no answer since.', reason_code: 'not_delivered' } }),
    200,
  );
  expectThat(disputed.status === 'disputed', `order disputed (${disputed.status})`);
  done(`order ${orderId}: escrow ${funded.escrow_account_address} holds ${usdc(BigInt(funded.amount_base_units))}; dispute opened (not_delivered)`);

  step('both parties submit evidence: a statement and a file link with its SHA-256');
  const disputeId = orderId; // a one-milestone order's dispute id is its order id
  const buyerFile = evidenceFile('chat-export.txt', `order ${orderId}: no draft received by the deadline`);
  const sellerFile = evidenceFile('draft-v1.txt', `Landing page copy, draft 1, for order ${orderId}`);
  const fromBuyer = ok(
    'submitDisputeEvidence (buyer)',
    await buyer.disputes.submitDisputeEvidence({ params: { dispute_id: disputeId }, body: { text: 'Nothing arrived by the deadline; the export of our chat is attached.', files: [buyerFile] } }),
    201,
  );
  const fromSeller = ok(
    'submitDisputeEvidence (seller)',
    await seller.disputes.submitDisputeEvidence({ params: { dispute_id: disputeId }, body: { text: 'The first draft was ready on time; I attach it. It was late by a few hours only.', files: [sellerFile] } }),
    201,
  );
  const seen = ok('getDispute (buyer)', await buyer.disputes.getDispute({ params: { dispute_id: disputeId } }), 200);
  expectThat(seen.evidence.length === 2 && seen.evidence_head === seen.evidence[1]!.content_hash && seen.evidence[1]!.prev_hash === seen.evidence[0]!.content_hash, 'the buyer sees both submissions, hash-chained');
  expectThat(seen.evidence[1]!.files[0]!.sha256 === sellerFile.sha256, "the seller's file keeps its SHA-256");
  done(`buyer ${fromBuyer.content_hash.slice(0, 12)}…, seller ${fromSeller.content_hash.slice(0, 12)}… (prev_hash = the buyer's); files ${buyerFile.sha256.slice(0, 12)}…, ${sellerFile.sha256.slice(0, 12)}…; evidence due ${seen.evidence_due_at}`);

  step('the arbiter reads the desk and rules 50/50 with a rationale; the program splits the escrow');
  async function deskCase() {
    let cursor: string | undefined;
    for (;;) {
      const page = ok('listDisputeQueue', await arbiter.disputes.listDisputeQueue({ query: { limit: 100, ...(cursor ? { cursor } : {}) } }), 200);
      const hit = page.data.find((c) => c.dispute.dispute_id === disputeId);
      if (hit || !page.next_cursor) return hit;
      cursor = page.next_cursor;
    }
  }
  const onDesk = (await deskCase()) ?? fail('the dispute is not on the arbiter desk');
  expectThat(onDesk.dispute.evidence.map((e) => e.party).join() === 'buyer,seller' && onDesk.messages.length >= 1, "the desk shows both sides' evidence and the order's messages");
  const ruledFrom = new Date(); // the report's range starts on this UTC day (a run across midnight still finds the ruling)
  const before = { buyer: await usdcBalance(connection, usdcMint, buyerKp.publicKey), seller: await usdcBalance(connection, usdcMint, sellerKp.publicKey) };
  const rationale = 'The draft exists but came after the deadline without notice; the buyer waited, the seller worked. Split evenly.';
  const ruled = ok('ruleDispute', await arbiter.disputes.ruleDispute({ params: { dispute_id: disputeId }, body: { buyer_bps: 5000, rationale } }), 200);
  const after = { buyer: await usdcBalance(connection, usdcMint, buyerKp.publicKey), seller: await usdcBalance(connection, usdcMint, sellerKp.publicKey) };
  const want = split(BigInt(funded.amount_base_units), funded.fee_bps, 5000);
  expectThat(after.buyer - before.buyer === want.buyer && after.seller - before.seller === want.seller, `on chain: buyer +${usdc(want.buyer)}, seller +${usdc(want.seller)}`);
  expectThat((await connection.getAccountInfo(new PublicKey(funded.escrow_account_address), 'confirmed')) === null, 'the escrow account is closed');
  expectThat(ruled.status === 'resolved' && ruled.resolution?.rationale === rationale, 'the ruling carries the rationale');
  const resolvedEvent = await eventually(async () => {
    const evs = ok('listEvents (buyer)', await buyer.events.listEvents({ query: { type: 'dispute.resolved', limit: 10 } }), 200);
    return evs.data.find((e) => (e.data as { dispute_id?: string }).dispute_id === disputeId);
  }, 'dispute.resolved for the buyer');
  const resolvedData = resolvedEvent.data as { resolution?: { rationale?: string | null; buyer_bps?: number | null } };
  expectThat(resolvedData.resolution?.rationale === rationale && resolvedData.resolution.buyer_bps === 5000, 'the buyer received dispute.resolved with the rationale');
  const order = ok('getOrder (buyer)', await buyer.orders.getOrder({ params: { order_id: orderId } }), 200);
  expectThat(order.status === 'resolved', `order resolved (${order.status})`);
  const resolveSig = [...order.transactions].reverse().find((t) => t.action === 'resolve_dispute')?.signature ?? fail('no resolve_dispute transaction on the order');
  done(`queue: ${onDesk.dispute.evidence.length} submissions, ${onDesk.messages.length} message(s), at stake ${onDesk.dispute.at_stake.amount} ${onDesk.dispute.at_stake.currency}; buyer +${usdc(want.buyer)}, seller +${usdc(want.seller)}, fee ${usdc(want.fee)}; resolve_dispute tx ${resolveSig}; buyer event ${resolvedEvent.event_id}`);

  step("the admin reads today's revenue report (JSON and CSV), marketplace-wide and for the seller");
  const dayStart = (d: Date) => new Date(d.toISOString().slice(0, 10) + 'T00:00:00.000Z');
  const from = dayStart(ruledFrom);
  const to = new Date(dayStart(new Date()).getTime() + 86_400_000);
  const range = { granularity: 'day' as const, from: from.toISOString(), to: to.toISOString() };
  const market = ok('getRevenueReport', await admin.reports.getRevenueReport({ query: range }), 200);
  const mine = ok('getRevenueReport (seller)', await admin.reports.getRevenueReport({ query: { ...range, seller: sellerKp.publicKey.toBase58() } }), 200);
  const row = mine.totals.find((r) => r.currency === 'USDC') ?? fail('no USDC total in the seller report');
  expectThat(
    BigInt(row.volume_base_units) === want.buyer + want.seller + want.fee &&
      BigInt(row.fee_revenue_base_units) === want.fee &&
      BigInt(row.seller_payouts_base_units) === want.seller &&
      BigInt(row.buyer_refunds_base_units) === want.buyer &&
      row.escrows_closed === 1,
    `the seller's figures are the split (${JSON.stringify(row)})`,
  );
  const mrow = market.rows.filter((r) => r.currency === 'USDC').pop() ?? fail('no USDC row in the marketplace report');
  const mtotal = market.totals.find((r) => r.currency === 'USDC') ?? fail('no USDC total in the marketplace report');
  expectThat(BigInt(mtotal.volume_base_units) >= BigInt(row.volume_base_units) && BigInt(mtotal.fee_revenue_base_units) >= want.fee, 'the marketplace figures include it');
  const csv = ok('getRevenueReportCsv', await admin.reports.getRevenueReportCsv({ query: range }), 200) as unknown as string;
  const lines = csv.trimEnd().split('\r\n');
  expectThat(lines[0] === CSV_COLUMNS.join(','), 'the CSV header');
  expectThat(lines.some((l) => l.startsWith(`${mrow.period_start},${mrow.period_end},USDC,6,${mrow.volume_base_units},${mrow.fee_revenue_base_units},`)), 'the CSV row equals the JSON row');
  console.log(`   marketplace ${mrow.period_start.slice(0, 10)} USDC: volume ${usdc(BigInt(mrow.volume_base_units))}, fee revenue ${usdc(BigInt(mrow.fee_revenue_base_units))}, seller payouts ${usdc(BigInt(mrow.seller_payouts_base_units))}, refunds ${usdc(BigInt(mrow.buyer_refunds_base_units))}, ${mrow.escrows_closed} escrow(s)`);
  done(`seller ${sellerKp.publicKey.toBase58()}: volume ${usdc(BigInt(row.volume_base_units))} = fee ${usdc(BigInt(row.fee_revenue_base_units))} + payout ${usdc(BigInt(row.seller_payouts_base_units))} + refund ${usdc(BigInt(row.buyer_refunds_base_units))}; CSV ${lines.length - 1} rows (per day and currency), the USDC row equal to the JSON`);

  step('the admin reads the audit log (the takedown, the ruling, the role grants) and verifies the chain');
  const audit = async (what: string, query: Record<string, string>) => ok(`listAuditLog ${what}`, await admin.audit.listAuditLog({ query: { limit: 20, ...query } }), 200).data;
  const [firstAdmin, takedown, ruling, splitEntries, grants] = await Promise.all([
    audit('first admin', { action: 'user.role_granted', resource_id: adminUser!.user_id }),
    audit('takedown', { action: 'listing.taken_down', resource_id: flagged!.listing_id }),
    audit('ruling', { action: 'dispute.resolved', actor_id: arbiterUser!.user_id }),
    audit('split', { action: 'order.resolved', resource_id: orderId }),
    audit('grants', { action: 'user.role_granted', actor_id: adminUser!.user_id, from: new Date(t0 - 1000).toISOString() }),
  ]);
  const show = (e: AuditEntry) => `#${e.seq} ${e.action} by ${e.actor_type}:${e.actor_type === 'system' ? e.actor_id : e.actor_id.slice(0, 8)} on ${e.resource_type}:${e.resource_id.slice(0, 8)}${e.signature ? ` tx ${e.signature.slice(0, 12)}…` : ''}`;
  expectThat(takedown.length === 1 && takedown[0]!.actor_id === moderatorUser!.user_id && takedown[0]!.request_id, 'one takedown entry, by the moderator, with its request id');
  expectThat(ruling.some((e) => e.resource_id === disputeId), "the ruling's entry, by the arbiter");
  expectThat(splitEntries.length === 1 && splitEntries[0]!.signature === resolveSig, "the split's entry names the resolve_dispute transaction");
  const granted = new Set(grants.map((e) => e.resource_id));
  expectThat(granted.has(moderatorUser!.user_id) && granted.has(arbiterUser!.user_id), 'both role grants, by the admin');
  // the first admin's grant (npm start's dev admin: actor system dev-admin), when it was granted through the log
  for (const e of [...firstAdmin.slice(-1), takedown[0]!, ruling.find((x) => x.resource_id === disputeId)!, splitEntries[0]!, ...grants]) console.log(`   ${show(e)}`);
  const verified = ok('verifyAuditLog', await admin.audit.verifyAuditLog(), 200);
  expectThat(verified.ok && verified.first_broken === null && verified.head, `the chain verifies (${JSON.stringify(verified.first_broken)})`);
  done(`chain ok: ${verified.checked} entries checked, head #${verified.head.seq} ${verified.head.hash}`);

  console.log(`\n${summary('operator demo')}`);
}

run().catch((err) => {
  console.error(`\noperator demo FAILED: ${err instanceof BazaarApiError ? `${err.message} ${JSON.stringify(err.problem)}` : err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
