/**
 * A Wallet Standard wallet for browser tests and `npm run web:wallet`, backed by an ed25519 keypair held by the test process.
 *
 * `installTestWallet(context, keypair)` injects (before any page script) a wallet object that registers
 * itself the standard way: it dispatches `wallet-standard:register-wallet` and answers
 * `wallet-standard:app-ready` (what @wallet-standard/wallet's registerWallet does), so an app finds it
 * through `getWallets()` like Phantom or Solflare. Features: standard:connect, standard:events,
 * solana:signIn (SIWS message built from the input, @solana/wallet-standard-util), solana:signMessage,
 * solana:signTransaction, solana:signAndSendTransaction (sent to `rpcUrl`). Chains: solana:localnet.
 * The secret key never enters the page: every signature is made in Node through a function exposed to
 * the context, and each request is recorded in `requests` (what the page asked the wallet to do).
 */
import { Connection, Keypair, VersionedTransaction } from '@solana/web3.js';
import { createSignInMessage } from '@solana/wallet-standard-util';
import type { SolanaSignInInput } from '@solana/wallet-standard-features';
import type { BrowserContext } from 'playwright-core';
import nacl from 'tweetnacl';

export const TEST_WALLET_NAME = 'Bazaar Test Wallet';

export interface TestWallet {
  address: string;
  /** feature names the page called, in order (e.g. ['standard:connect', 'solana:signIn']) */
  requests: string[];
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

/** The page side: plain JS (no bundler), the address, the icon and the feature list baked in. */
function pageScript(address: string, publicKey: number[], without: readonly string[]): string {
  return `(() => {
  const b64 = (u8) => btoa(String.fromCharCode(...u8));
  const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const chains = ['solana:localnet'];
  const features = ['solana:signIn', 'solana:signMessage', 'solana:signTransaction', 'solana:signAndSendTransaction'];
  const account = { address: ${JSON.stringify(address)}, publicKey: new Uint8Array(${JSON.stringify(publicKey)}), chains, features: [...features], label: 'test' };
  const call = (name, ...args) => window.__bazaarTestWallet(name, ...args);
  const omit = ${JSON.stringify(without)};
  const wallet = {
    version: '1.0.0',
    name: ${JSON.stringify(TEST_WALLET_NAME)},
    icon: 'data:image/svg+xml;base64,' + btoa('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="11" fill="#fca311"/></svg>'),
    chains,
    accounts: [account],
    features: {
      'standard:connect': { version: '1.0.0', connect: async () => { await call('standard:connect'); return { accounts: [account] }; } },
      'standard:events': { version: '1.0.0', on: () => () => {} },
      'solana:signIn': { version: '1.0.0', signIn: async (...inputs) => Promise.all(inputs.map(async (input) => {
        const out = await call('solana:signIn', JSON.stringify(input));
        return { account, signedMessage: unb64(out.message), signature: unb64(out.signature), signatureType: 'ed25519' };
      })) },
      'solana:signMessage': { version: '1.0.0', signMessage: async (...inputs) => Promise.all(inputs.map(async ({ message }) => {
        const signature = await call('solana:signMessage', b64(message));
        return { signedMessage: message, signature: unb64(signature), signatureType: 'ed25519' };
      })) },
      'solana:signTransaction': { version: '1.0.0', supportedTransactionVersions: ['legacy', 0], signTransaction: async (...inputs) => Promise.all(inputs.map(async ({ transaction }) => {
        return { signedTransaction: unb64(await call('solana:signTransaction', b64(transaction))) };
      })) },
      'solana:signAndSendTransaction': { version: '1.0.0', supportedTransactionVersions: ['legacy', 0], signAndSendTransaction: async (...inputs) => Promise.all(inputs.map(async ({ transaction }) => {
        return { signature: unb64(await call('solana:signAndSendTransaction', b64(transaction))) };
      })) },
    },
  };
  for (const f of omit) delete wallet.features[f];
  account.features.splice(0, account.features.length, ...features.filter((f) => !omit.includes(f)));
  const callback = ({ register }) => register(wallet);
  const event = new Event('wallet-standard:register-wallet', { bubbles: false, cancelable: false, composed: false });
  Object.defineProperty(event, 'detail', { value: callback });
  window.dispatchEvent(event);
  window.addEventListener('wallet-standard:app-ready', ({ detail: api }) => callback(api));
})();`;
}

/**
 * Inject the wallet of `keypair` into every page of `context`; `rpcUrl` for signAndSendTransaction.
 * `without` leaves features out, e.g. ['solana:signIn', 'solana:signTransaction'] for a wallet that
 * only signs messages and sends transactions itself.
 */
export async function installTestWallet(
  context: BrowserContext,
  keypair: Keypair,
  rpcUrl: string,
  opts: { without?: readonly string[] } = {},
): Promise<TestWallet> {
  const wallet: TestWallet = { address: keypair.publicKey.toBase58(), requests: [] };
  const sign = (message: Uint8Array) => nacl.sign.detached(message, keypair.secretKey);
  await context.exposeFunction('__bazaarTestWallet', async (name: string, arg?: string) => {
    wallet.requests.push(name);
    switch (name) {
      case 'standard:connect':
        return null;
      case 'solana:signIn': {
        const input = JSON.parse(arg!) as SolanaSignInInput;
        const message = createSignInMessage({ ...input, address: input.address ?? wallet.address, domain: input.domain ?? '' });
        return { message: b64(message), signature: b64(sign(message)) };
      }
      case 'solana:signMessage':
        return b64(sign(unb64(arg!)));
      case 'solana:signTransaction':
      case 'solana:signAndSendTransaction': {
        const tx = VersionedTransaction.deserialize(unb64(arg!));
        tx.sign([keypair]);
        if (name === 'solana:signTransaction') return b64(tx.serialize());
        await new Connection(rpcUrl, 'confirmed').sendRawTransaction(tx.serialize());
        return b64(Buffer.from(tx.signatures[0]!));
      }
      default:
        throw new Error(`test wallet: unknown request ${name}`);
    }
  });
  await context.addInitScript({ content: pageScript(wallet.address, [...keypair.publicKey.toBytes()], opts.without ?? []) });
  return wallet;
}
