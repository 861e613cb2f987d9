/**
 * Listing creation against the real chain: POST /listings through the HTTP app wired to a real
 * localnet (createChain), then every promise of the response is read back from the chain:
 * a Token-2022 mint with supply 1 and decimals 0, metadata uri = the listing's metadata URL, held by
 * the seller's associated token account. Then a title change renames the token on chain.
 */
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync, getMint, getTokenMetadata } from '@solana/spl-token';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from './helpers/localnet.js';
import { createChain, type ChainClient } from '../server/src/chain/index.js';
import { ensureSol } from '../server/scripts/bootstrap-localnet.js';
import { API, countRows, expectProblem, listingBody, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';

let localnet: Localnet;
let chain: ChainClient;
let t: TestApp;
let app: TestApp['app'];
let alice: TestUser;
const service = Keypair.generate();

beforeAll(async () => {
  localnet = await startLocalnet();
  chain = createChain({ rpcUrl: localnet.rpcUrl, serviceKeypair: service, currencies: [] });
  await ensureSol(chain.connection, service.publicKey, BigInt(LAMPORTS_PER_SOL), 10 * LAMPORTS_PER_SOL);
  ({ t, app } = await setup({ chain }));
  alice = await user(t);
});

afterAll(async () => {
  await t?.close();
  await localnet?.stop();
});

describe('POST /listings on a real chain', () => {
  let listingId: string;
  let mint: PublicKey;

  it('mints a supply-1 Token-2022 NFT to the seller, with the listing metadata uri', async () => {
    const res = await request(app).post(`${API}/listings`).set(alice.headers).send(listingBody({ title: 'On-chain logo design' }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    listingId = res.body.listing_id;
    mint = new PublicKey(res.body.token_mint_address);

    const info = await getMint(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(info.supply).toBe(1n);
    expect(info.decimals).toBe(0);
    expect(info.mintAuthority).toBeNull();

    const meta = await getTokenMetadata(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(meta).toMatchObject({ name: 'On-chain logo design', symbol: 'BZR' });
    expect(meta!.uri).toMatch(new RegExp(`/api/v1/listings/${listingId}/token-metadata\\.json$`));
    expect(res.body.metadata.metadata_uri).toBe(meta!.uri);

    const ata = getAssociatedTokenAddressSync(mint, new PublicKey(alice.wallet), false, TOKEN_2022_PROGRAM_ID);
    const account = await getAccount(chain.connection, ata, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(account.amount).toBe(1n);
    expect(account.owner.toBase58()).toBe(alice.wallet);

    const tx = await chain.connection.getTransaction(res.body.mint_transaction.signature, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    expect(tx?.slot).toBe(res.body.mint_transaction.slot);
  });

  it('a title change renames the token on chain', async () => {
    const res = await request(app).patch(`${API}/listings/${listingId}`).set(alice.headers).send({ title: 'On-chain brand identity' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const meta = await getTokenMetadata(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(meta!.name).toBe('On-chain brand identity');
  });

  it('503 and no row when the RPC is unreachable', async () => {
    const offline = createChain({ rpcUrl: 'http://127.0.0.1:9', serviceKeypair: service, currencies: [], rpcTimeoutMs: 2_000 });
    const o = await setup({ chain: offline });
    const bob = await user(o.t);
    const before = await countRows(o.db, 'listings');
    expectProblem(await request(o.app).post(`${API}/listings`).set(bob.headers).send(listingBody()), 503, 'chain-unavailable');
    expect(await countRows(o.db, 'listings')).toBe(before);
    await o.t.close();
  });
});
