// Buy a listing with @solana/kit only (no @solana/web3.js): Sign In With Solana, order, verify the fund
// transaction, sign, send, wait until the escrow is funded. For a localnet or devnet (it airdrops SOL):
//   BAZAAR_URL=http://127.0.0.1:3000 npm run example:kit-buy
// LISTING_ID=<uuid> buys that listing; without it a fresh seller lists one priced in SOL first.
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  lamports,
  partiallySignTransactionWithSigners,
  signBytes,
  type KeyPairSigner,
} from '@solana/kit';
import { createBazaarClient, newIdempotencyKey } from '@bazaar/client-sdk/lite';
import { loginWithWallet, type MessageSigner } from '@bazaar/client-sdk/login';
import { verifyFundTransaction } from '@bazaar/client-sdk/verify';

const baseUrl = process.env.BAZAAR_URL ?? 'http://127.0.0.1:3000';
const until = async <T>(what: string, probe: () => Promise<T | null>): Promise<T> => {
  for (let i = 0; i < 120; i++) {
    const v = await probe();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}`);
};

// A Kit key pair as the SDK's login signer (a wallet's signMessage does the same).
const messageSigner = (s: KeyPairSigner): MessageSigner => ({ publicKey: s.address, signMessage: (m) => signBytes(s.keyPair.privateKey, m) });
const signIn = async (s: KeyPairSigner) => (await loginWithWallet(createBazaarClient({ baseUrl }), messageSigner(s))).client;

// 1. The cluster the service settles on (GET /network), and a buyer wallet with SOL on it.
const network = await createBazaarClient({ baseUrl }).network.getNetwork();
if (network.status !== 200) throw new Error(`network: ${network.status}`);
const rpc = createSolanaRpc(network.body.rpc_url);
const airdrop = async (s: KeyPairSigner) => {
  await rpc.requestAirdrop(s.address, lamports(2_000_000_000n)).send();
  await until(`SOL for ${s.address}`, async () => ((await rpc.getBalance(s.address).send()).value > 0n ? true : null));
};
const buyerKey = await generateKeyPairSigner();
await airdrop(buyerKey);
const buyer = await signIn(buyerKey);

// 2. The listing: LISTING_ID, or a fresh seller's listing priced in SOL (paid as wrapped SOL).
let listingId = process.env.LISTING_ID;
if (!listingId) {
  const sellerKey = await generateKeyPairSigner();
  await airdrop(sellerKey);
  const listed = await (await signIn(sellerKey)).listings.createListing({
    body: { title: 'Logo design (Kit example)', description: 'Three concepts, two revisions.', price: 0.05, currency: 'SOL', category: 'design', duration: 5 },
  });
  if (listed.status !== 201) throw new Error(`createListing: ${listed.status} ${listed.body.detail}`);
  listingId = listed.body.listing_id;
}

// 3. Order it; check the fund transaction commits to exactly this order before signing anything.
const created = await buyer.orders.createOrder({ headers: { 'idempotency-key': newIdempotencyKey() }, body: { listing_id: listingId } });
if (created.status !== 201 || !created.body.payment) throw new Error(`createOrder: ${created.status}`);
const chainTime = Number(await rpc.getBlockTime(await rpc.getSlot().send()).send());
const verified = await verifyFundTransaction(created.body, created.body.payment, { chainTime }); // throws FundTransactionMismatchError
console.log(`verified: ${verified.totalBaseUnits} base units into escrow ${verified.escrows[0]!.escrowAddress}`);

// 4. Sign (the platform authority signed already) and send it to the cluster.
const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(created.body.payment.transaction));
const signed = await partiallySignTransactionWithSigners([buyerKey], transaction);
const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send();
console.log(`sent ${signature}`);

// 5. The service sees the escrow funded (its payment watcher, no callback needed).
const funded = await until('the escrow funded', async () => {
  const got = await buyer.orders.getOrder({ params: { order_id: created.body.order_id } });
  return got.status === 200 && got.body.funded_at ? got.body : null;
});
console.log(`order ${funded.order_id} ${funded.status}, funded at ${funded.funded_at}`);
