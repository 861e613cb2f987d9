import { createBazaarClient, isProblem, type Listing } from '@bazaar/client-sdk';
import { loginWithWallet, type MessageSigner } from '@bazaar/client-sdk/login';

// The connected wallet: any adapter with a public key and signMessage fits (Wallet Standard's
// solana:signMessage, @solana/wallet-adapter's useWallet(), Phantom's window.solana, ...).
declare const wallet: MessageSigner;

const client = createBazaarClient({ baseUrl: 'http://localhost:3000' });

/** Sign In With Solana: the wallet shows the SIWS message and signs it; the token stays in `client`. */
export async function signIn(): Promise<string> {
  const { user, expiresAt } = await loginWithWallet(client, wallet);
  console.log(`signed in until ${expiresAt.toLocaleTimeString()}`);
  return user.wallet;
}

/** The newest listings of a category, for a page. */
export async function newestListings(category: string): Promise<Listing[]> {
  const res = await client.marketplace.searchListings({ query: { category, sort: 'newest', limit: 20 } });
  if (res.status === 200) return res.body.data;
  // every error is a problem document: res.body.type names it, e.g. .../problems/unauthorized
  throw new Error(isProblem(res.body) ? `${res.body.title}: ${res.body.detail}` : `HTTP ${res.status}`);
}
