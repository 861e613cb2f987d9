import { verifySignIn } from '@solana/wallet-standard-util';
import type { SolanaSignInOutput } from '@solana/wallet-standard-features';
import nacl from 'tweetnacl';
import { describe, expect, it } from 'vitest';
import { SignInInput, type SignInInput as SignInInputT } from '@bazaar/contract';
import { base64ToBytes, bytesToBase64 } from './index.js';
import { keypairSigner } from './keypair.js';
import { buildSignInMessage, signerAddress } from './login.js';

function serverInput(address: string, overrides: Partial<SignInInputT> = {}): SignInInputT {
  // what POST /auth/request_login returns in `sign_in_input`
  return SignInInput.parse({
    domain: 'localhost:3000',
    address,
    statement: 'Sign in to Bazaar',
    uri: 'http://localhost:3000',
    version: '1',
    chainId: 'localnet',
    nonce: 'k3Jd9aQx7LmP2vRt',
    issuedAt: '2026-01-31T12:00:00.000Z',
    expirationTime: '2026-01-31T12:05:00.000Z',
    ...overrides,
  });
}

function output(signer: ReturnType<typeof keypairSigner>, message: Uint8Array, signature: Uint8Array): SolanaSignInOutput {
  return {
    account: { address: signerAddress(signer), publicKey: signer.publicKeyBytes, chains: [], features: [] },
    signedMessage: message,
    signature,
  };
}

describe('SIWS message building', () => {
  it('produces a message that verifySignIn accepts for the input the server gave', async () => {
    const signer = keypairSigner(nacl.sign.keyPair().secretKey);
    const input = serverInput(signerAddress(signer));
    const message = buildSignInMessage(input);
    const text = new TextDecoder().decode(message);
    expect(text.startsWith(`localhost:3000 wants you to sign in with your Solana account:\n${input.address}`)).toBe(true);
    expect(text).toContain(`Nonce: ${input.nonce}`);

    const signature = await signer.signMessage(message);
    expect(verifySignIn(input, output(signer, message, signature))).toBe(true);
  });

  it('survives the base64 round trip of verify_login', async () => {
    const signer = keypairSigner(nacl.randomBytes(32)); // 32-byte seed form
    const input = serverInput(signerAddress(signer));
    const message = buildSignInMessage(input);
    const signature = await signer.signMessage(message);
    const [m, s] = [base64ToBytes(bytesToBase64(message)), base64ToBytes(bytesToBase64(signature))];
    expect(verifySignIn(input, output(signer, m, s))).toBe(true);
  });

  it('fails verification for another nonce, domain, key or a tampered message', async () => {
    const signer = keypairSigner(nacl.sign.keyPair().secretKey);
    const input = serverInput(signerAddress(signer));
    const message = buildSignInMessage(input);
    const signature = await signer.signMessage(message);
    const out = output(signer, message, signature);
    expect(verifySignIn({ ...input, nonce: 'Zz9otherNonce1' }, out)).toBe(false);
    expect(verifySignIn({ ...input, domain: 'evil.example' }, out)).toBe(false);

    const other = keypairSigner(nacl.sign.keyPair().secretKey);
    expect(verifySignIn(input, { ...out, account: { ...out.account, publicKey: other.publicKeyBytes } })).toBe(false);

    const tampered = message.slice();
    tampered[tampered.length - 1] ^= 1;
    expect(verifySignIn(input, { ...out, signedMessage: tampered })).toBe(false);
  });

  it('keypairSigner exposes the base58 address of the secret key', () => {
    const pair = nacl.sign.keyPair();
    const signer = keypairSigner(pair.secretKey);
    expect(signer.publicKeyBytes).toEqual(pair.publicKey);
    expect(signerAddress(signer)).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(signerAddress({ publicKey: { toBase58: () => 'abc' }, signMessage: signer.signMessage })).toBe('abc');
  });
});
