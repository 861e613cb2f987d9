/**
 * The escrow client against the real program on a localnet: the dev bootstrap prepares keys, the
 * test USDC mint and the escrow config; Alice (buyer) pays Bob (seller) through the escrow.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcCall, startLocalnet } from './helpers/localnet';
import { decodeFundTransaction } from './helpers/decode-fund-tx.js';
import { createChain, type ChainClient } from '../server/src/chain/index';
import {
  adminPublicKeyFor,
  bootstrapLocalnet,
  ensureSol,
  loadOrCreateKeypair,
  migrateEscrowAccounts,
  mintTestUsdc,
  type BootstrapResult,
} from '../server/scripts/bootstrap-localnet';

let localnet: Awaited<ReturnType<typeof startLocalnet>>;
let dataDir: string;
let boot: BootstrapResult;
let chain: ChainClient;
const alice = Keypair.generate(); // buyer
const bob = Keypair.generate(); // seller
const DAY = 86_400;
const USDC = (n: number) => BigInt(Math.round(n * 1e6));

async function tokenBalance(owner: PublicKey, mint: PublicKey): Promise<bigint> {
  const ata = getAssociatedTokenAddressSync(mint, owner, true, TOKEN_PROGRAM_ID);
  return getAccount(chain.connection, ata, 'confirmed', TOKEN_PROGRAM_ID).then((a) => a.amount, () => 0n);
}

/** Build the fund transaction, let the buyer sign it as a wallet would, and submit it. */
async function fund(orderId: string, mint: string, amount: bigint, opts: { deadline?: number; reviewWindow?: number; expiresAt?: number } = {}) {
  const now = await chain.escrow.chainNow();
  const built = await chain.escrow.buildFundTransaction({
    orderId,
    buyer: alice.publicKey.toBase58(),
    seller: bob.publicKey.toBase58(),
    mint,
    amount,
    deliveryDeadline: opts.deadline ?? now + 7 * DAY,
    reviewWindow: opts.reviewWindow ?? 0,
    expiresAt: opts.expiresAt ?? now + 900,
  });
  const tx = Transaction.from(Buffer.from(built.transaction, 'base64'));
  expect(tx.feePayer?.toBase58()).toBe(alice.publicKey.toBase58());
  tx.partialSign(alice);
  const res = await chain.escrow.submitSignedTransaction(tx.serialize().toString('base64'));
  return { built, res };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'bazaar-chain-'));
  localnet = await startLocalnet({ escrowUpgradeAuthority: adminPublicKeyFor(dataDir) });
  boot = await bootstrapLocalnet({ rpcUrl: localnet.rpcUrl, dataDir });
  console.info(`[timing] bootstrap (fresh): ${boot.ms} ms`);
  chain = createChain({
    rpcUrl: localnet.rpcUrl,
    serviceKeypair: loadOrCreateKeypair(dataDir, 'service'),
    programId: boot.programId,
    currencies: boot.currencies,
  });
  await Promise.all([
    ensureSol(chain.connection, alice.publicKey, BigInt(LAMPORTS_PER_SOL), 10 * LAMPORTS_PER_SOL),
    mintTestUsdc(dataDir, localnet.rpcUrl, alice.publicKey.toBase58(), USDC(100)),
  ]);
});

afterAll(async () => {
  await localnet?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('dev bootstrap', () => {
  it('writes chain.json, keys with 0600 perms, and a config with the agreed terms', async () => {
    const file = JSON.parse(readFileSync(join(dataDir, 'chain.json'), 'utf8'));
    expect(file.programId).toBe('AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r');
    expect(file.currencies.map((c: { code: string }) => c.code)).toEqual(['USDC', 'SOL']);
    expect(file.currencies[1].mint).toBe(NATIVE_MINT.toBase58());
    for (const k of ['service', 'admin', 'treasury', 'usdc-mint-authority']) {
      expect(statSync(join(dataDir, 'keys', `${k}.json`)).mode & 0o777).toBe(0o600);
    }
    const cfg = await chain.escrow.fetchConfig();
    expect(cfg).toMatchObject({
      platformAuthority: file.servicePublicKey,
      arbiter: file.servicePublicKey,
      treasury: file.treasury,
      feeBps: 250,
      defaultReviewWindow: 3 * DAY,
      maxReviewWindow: 30 * DAY,
      maxDeliveryWindow: 366 * DAY,
      allowedMints: [file.usdcMint, NATIVE_MINT.toBase58()],
    });
    // the bootstrap's admin is the program's upgrade authority on this localnet
    expect(cfg?.admin).toBe(file.adminPublicKey);
  });

  it('is idempotent: a second run creates nothing', async () => {
    const again = await bootstrapLocalnet({ rpcUrl: localnet.rpcUrl, dataDir });
    console.info(`[timing] bootstrap (re-run): ${again.ms} ms`);
    expect(again.created).toEqual([]);
    expect(again.warnings).toEqual([]);
    expect(again.usdcMint).toBe(boot.usdcMint);
  });
});

describe('escrow lifecycle', () => {
  it('Alice funds, the service marks delivered and releases; Bob gets the amount minus the 2.5% fee', async () => {
    const usdc = new PublicKey(boot.usdcMint);
    const treasury = new PublicKey(boot.treasury);
    const treasuryBefore = await tokenBalance(treasury, usdc);
    const orderId = randomUUID();
    const { built, res } = await fund(orderId, boot.usdcMint, USDC(25));
    expect(res.slot).toBeGreaterThan(0);
    expect(built.escrowAddress).toBe(chain.escrow.addresses(orderId, boot.usdcMint).escrow);
    const terms = decodeFundTransaction(chain.escrow, built.transaction)!;
    expect(terms).toMatchObject({ orderId, amount: USDC(25), reviewWindow: 0 });
    expect(terms.expiresAt - (await chain.escrow.chainNow())).toBeGreaterThan(800);

    const order = await chain.escrow.fetchOrder(orderId);
    expect(order).toMatchObject({
      address: built.escrowAddress,
      orderId,
      buyer: alice.publicKey.toBase58(),
      seller: bob.publicKey.toBase58(),
      mint: boot.usdcMint,
      amount: USDC(25),
      feeBps: 250,
      treasury: boot.treasury,
      state: 'funded',
      deliveredAt: null,
      reviewWindow: 3 * DAY,
      rentPayer: alice.publicKey.toBase58(),
    });
    expect(await tokenBalance(new PublicKey(built.escrowAddress), usdc)).toBe(USDC(25));
    expect(await tokenBalance(alice.publicKey, usdc)).toBe(USDC(75));

    await chain.escrow.markDelivered(orderId);
    const delivered = await chain.escrow.fetchOrder(orderId);
    expect(delivered?.state).toBe('delivered');
    expect(delivered?.deliveredAt).toBeGreaterThan(0);

    const signed: string[] = [];
    const rel = await chain.escrow.release(orderId, { onSigned: (s) => void signed.push(s) });
    expect(signed).toEqual([rel.signature]);
    expect(await chain.escrow.fetchOrder(orderId)).toBeNull();
    expect(await chain.escrow.signatureStatus(rel.signature)).toBe('confirmed');

    const balances = await chain.getWalletBalances(bob.publicKey.toBase58(), boot.currencies);
    expect(balances.find((b) => b.currency === 'USDC')).toMatchObject({ amountBaseUnits: USDC(24.375), uiAmount: '24.375', decimals: 6 });
    expect(await tokenBalance(treasury, usdc)).toBe(treasuryBefore + USDC(0.625));
  });

  it('claim waits for the review window (ReviewWindowNotElapsed), then pays Bob once the clock has moved', async () => {
    const orderId = randomUUID();
    await fund(orderId, boot.usdcMint, USDC(10), { reviewWindow: 3_600 });
    await chain.escrow.markDelivered(orderId);
    await expect(chain.escrow.claim(orderId)).rejects.toMatchObject({
      slug: 'chain-transaction-failed',
      extensions: expect.objectContaining({ program_error: 'ReviewWindowNotElapsed' }),
    });
    const before = await tokenBalance(bob.publicKey, new PublicKey(boot.usdcMint));
    await localnet.advanceClock(3_601);
    await chain.escrow.claim(orderId);
    expect(await chain.escrow.fetchOrder(orderId)).toBeNull();
    expect(await tokenBalance(bob.publicKey, new PublicKey(boot.usdcMint))).toBe(before + USDC(9.75));
  });

  it('pays in SOL: the fund transaction wraps lamports; a dispute resolved 100% to the buyer returns them as wSOL', async () => {
    const orderId = randomUUID();
    const lamportsBefore = BigInt(await chain.connection.getBalance(alice.publicKey, 'confirmed'));
    await fund(orderId, NATIVE_MINT.toBase58(), 500_000_000n);
    expect((await chain.escrow.fetchOrder(orderId))?.amount).toBe(500_000_000n);
    const lamportsAfter = BigInt(await chain.connection.getBalance(alice.publicKey, 'confirmed'));
    expect(lamportsBefore - lamportsAfter).toBeGreaterThanOrEqual(500_000_000n);

    await chain.escrow.openDispute(orderId);
    expect((await chain.escrow.fetchOrder(orderId))?.state).toBe('disputed');
    await chain.escrow.resolveDispute(orderId, 10_000);
    expect(await chain.escrow.fetchOrder(orderId)).toBeNull();
    const lines = await chain.getWalletBalances(alice.publicKey.toBase58(), boot.currencies);
    // one name for wrapped SOL: the currency code GET /currencies gives its mint; the mint tells it from native SOL
    const solCode = boot.currencies.find((c) => c.mint === NATIVE_MINT.toBase58())!.code;
    expect(lines.find((b) => b.mint === NATIVE_MINT.toBase58())).toMatchObject({ currency: solCode, amountBaseUnits: 500_000_000n, uiAmount: '0.5' });
    expect(lines.filter((b) => b.currency === solCode).map((b) => b.mint)).toEqual([null, NATIVE_MINT.toBase58()]);
    expect(lines.every((b) => b.mint === null || boot.currencies.some((c) => c.code === b.currency && c.mint === b.mint))).toBe(true);
  });

  it('refund returns everything to the buyer', async () => {
    const orderId = randomUUID();
    const before = await tokenBalance(alice.publicKey, new PublicKey(boot.usdcMint));
    await fund(orderId, boot.usdcMint, USDC(5));
    await chain.escrow.refund(orderId);
    expect(await chain.escrow.fetchOrder(orderId)).toBeNull();
    expect(await tokenBalance(alice.publicKey, new PublicKey(boot.usdcMint))).toBe(before);
  });
});

describe('token accounts', () => {
  it('ensureAta creates a missing associated token account once (service pays), then reports it exists', async () => {
    const carol = Keypair.generate().publicKey.toBase58();
    const first = await chain.escrow.ensureAta(carol, boot.usdcMint);
    expect(first.created).toBe(true);
    expect(first.address).toBe(getAssociatedTokenAddressSync(new PublicKey(boot.usdcMint), new PublicKey(carol)).toBase58());
    const again = await chain.escrow.ensureAta(carol, boot.usdcMint);
    expect(again).toEqual({ address: first.address, created: false });
    const lines = await chain.getWalletBalances(carol, boot.currencies);
    expect(lines.map((l) => [l.currency, l.amountBaseUnits])).toEqual([['SOL', 0n], ['USDC', 0n]]);
  });
});

describe('error translation', () => {
  it('names the Anchor error of a rejected fund (deadline in the past)', async () => {
    const now = await chain.escrow.chainNow();
    await expect(fund(randomUUID(), boot.usdcMint, USDC(1), { deadline: now - 10 })).rejects.toMatchObject({
      slug: 'chain-transaction-failed',
      extensions: expect.objectContaining({ program_error: 'DeliveryDeadlineInPast' }),
    });
  });

  it('refuses co-signed fund terms once they expired (FundTermsExpired), whatever the blockhash', async () => {
    const now = await chain.escrow.chainNow();
    const orderId = randomUUID();
    const built = await chain.escrow.buildFundTransaction({
      orderId,
      buyer: alice.publicKey.toBase58(),
      seller: bob.publicKey.toBase58(),
      mint: boot.usdcMint,
      amount: USDC(1),
      deliveryDeadline: now + DAY,
      reviewWindow: 0,
      expiresAt: now + 30,
    });
    const tx = Transaction.from(Buffer.from(built.transaction, 'base64'));
    tx.partialSign(alice);
    // 31 s = 77 blocks: the blockhash (150 blocks) is still valid, the terms are not
    await localnet.advanceClock(31);
    await expect(chain.escrow.submitSignedTransaction(tx.serialize().toString('base64'))).rejects.toMatchObject({
      slug: 'chain-transaction-failed',
      extensions: expect.objectContaining({ program_error: 'FundTermsExpired' }),
    });
    expect(await chain.escrow.fetchOrder(orderId)).toBeNull();
  });

  it('reports a missing order account before sending', async () => {
    await expect(chain.escrow.markDelivered(randomUUID())).rejects.toMatchObject({
      slug: 'chain-transaction-failed',
      extensions: expect.objectContaining({ program_error: 'AccountNotInitialized' }),
    });
  });

  it('rejects a fund transaction the buyer has not signed', async () => {
    const built = await chain.escrow.buildFundTransaction({
      orderId: randomUUID(),
      buyer: alice.publicKey.toBase58(),
      seller: bob.publicKey.toBase58(),
      mint: boot.usdcMint,
      amount: USDC(1),
      deliveryDeadline: (await chain.escrow.chainNow()) + DAY,
      reviewWindow: 0,
      expiresAt: (await chain.escrow.chainNow()) + 900,
    });
    await expect(chain.escrow.submitSignedTransaction(built.transaction)).rejects.toMatchObject({
      slug: 'chain-transaction-failed',
      extensions: expect.objectContaining({ program_error: 'MissingSignature' }),
    });
  });

  it('a fund transaction\'s validUntil is its blockhash lifetime turned into time conservatively; blockhashExpired tells when it can no longer land', async () => {
    const heightBefore = await chain.connection.getBlockHeight('confirmed');
    const asked = Date.now();
    const built = await chain.escrow.buildFundTransaction({
      orderId: randomUUID(),
      buyer: alice.publicKey.toBase58(),
      seller: bob.publicKey.toBase58(),
      mint: boot.usdcMint,
      amount: USDC(1),
      deliveryDeadline: (await chain.escrow.chainNow()) + DAY,
      reviewWindow: 0,
      expiresAt: (await chain.escrow.chainNow()) + 900,
    });
    const done = Date.now();
    const blocksLeft = built.lastValidBlockHeight - heightBefore;
    expect(blocksLeft).toBeGreaterThan(0);
    // never later than the remaining blocks at the 400 ms slot target
    expect(built.validUntil.getTime()).toBeLessThanOrEqual(done + blocksLeft * 400);
    expect(built.validUntil.getTime()).toBeGreaterThan(asked);
    const lifetime = { blockhash: built.blockhash, lastValidBlockHeight: built.lastValidBlockHeight };
    expect(await chain.escrow.blockhashExpired(lifetime)).toBe(false);
    // the localnet's block height moves with time (a block per 400 ms), and by 2 per 1 s warp
    for (let i = 0; i <= blocksLeft && (await chain.connection.getBlockHeight('confirmed')) <= built.lastValidBlockHeight; i++) {
      await localnet.advanceClock(1);
    }
    expect(await chain.connection.getBlockHeight('confirmed')).toBeGreaterThan(built.lastValidBlockHeight);
    expect(await chain.escrow.blockhashExpired(lifetime)).toBe(true);
  });

  it('a fund transaction still lands at its validUntil after 1,000 RPC requests: the blockhash lives 150 blocks, not 150 requests (issue 9 item 9)', async () => {
    const orderId = randomUUID();
    const now = await chain.escrow.chainNow();
    const built = await chain.escrow.buildFundTransaction({
      orderId,
      buyer: alice.publicKey.toBase58(),
      seller: bob.publicKey.toBase58(),
      mint: boot.usdcMint,
      amount: USDC(1),
      deliveryDeadline: now + DAY,
      reviewWindow: 0,
      expiresAt: now + 900,
    });
    const tx = Transaction.from(Buffer.from(built.transaction, 'base64'));
    tx.partialSign(alice);
    // steady traffic while the buyer's wallet waits (other clients, status polling)
    for (let i = 0; i < 500; i++) {
      await chain.connection.getLatestBlockhash('confirmed');
      await chain.connection.getBlockHeight('confirmed');
    }
    // the chain moves on to the promised moment
    await localnet.advanceClock(Math.max(0, Math.floor((built.validUntil.getTime() - Date.now()) / 1000)));
    expect(await chain.escrow.blockhashExpired({ blockhash: built.blockhash, lastValidBlockHeight: built.lastValidBlockHeight })).toBe(false);
    await chain.escrow.submitSignedTransaction(tx.serialize().toString('base64'));
    expect(await chain.escrow.fetchOrder(orderId)).toMatchObject({ orderId, amount: USDC(1) });
  });

  it('answers chain-unavailable when the RPC port is closed', async () => {
    const dead = createChain({ rpcUrl: 'http://127.0.0.1:1', serviceKeypair: Keypair.generate(), currencies: boot.currencies });
    await expect(dead.getWalletBalances(alice.publicKey.toBase58(), boot.currencies)).rejects.toMatchObject({ slug: 'chain-unavailable' });
    await expect(dead.escrow.markDelivered(randomUUID())).rejects.toMatchObject({ slug: 'chain-unavailable' });
    await expect(dead.mintListingToken({ owner: bob.publicKey.toBase58(), name: 'x', symbol: 'X', uri: 'http://x' })).rejects.toMatchObject({
      slug: 'chain-unavailable',
    });
    expect(await dead.health()).toEqual({ ok: false });
    expect((await chain.health()).ok).toBe(true);
  });
});

describe('upgrade in place (issue 20 item 12): accounts of the previous layout are migrated by the upgrade authority and settle', () => {
  // Runs last: it rewrites the config. The program on the localnet is the current code; the accounts are
  // put back byte by byte in the previous release's layouts (localnet_setAccount), which is what the new
  // code finds after `solana program deploy` replaced the program in place.
  const setAccount = async (address: string, data: Buffer) => {
    const lamports = await chain.connection.getMinimumBalanceForRentExemption(data.length);
    await rpcCall(localnet.rpcUrl, 'localnet_setAccount', [address, { lamports, data: data.toString('base64'), owner: chain.escrow.programId.toBase58() }]);
  };
  /** The first release's config (programs/escrow/src/state/config.rs at 9c8bb43), 407 bytes, by hand. */
  const configV0 = (current: Buffer, cfg: NonNullable<Awaited<ReturnType<ChainClient['escrow']['fetchConfig']>>>) => {
    const parts = [current.subarray(0, 8)]; // discriminator of `Config`, unchanged
    for (const k of [cfg.admin, cfg.platformAuthority, cfg.arbiter, cfg.treasury]) parts.push(new PublicKey(k).toBuffer());
    const fee = Buffer.alloc(2);
    fee.writeUInt16LE(cfg.feeBps);
    const window = Buffer.alloc(8);
    window.writeBigInt64LE(BigInt(cfg.defaultReviewWindow));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(cfg.allowedMints.length);
    parts.push(fee, window, len, ...cfg.allowedMints.map((m) => new PublicKey(m).toBuffer()), Buffer.from([cfg.bump]));
    const out = Buffer.alloc(407);
    Buffer.concat(parts).copy(out);
    return out;
  };

  it('refuses them until migrated, migrates the config and every open order, and each order then settles', async () => {
    const admin = loadOrCreateKeypair(dataDir, 'admin');
    const usdc = new PublicKey(boot.usdcMint);
    const [funded, delivered, disputed] = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of [funded, delivered, disputed]) await fund(id, boot.usdcMint, USDC(2));
    await chain.escrow.markDelivered(delivered);
    await chain.escrow.openDispute(disputed);
    const cfg = (await chain.escrow.fetchConfig())!;
    expect(cfg.version).toBe(1);
    const configAddress = chain.escrow.configAddress();
    const configData = (await chain.connection.getAccountInfo(configAddress, 'confirmed'))!.data;
    expect(configData.length).toBe(424);
    await setAccount(configAddress.toBase58(), configV0(configData, cfg));
    const addresses = [funded, delivered, disputed].map((id) => chain.escrow.orderAddress(id).toBase58());
    for (const [i, address] of addresses.entries()) {
      const data = (await chain.connection.getAccountInfo(new PublicKey(address), 'confirmed'))!.data;
      expect(data.length).toBe(267); // version 2 (issue 24)
      if (i === 0) await setAccount(address, data.subarray(0, 236)); // the first release's order: no version byte
      else await setAccount(address, Buffer.concat([data.subarray(0, 236), Buffer.from([1])])); // version 1 (issue 20 until issue 24)
    }
    expect(await chain.escrow.legacyAccounts()).toEqual({ config: configAddress.toBase58(), orders: [...addresses].sort() });

    // The new code refuses the old accounts: an old order does not deserialize, an old config is not current.
    const order = chain.escrow.orderAddress(funded);
    const refused = await chain.escrow.program.methods
      .refund()
      .accountsPartial({
        authority: chain.escrow.service.publicKey,
        config: configAddress,
        order,
        mint: usdc,
        vault: getAssociatedTokenAddressSync(usdc, order, true),
        buyerTokenAccount: getAssociatedTokenAddressSync(usdc, alice.publicKey),
        rentPayer: alice.publicKey,
        tokenProgram: TOKEN_PROGRAM_ID,
      })
      .rpc()
      .catch((e: unknown) => e);
    expect((refused as { error?: { errorCode?: { code?: string } } }).error?.errorCode?.code).toBe('AccountDidNotDeserialize');
    const now = await chain.escrow.chainNow();
    await expect(
      chain.escrow.buildFundTransaction({
        orderId: randomUUID(),
        buyer: alice.publicKey.toBase58(),
        seller: bob.publicKey.toBase58(),
        mint: boot.usdcMint,
        amount: USDC(1),
        deliveryDeadline: now + DAY,
        reviewWindow: 0,
        expiresAt: now + 900,
      }).then(async (built) => {
        const tx = Transaction.from(Buffer.from(built.transaction, 'base64'));
        tx.partialSign(alice);
        return chain.escrow.submitSignedTransaction(tx.serialize().toString('base64'));
      }),
    ).rejects.toMatchObject({ extensions: expect.objectContaining({ program_error: 'AccountNotMigrated' }) });

    // Only the upgrade authority migrates; the first release's config needs the windows.
    await expect(chain.escrow.migrateConfig(chain.escrow.service, { maxReviewWindow: 30 * DAY, maxDeliveryWindow: 366 * DAY })).rejects.toMatchObject({
      extensions: expect.objectContaining({ program_error: 'NotUpgradeAuthority' }),
    });
    await expect(chain.escrow.migrateConfig(admin)).rejects.toMatchObject({
      extensions: expect.objectContaining({ program_error: 'MigrationValueMissing' }),
    });
    // the operator's command after an upgrade: npm run chain:bootstrap -- migrate <windows> (admin.json = upgrade authority)
    const migrated = await migrateEscrowAccounts(dataDir, localnet.rpcUrl, boot.programId, { maxReviewWindow: 30 * DAY, maxDeliveryWindow: 366 * DAY });
    expect(migrated).toEqual({ config: true, orders: [...addresses].sort() });
    expect(await chain.escrow.legacyAccounts()).toEqual({ config: null, orders: [] });
    expect(await chain.escrow.fetchConfig()).toEqual(cfg);
    expect((await chain.escrow.fetchOrder(delivered))?.state).toBe('delivered');
    // (not the same migrate_order again: within one block it would be the same transaction, AlreadyProcessed)
    await expect(chain.escrow.migrateConfig(admin, { maxReviewWindow: 20 * DAY })).rejects.toMatchObject({
      extensions: expect.objectContaining({ program_error: 'AccountAlreadyCurrent' }),
    });

    const before = await tokenBalance(alice.publicKey, usdc);
    await chain.escrow.refund(funded);
    await chain.escrow.release(delivered);
    await chain.escrow.resolveDispute(disputed, 5_000);
    for (const id of [funded, delivered, disputed]) expect(await chain.escrow.fetchOrder(id)).toBeNull();
    expect(await tokenBalance(alice.publicKey, usdc)).toBe(before + USDC(2) + USDC(1));
    await fund(randomUUID(), boot.usdcMint, USDC(1));
  });

  it('the dev bootstrap migrates a config a dev ledger kept from before the versioning (windows in the middle, 423 bytes)', async () => {
    const cfg = (await chain.escrow.fetchConfig())!;
    const configAddress = chain.escrow.configAddress();
    const current = (await chain.connection.getAccountInfo(configAddress, 'confirmed'))!.data;
    const v0 = configV0(current, cfg);
    const windows = Buffer.alloc(16);
    windows.writeBigInt64LE(BigInt(cfg.maxReviewWindow), 0);
    windows.writeBigInt64LE(BigInt(cfg.maxDeliveryWindow), 8);
    // admin..default_review_window (8 + 4*32 + 2 + 8 = 146 bytes), the windows, then the mints and bump
    const unreleased = Buffer.concat([v0.subarray(0, 146), windows, v0.subarray(146)]);
    expect(unreleased.length).toBe(423);
    await setAccount(configAddress.toBase58(), unreleased);
    // the current layout cannot read it (an error naming the config read, not a garbled config)
    await expect(chain.escrow.fetchConfig()).rejects.toThrow(/^reading the escrow config: /);
    const again = await bootstrapLocalnet({ rpcUrl: localnet.rpcUrl, dataDir });
    expect(again.created).toEqual(['escrow-config-migrated']);
    expect(await chain.escrow.fetchConfig()).toEqual(cfg);
  });
});
