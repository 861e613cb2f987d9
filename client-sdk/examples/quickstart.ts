import nacl from 'tweetnacl';
import { createBazaarClient, newIdempotencyKey } from '@bazaar/client-sdk';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';

const client = createBazaarClient({ baseUrl: 'http://localhost:3000' });

// 1. Sign In With Solana. In a browser, pass the wallet adapter ({ publicKey, signMessage }) instead.
const seller = keypairSigner(nacl.sign.keyPair().secretKey);
const { user } = await loginWithWallet(client, seller);
console.log(`logged in as ${user.wallet}`);

// 2. Create a listing; its Token-2022 NFT is minted to the seller's wallet.
const created = await client.listings.createListing({
  body: { title: 'Logo design', description: 'Three concepts, two revisions.', price: 25, currency: 'USDC', category: 'design', duration: 5 },
});
if (created.status !== 201) throw new Error(`createListing: ${created.status} ${created.body.detail}`);
console.log(`listing ${created.body.listing_id}, token mint ${created.body.token_mint_address}`);

// 3. Search the marketplace (cursor pagination).
const found = await client.marketplace.searchListings({ query: { query: 'logo', sort: 'price_asc', limit: 10 } });
if (found.status === 200) {
  for (const listing of found.body.data) console.log(listing.title, listing.price, listing.currency);
}

// 4. A buyer orders the listing and gets the escrow payment transaction to sign.
const buyer = createBazaarClient({ baseUrl: 'http://localhost:3000' });
await loginWithWallet(buyer, keypairSigner(nacl.sign.keyPair().secretKey));
const order = await buyer.orders.createOrder({
  headers: { 'idempotency-key': newIdempotencyKey() },
  body: { listing_id: created.body.listing_id },
});
if (order.status === 201 && order.body.payment) {
  // payment is null only for payment_source "custodial" (the service pays from the custodial balance)
  console.log(`pay into escrow ${order.body.escrow_account_address} before ${order.body.payment.expires_at}`);
  console.log(`Solana Pay link: ${order.body.payment.solana_pay_url}`);
} else if (order.status !== 201) {
  console.error(`createOrder failed: ${order.body.type} ${order.body.detail}`);
}
