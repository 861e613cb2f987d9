/**
 * Listing tokens on a real localnet: the service mints a Token-2022 NFT for a listing and the test
 * reads every property back from the chain; then the service updates its metadata.
 */
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import {
  TOKEN_2022_PROGRAM_ID,
  getAccount,
  getAssociatedTokenAddressSync,
  getMetadataPointerState,
  getMint,
  getTokenMetadata,
} from '@solana/spl-token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectConfirmedSignature } from './helpers/signatures';
import type { BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { randomBytes, randomUUID } from 'node:crypto';
import bs58 from 'bs58';
import { createChain, listingMintKeypair, type ChainClient, type ListingMintAttempt, type TxAttempt } from '../server/src/chain/index';
import { ensureSol } from '../server/scripts/bootstrap-localnet';

let env: BootstrappedChain;
let chain: ChainClient;
const service = Keypair.generate();
const seller = Keypair.generate().publicKey;

beforeAll(async () => {
  // the worker's shared localnet, with a service key of this suite's own
  env = await sharedBootstrappedChain('listing-mint');
  chain = createChain({ rpcUrl: env.localnet.rpcUrl, serviceKeypair: service, currencies: [] });
  await ensureSol(chain.connection, service.publicKey, BigInt(LAMPORTS_PER_SOL), 10 * LAMPORTS_PER_SOL);
});

afterAll(async () => {
  await env?.stop();
});

describe('listing token (Token-2022 NFT)', () => {
  let mint: PublicKey;

  it('is minted with supply 1, decimals 0, revoked mint authority and self-pointing metadata, held by the seller', async () => {
    const started = performance.now();
    const res = await chain.mintListingToken({
      owner: seller.toBase58(),
      name: 'Logo design in 3 days',
      symbol: 'BZR',
      uri: 'http://localhost:3000/api/v1/listings/6a1f/token-metadata.json',
    });
    const ms = Math.round(performance.now() - started);
    console.info(`[timing] listing mint: ${ms} ms (slot ${res.slot})`);
    expect(res.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(res.slot).toBeGreaterThan(0);
    mint = new PublicKey(res.mint);

    const info = await getMint(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(info.supply).toBe(1n);
    expect(info.decimals).toBe(0);
    expect(info.mintAuthority).toBeNull();
    expect(info.freezeAuthority).toBeNull();

    const pointer = getMetadataPointerState(info);
    expect(pointer?.metadataAddress?.toBase58()).toBe(mint.toBase58());
    expect(pointer?.authority?.toBase58()).toBe(service.publicKey.toBase58());

    const meta = await getTokenMetadata(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(meta).toMatchObject({ name: 'Logo design in 3 days', symbol: 'BZR', uri: 'http://localhost:3000/api/v1/listings/6a1f/token-metadata.json' });
    expect(meta?.updateAuthority?.toBase58()).toBe(service.publicKey.toBase58());

    const ata = getAssociatedTokenAddressSync(mint, seller, false, TOKEN_2022_PROGRAM_ID);
    const account = await getAccount(chain.connection, ata, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(account.amount).toBe(1n);
    expect(account.owner.toBase58()).toBe(seller.toBase58());
    expect(account.mint.toBase58()).toBe(mint.toBase58());
  });

  it('updates name and uri on chain (growing the account and topping up its rent)', async () => {
    const uri = `http://localhost:3000/api/v1/listings/6a1f/token-metadata.json?v=2&${'x'.repeat(60)}`;
    const res = await chain.updateListingToken(mint.toBase58(), { name: 'Logo design in 2 days', uri });
    await expectConfirmedSignature(chain.connection, res?.signature, 'the update signature');
    const meta = await getTokenMetadata(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(meta).toMatchObject({ name: 'Logo design in 2 days', symbol: 'BZR', uri });
    const acc = await chain.connection.getAccountInfo(mint, 'confirmed');
    expect(acc!.lamports).toBeGreaterThanOrEqual(await chain.connection.getMinimumBalanceForRentExemption(acc!.data.length));
  });

  it('sends nothing when the fields are unchanged', async () => {
    const meta = await getTokenMetadata(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(await chain.updateListingToken(mint.toBase58(), { name: meta!.name })).toBeNull();
  });

  it('refuses a name longer than 32 bytes before touching the chain', async () => {
    await expect(chain.mintListingToken({ owner: seller.toBase58(), name: 'n'.repeat(33), symbol: 'BZR', uri: 'http://x' })).rejects.toMatchObject({
      slug: 'validation-error',
    });
  });
});

describe('listing token crash safety: a mint address per listing, the attempt before the send, outcomes read back', () => {
  const owner = seller.toBase58();
  const input = (listingId: string) => ({ listingId, owner, name: 'Crash-safe logo', symbol: 'BZR', uri: `http://x/api/v1/listings/${listingId}/token-metadata.json` });

  it('the mint address is derived from the listing id and handed to onSigned before anything is on chain', async () => {
    const listingId = randomUUID();
    const expected = listingMintKeypair(service, listingId).publicKey.toBase58();
    expect(listingMintKeypair(service, listingId).publicKey.toBase58()).toBe(expected);
    expect(listingMintKeypair(service, randomUUID()).publicKey.toBase58()).not.toBe(expected);
    let seen: ListingMintAttempt | null = null;
    let existedWhenSigned: boolean | null = null;
    const res = await chain.mintListingToken(input(listingId), {
      onSigned: async (a) => {
        seen = a;
        existedWhenSigned = (await chain.connection.getAccountInfo(new PublicKey(a.mint), 'confirmed')) !== null;
      },
    });
    expect(res.mint).toBe(expected);
    expect(seen).toMatchObject({ mint: expected, signature: res.signature });
    expect(seen!.lastValidBlockHeight).toBeGreaterThan(await chain.connection.getBlockHeight('confirmed'));
    expect(existedWhenSigned).toBe(false);
  });

  it('a second mint of the same listing is rejected, and readListingMint finds the first token and its transaction', async () => {
    const listingId = randomUUID();
    const first = await chain.mintListingToken(input(listingId));
    await expect(chain.mintListingToken(input(listingId))).rejects.toMatchObject({ slug: 'chain-transaction-failed' });
    // without the signature (a lost attempt record), the creating transaction is found by address
    for (const signature of [first.signature, null]) {
      expect(await chain.readListingMint({ mint: first.mint, signature, lastValidBlockHeight: null })).toEqual({
        state: 'minted',
        name: 'Crash-safe logo',
        uri: input(listingId).uri,
        signature: first.signature,
        slot: first.slot,
      });
    }
    const ata = getAssociatedTokenAddressSync(new PublicKey(first.mint), seller, false, TOKEN_2022_PROGRAM_ID);
    expect((await getAccount(chain.connection, ata, 'confirmed', TOKEN_2022_PROGRAM_ID)).amount).toBe(1n);
  });

  it('an onSigned that throws sends nothing: the mint is absent', async () => {
    const listingId = randomUUID();
    let attempt: ListingMintAttempt | null = null;
    await expect(
      chain.mintListingToken(input(listingId), {
        onSigned: (a) => {
          attempt = a;
          throw new Error('database down');
        },
      }),
    ).rejects.toThrow('database down');
    const a = attempt as unknown as ListingMintAttempt;
    expect(await chain.connection.getAccountInfo(new PublicKey(a.mint), 'confirmed')).toBeNull();
    expect(await chain.readListingMint({ mint: a.mint, signature: null, lastValidBlockHeight: null })).toEqual({ state: 'absent' });
    // with its signature: unknown to the chain, in flight until the blockhash expires, then absent for good
    expect(await chain.readListingMint({ mint: a.mint, signature: a.signature, lastValidBlockHeight: a.lastValidBlockHeight })).toEqual({ state: 'in_flight' });
    const height = await chain.connection.getBlockHeight('confirmed');
    expect(await chain.readListingMint({ mint: a.mint, signature: a.signature, lastValidBlockHeight: height - 1 })).toEqual({ state: 'absent' });
  });

  it('transactionOutcome: landed, in flight, dead', async () => {
    const listingId = randomUUID();
    const minted = await chain.mintListingToken(input(listingId));
    let update: TxAttempt | null = null;
    const res = await chain.updateListingToken(minted.mint, { name: 'Renamed crash-safe logo' }, { onSigned: (a) => void (update = a) });
    expect(update).toMatchObject({ signature: res!.signature });
    expect(await chain.transactionOutcome(update!)).toEqual({ state: 'landed', slot: res!.slot });
    const height = await chain.connection.getBlockHeight('confirmed');
    const unknown = bs58.encode(randomBytes(64));
    expect(await chain.transactionOutcome({ signature: unknown, lastValidBlockHeight: height + 100 })).toEqual({ state: 'in_flight' });
    expect(await chain.transactionOutcome({ signature: unknown, lastValidBlockHeight: height - 1 })).toEqual({ state: 'dead', reason: 'expired' });
  });
});
