/**
 * `@bazaar/client-sdk/login`: Sign In With Solana for Bazaar: request_login ->
 * createSignInMessage(sign_in_input) -> wallet signMessage -> verify_login. Works with any signer that
 * can sign raw bytes (wallet adapters expose `signMessage`; `keypairSigner` from
 * `@bazaar/client-sdk/keypair` wraps a local ed25519 secret key). Holds no signing code itself, so a
 * browser app that logs in through a wallet bundles no ed25519 implementation.
 */
import { createSignInMessage } from '@solana/wallet-standard-util';
import type { SignInInput, User } from '@bazaar/contract';
import { BazaarApiError, type BazaarClient } from './client-core.js';
// a client built from a base URL needs no schemas (it validates nothing): the lite one keeps them out of bundles
import { createBazaarClient } from './lite.js';
import { bytesToBase64 } from './encoding.js';
import { withRetryAfter, type RetryAfterOptions } from './retry.js';

/** Anything that has a public key and signs messages with it (ed25519). */
export interface MessageSigner {
  publicKey: string | { toBase58(): string };
  signMessage(message: Uint8Array): Promise<Uint8Array>;
}

export interface LoginResult {
  token: string;
  expiresAt: Date;
  user: User;
  /** The client the token was set on (created when a baseUrl was passed). */
  client: BazaarClient;
}

export interface LoginOptions {
  /** Ask the server to also set the bazaar_session cookie. */
  setCookie?: boolean;
  /**
   * A 429 rate-limited answer of request_login or verify_login is retried once after its Retry-After
   * seconds (at most `maxWaitSeconds`, default 60); `false` turns that off.
   */
  retryAfter?: RetryAfterOptions | false;
}

export const signerAddress = (signer: MessageSigner): string =>
  typeof signer.publicKey === 'string' ? signer.publicKey : signer.publicKey.toBase58();

/** The exact bytes a wallet must sign for a request_login answer (the SIWS message text, UTF-8). */
export function buildSignInMessage(input: SignInInput): Uint8Array {
  return createSignInMessage(input);
}

/**
 * Log in with a wallet: returns the token and the user, and sets the token on the client. A 429
 * rate-limited answer is retried once after its Retry-After (see LoginOptions.retryAfter).
 * Throws BazaarApiError (with the problem document) when the server refuses.
 */
export async function loginWithWallet(
  clientOrBaseUrl: BazaarClient | string,
  signer: MessageSigner,
  options: LoginOptions = {},
): Promise<LoginResult> {
  const client = typeof clientOrBaseUrl === 'string' ? createBazaarClient({ baseUrl: clientOrBaseUrl }) : clientOrBaseUrl;
  const address = signerAddress(signer);

  const retry = <R extends { status: number; headers?: Pick<Headers, 'get'> }>(call: () => Promise<R>) =>
    options.retryAfter === false ? call() : withRetryAfter(call, options.retryAfter);

  const requested = await retry(() => client.auth.requestLogin({ body: { address } }));
  if (requested.status !== 200) throw new BazaarApiError(requested.status, requested.body, 'request_login failed');
  const input = requested.body.sign_in_input;
  if (input.address !== address) {
    throw new Error(`request_login returned a sign-in input for ${input.address}, expected ${address}`);
  }

  const message = buildSignInMessage(input);
  const signature = await signer.signMessage(message);

  const verified = await retry(() =>
    client.auth.verifyLogin({
      body: {
        address,
        signed_message: bytesToBase64(message),
        signature: bytesToBase64(signature),
        ...(options.setCookie ? { set_cookie: true } : {}),
      },
    }),
  );
  if (verified.status !== 200) throw new BazaarApiError(verified.status, verified.body, 'verify_login failed');

  client.setToken(verified.body.access_token);
  return {
    token: verified.body.access_token,
    expiresAt: new Date(verified.body.expires_at),
    user: verified.body.user,
    client,
  };
}
