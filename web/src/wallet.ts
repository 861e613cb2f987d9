/**
 * Wallets through the Wallet Standard (https://github.com/wallet-standard/wallet-standard): Phantom,
 * Solflare, Backpack and any wallet that registers itself with `wallet-standard:register-wallet` show up
 * in `getWallets()`. Nothing here is specific to one wallet.
 *
 * - Sign In With Solana: `request_login` (with this page's host as `domain`, its origin as `uri`) ->
 *   `solana:signIn` with the server's `sign_in_input`; wallets without it sign the same SIWS message
 *   text with `solana:signMessage` -> `verify_login`.
 * - Paying into escrow: the service hands out the fund transaction (serialized, base64, partially
 *   signed by the platform authority, fee payer = buyer). `solana:signTransaction` signs it and the
 *   page submits it (`POST /orders/{id}/transaction`: the service checks it, sends it and records the
 *   payment at once); a wallet that can only `solana:signAndSendTransaction` sends it itself and the
 *   service's payment watcher finds the funded escrow (a few seconds).
 */
import { getWallets } from '@wallet-standard/app';
import type { Wallet, WalletAccount } from '@wallet-standard/base';
import { StandardConnect, type StandardConnectFeature } from '@wallet-standard/features';
import {
  SolanaSignAndSendTransaction,
  SolanaSignIn,
  SolanaSignMessage,
  SolanaSignTransaction,
  type SolanaSignAndSendTransactionFeature,
  type SolanaSignInFeature,
  type SolanaSignMessageFeature,
  type SolanaSignTransactionFeature,
} from '@solana/wallet-standard-features';
import type { Order } from '@bazaar/client-sdk';
import { base64ToBytes, bytesToBase64 } from '@bazaar/client-sdk/lite';
import { buildSignInMessage } from '@bazaar/client-sdk/login';
import { client, ok, session, setSession, type Session } from './api.js';

type Features = Partial<
  StandardConnectFeature &
    SolanaSignInFeature &
    SolanaSignMessageFeature &
    SolanaSignTransactionFeature &
    SolanaSignAndSendTransactionFeature
>;

const wallets = getWallets();

/** Wallets that can sign in to Bazaar (connect + signIn or signMessage), as registered so far. */
export function loginWallets(): Wallet[] {
  return wallets.get().filter((w) => {
    const f = w.features as Features;
    return w.chains.some((c) => c.startsWith('solana:')) && !!f[StandardConnect] && !!(f[SolanaSignIn] ?? f[SolanaSignMessage]);
  });
}

/** Call `listener` whenever a wallet registers or unregisters (an extension can load after the page). */
export function onWalletsChange(listener: () => void): () => void {
  const off1 = wallets.on('register', listener);
  const off2 = wallets.on('unregister', listener);
  return () => {
    off1();
    off2();
  };
}

/**
 * Sign In With Solana with `wallet`: connect, request_login for this page, sign, verify_login.
 * Returns the new session (also set as the current one). Throws ApiError when the service refuses,
 * or the wallet's own error when the user rejects.
 */
export async function signIn(wallet: Wallet): Promise<Session> {
  const f = wallet.features as Features;
  const { accounts } = await f[StandardConnect]!.connect();
  const account = accounts[0];
  if (!account) throw new Error(`${wallet.name} shared no account.`);

  const challenge = ok(
    await client.auth.requestLogin({
      body: {
        address: account.address,
        domain: window.location.host,
        uri: window.location.origin,
        statement: 'Sign in to Bazaar',
      },
    }),
    200,
  );
  const input = challenge.sign_in_input;
  let signedMessage: Uint8Array;
  let signature: Uint8Array;
  if (f[SolanaSignIn]) {
    // the wallet shows the SIWS fields and returns the exact message it signed
    const [out] = await f[SolanaSignIn].signIn(input);
    ({ signedMessage, signature } = out!);
  } else {
    // the fallback: the same SIWS message text, signed as bytes
    const message = buildSignInMessage(input);
    const [out] = await f[SolanaSignMessage]!.signMessage({ account, message });
    ({ signedMessage, signature } = out!);
  }
  const login = ok(
    await client.auth.verifyLogin({
      body: { address: account.address, signed_message: bytesToBase64(signedMessage), signature: bytesToBase64(signature), set_cookie: true },
    }),
    200,
  );
  const s: Session = {
    token: login.access_token,
    wallet: login.user.wallet,
    walletName: wallet.name,
    chain: `solana:${input.chainId?.replace(/^solana:/, '') ?? 'mainnet'}`,
    expiresAt: login.expires_at,
  };
  setSession(s);
  return s;
}

/** The signed-in wallet and account, connecting again (silently when the wallet allows) after a reload. */
async function signedInAccount(): Promise<{ wallet: Wallet; account: WalletAccount; s: Session }> {
  const s = session();
  if (!s) throw new Error('Sign in first.');
  const wallet = wallets.get().find((w) => w.name === s.walletName);
  if (!wallet) throw new Error(`The wallet ${s.walletName} is not available in this browser.`);
  let account = wallet.accounts.find((a) => a.address === s.wallet);
  if (!account) {
    const { accounts } = await (wallet.features as Features)[StandardConnect]!.connect({ silent: true });
    account = accounts.find((a) => a.address === s.wallet);
  }
  if (!account) throw new Error(`${s.walletName} does not offer the signed-in account ${s.wallet}; sign in again.`);
  return { wallet, account, s };
}

/**
 * Sign `transactionBase64` (built by the service, fee payer = the signed-in wallet) with the wallet and hand it
 * back: `submit` gets the signed bytes (solana:signTransaction: the service checks, sends and records it), or,
 * for a wallet that can only signAndSendTransaction, the wallet sends it and `afterSend` reads the result
 * (the service's watchers find the transaction within seconds). One wallet signature either way.
 */
export async function signWithWallet<T>(transactionBase64: string, submit: (signedBase64: string) => Promise<T>, afterSend: () => Promise<T>): Promise<T> {
  const { wallet, account, s } = await signedInAccount();
  const f = wallet.features as Features;
  const transaction = base64ToBytes(transactionBase64);
  if (f[SolanaSignTransaction]) {
    const [out] = await f[SolanaSignTransaction].signTransaction({ account, transaction, chain: s.chain });
    return submit(bytesToBase64(out!.signedTransaction));
  }
  if (f[SolanaSignAndSendTransaction]) {
    await f[SolanaSignAndSendTransaction].signAndSendTransaction({ account, transaction, chain: s.chain });
    return afterSend();
  }
  throw new Error(`${wallet.name} can neither sign nor send transactions.`);
}

/** Submit a signed fund transaction of `orderId` (POST /orders/{id}/transaction); the order as the service reports it. */
const submitFund = (orderId: string) => async (signed: string) =>
  ok(await client.orders.submitOrderTransaction({ params: { order_id: orderId }, body: { signed_transaction: signed } }), 200);
const readOrder = (orderId: string) => async () => ok(await client.orders.getOrder({ params: { order_id: orderId } }), 200);

/**
 * Pay an order awaiting payment from the signed-in wallet: a fresh fund transaction (each one is valid
 * for about a minute), signed by the wallet, then submitted (signTransaction) or sent by the wallet
 * (signAndSendTransaction). Resolves to the order as the service reports it afterwards.
 */
export async function payOrder(orderId: string): Promise<Order> {
  await signedInAccount();
  const fresh = ok(await client.orders.createOrderPayment({ params: { order_id: orderId } }), 200);
  return signWithWallet(fresh.transaction, submitFund(orderId), readOrder(orderId));
}

/**
 * Fund the next milestones `indexes` of a multi-milestone order (issue 24): ONE transaction with one fund
 * instruction per milestone (POST /orders/{id}/milestones/fund, Idempotency-Key `key`), one wallet signature.
 */
export async function fundMilestones(orderId: string, indexes: number[], key: string): Promise<Order> {
  await signedInAccount();
  const tx = ok(
    await client.orders.fundOrderMilestones({ params: { order_id: orderId }, headers: { 'idempotency-key': key }, body: { milestones: indexes } }),
    200,
  );
  return signWithWallet(tx.transaction, submitFund(orderId), readOrder(orderId));
}
