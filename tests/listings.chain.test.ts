/**
 * Listing creation against the real chain: POST /listings through the HTTP app wired to a real
 * localnet (createChain), then every promise of the response is read back from the chain:
 * a Token-2022 mint with supply 1 and decimals 0, metadata uri = the listing's metadata URL, held by
 * the seller's associated token account. Then a title change renames the token on chain.
 * Crash safety on the real chain: a listing write refused after the mint and a crash after a rename
 * converge after a restart (a new instance on the same database and localnet): every Token-2022 token
 * the seller holds belongs to a listing whose title gives its on-chain name.
 */
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { AccountLayout, TOKEN_2022_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync, getMint, getTokenMetadata } from '@solana/spl-token';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrappedChain } from './helpers/localnet.js';
import { sharedBootstrappedChain } from './helpers/shared-chain.js';
import { createApp, type BazaarApp } from '../server/src/app.js';
import { createChain, listingMintKeypair, type ChainClient } from '../server/src/chain/index.js';
import { tokenName } from '../server/src/modules/listings/index.js';
import { failWrites } from './helpers/db-faults.js';
import { ensureSol } from '../server/scripts/bootstrap-localnet.js';
import { API, countRows, expectProblem, listingBody, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';

let env: BootstrappedChain;
let chain: ChainClient;
let t: TestApp;
let app: TestApp['app'];
let alice: TestUser;
const service = Keypair.generate();

beforeAll(async () => {
  // the worker's shared localnet, with a service key of this suite's own
  env = await sharedBootstrappedChain('listings-chain');
  chain = createChain({ rpcUrl: env.localnet.rpcUrl, serviceKeypair: service, currencies: [] });
  await ensureSol(chain.connection, service.publicKey, BigInt(LAMPORTS_PER_SOL), 10 * LAMPORTS_PER_SOL);
  ({ t, app } = await setup({ chain }));
  alice = await user(t);
});

const restarted: BazaarApp[] = [];
afterAll(async () => {
  for (const b of restarted) await b.services.stop();
  await t?.close();
  await env?.stop();
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

describe('crash safety on a real chain', () => {
  /** A new instance on the same database and localnet; `start` runs its start-up recovery pass. */
  /** Start `b` as a restarted process: the instances started before are gone (one would keep the leader lease). */
  async function startAlone(b: BazaarApp): Promise<void> {
    for (const old of restarted) if (old !== b) await old.services.stop();
    await b.services.start();
  }

  function instance(hooks?: NonNullable<TestApp['ctx']['listings']>['hooks']): BazaarApp {
    const b = createApp({ ...t.ctx, listings: { recoveryIntervalMs: 0, hooks } });
    restarted.push(b);
    return b;
  }

  /** Every Token-2022 token `wallet` holds belongs to one listing whose title gives the on-chain name. */
  async function expectNoOrphans(wallet: string) {
    const accounts = await chain.connection.getTokenAccountsByOwner(new PublicKey(wallet), { programId: TOKEN_2022_PROGRAM_ID }, 'confirmed');
    expect(accounts.value.length).toBeGreaterThan(0);
    for (const a of accounts.value) {
      const mint = AccountLayout.decode(a.account.data).mint;
      const rows = await t.ctx.db.$queryRaw<Array<{ title: string }>>`SELECT title FROM listings WHERE token_mint_address = ${mint.toBase58()}`;
      expect(rows, `orphaned token ${mint.toBase58()}`).toHaveLength(1);
      const meta = await getTokenMetadata(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
      expect(meta!.name).toBe(tokenName(rows[0]!.title));
    }
  }

  it('a listing write refused after the mint: 503 with the listing id; after a restart the listing exists with that token', async () => {
    const carol = await user(t);
    const restore = await failWrites(t.ctx.db, 'listings', 'INSERT');
    let res: request.Response;
    try {
      res = await request(app).post(`${API}/listings`).set(carol.headers).send(listingBody({ title: 'Refused after the mint' }));
    } finally {
      await restore();
    }
    expectProblem(res, 503, 'service-unavailable');
    const id = res.body.listing_id as string;
    const mint = listingMintKeypair(chain.service, id).publicKey;
    expect(res.body.token_mint_address).toBe(mint.toBase58());
    expect((await getMint(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID)).supply).toBe(1n);

    const b = instance();
    const started = performance.now();
    await startAlone(b);
    console.info(`[timing] restart with one minted-but-unstored listing: start-up recovery ${Math.round(performance.now() - started)} ms`);
    const got = await request(b).get(`${API}/listings/${id}`).set(carol.headers);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.token_mint_address).toBe(mint.toBase58());
    const tx = await chain.connection.getTransaction(got.body.mint_transaction.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(tx?.slot).toBe(got.body.mint_transaction.slot);
    await expectNoOrphans(carol.wallet);
  });

  it('a crash after the on-chain rename, before the title is stored: a restart puts the on-chain name back', async () => {
    const dave = await user(t);
    const created = await request(app).post(`${API}/listings`).set(dave.headers).send(listingBody({ title: 'Named on chain' }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const crashing = instance({
      afterTokenUpdate: () => {
        throw new Error('simulated crash');
      },
    });
    const res = await request(crashing).patch(`${API}/listings/${created.body.listing_id}`).set(dave.headers).send({ title: 'Renamed then crashed' });
    expect(res.status).toBe(500);
    const mint = new PublicKey(created.body.token_mint_address);
    expect((await getTokenMetadata(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID))!.name).toBe('Renamed then crashed');

    const started = performance.now();
    await startAlone(instance());
    console.info(`[timing] restart with one landed-but-unstored rename: start-up recovery ${Math.round(performance.now() - started)} ms`);
    expect((await getTokenMetadata(chain.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID))!.name).toBe('Named on chain');
    await expectNoOrphans(dave.wallet);
  });
});
