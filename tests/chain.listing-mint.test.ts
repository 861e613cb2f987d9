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
import { startLocalnet } from './helpers/localnet';
import { createChain, type ChainClient } from '../server/src/chain/index';
import { ensureSol } from '../server/scripts/bootstrap-localnet';

let localnet: Awaited<ReturnType<typeof startLocalnet>>;
let chain: ChainClient;
const service = Keypair.generate();
const seller = Keypair.generate().publicKey;

beforeAll(async () => {
  localnet = await startLocalnet();
  chain = createChain({ rpcUrl: localnet.rpcUrl, serviceKeypair: service, currencies: [] });
  await ensureSol(chain.connection, service.publicKey, BigInt(LAMPORTS_PER_SOL), 10 * LAMPORTS_PER_SOL);
});

afterAll(async () => {
  await localnet?.stop();
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
    expect(res?.signature).toBeTruthy();
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
