/**
 * GET /api/v1/wallet/balances over HTTP against a real localnet: the caller's wallet read from the
 * chain (native SOL + configured currencies); deposit/withdraw answer 404 custody-disabled (the
 * service is non-custodial); an unreachable RPC answers 503 chain-unavailable.
 */
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrappedChain, Localnet } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app';
import { createChain, type ChainClient } from '../server/src/chain/index';
import { ensureSol, mintTestUsdc, type BootstrapResult } from '../server/scripts/bootstrap-localnet';

let localnet: Localnet;
let dataDir: string;
let boot: BootstrapResult;
let chain: ChainClient;
let env: BootstrappedChain;
let t: TestApp;
const alice = Keypair.generate();

beforeAll(async () => {
  env = await sharedBootstrappedChain('wallet');
  ({ localnet, dataDir, boot, chain } = env);
  t = await createTestApp({ chain, config: { currencies: boot.currencies, solanaRpcUrl: localnet.rpcUrl } });
});

afterAll(async () => {
  await t?.close();
  await env?.stop();
});

/** the explorer link of a mint on the test app's cluster (issue 26 item 4: every mint the API returns has one) */
const mintLink = (mint: string) => `https://explorer.solana.com/address/${mint}?cluster=custom&customUrl=${encodeURIComponent(localnet.rpcUrl)}`;

describe('GET /wallet/balances', () => {
  it('shows zero balances for a fresh wallet (no token accounts yet)', async () => {
    const me = await loginAs(t, Keypair.generate());
    const res = await t.request.get(`${API}/wallet/balances`).set(me.headers);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      wallet: me.wallet,
      balances: [
        { currency: 'SOL', mint: null, mint_explorer_url: null, amount_base_units: '0', decimals: 9, ui_amount: 0, source: 'chain' },
        { currency: 'USDC', mint: boot.usdcMint, mint_explorer_url: mintLink(boot.usdcMint), amount_base_units: '0', decimals: 6, ui_amount: 0, source: 'chain' },
      ],
    });
  });

  it('reads SOL and test USDC of the caller from the chain, exactly', async () => {
    await ensureSol(chain.connection, alice.publicKey, BigInt(LAMPORTS_PER_SOL), 2.5 * LAMPORTS_PER_SOL);
    await mintTestUsdc(dataDir, localnet.rpcUrl, alice.publicKey.toBase58(), 12_345_678n);
    const me = await loginAs(t, alice);
    const res = await t.request.get(`${API}/wallet/balances`).set(me.headers);
    expect(res.status).toBe(200);
    expect(res.body.wallet).toBe(alice.publicKey.toBase58());
    const by = Object.fromEntries(res.body.balances.map((b: { currency: string }) => [b.currency, b]));
    expect(by.SOL).toEqual({ currency: 'SOL', mint: null, mint_explorer_url: null, amount_base_units: '2500000000', decimals: 9, ui_amount: 2.5, source: 'chain' });
    expect(by.USDC).toEqual({ currency: 'USDC', mint: boot.usdcMint, mint_explorer_url: mintLink(boot.usdcMint), amount_base_units: '12345678', decimals: 6, ui_amount: 12.345678, source: 'chain' });
  });

  it('needs a credential', async () => {
    const res = await t.request.get(`${API}/wallet/balances`);
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  it('answers 503 chain-unavailable when the RPC cannot be reached', async () => {
    const dead = createChain({ rpcUrl: 'http://127.0.0.1:1', serviceKeypair: Keypair.generate(), currencies: boot.currencies });
    const down = await createTestApp({ chain: dead, config: { currencies: boot.currencies } });
    try {
      const me = await loginAs(down, Keypair.generate());
      const res = await down.request.get(`${API}/wallet/balances`).set(me.headers);
      expect(res.status).toBe(503);
      expect(res.body.type).toBe('https://bazaar.dev/problems/chain-unavailable');
    } finally {
      await down.close();
    }
  });
});

describe('custodial routes (custody disabled)', () => {
  it('deposit and withdraw answer 404 custody-disabled', async () => {
    const me = await loginAs(t, Keypair.generate());
    const dep = await t.request.post(`${API}/wallet/deposit`).set(me.headers).send({ currency: 'USDC' });
    expect(dep.status).toBe(404);
    expect(dep.body.type).toBe('https://bazaar.dev/problems/custody-disabled');
    const wd = await t.request
      .post(`${API}/wallet/withdraw`)
      .set({ ...me.headers, 'idempotency-key': 'wd-1' })
      .send({ currency: 'USDC', amount: 1, destination: alice.publicKey.toBase58() });
    expect(wd.status).toBe(404);
    expect(wd.body.type).toBe('https://bazaar.dev/problems/custody-disabled');
  });
});
