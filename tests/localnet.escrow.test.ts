/**
 * End-to-end: the escrow program's whole lifecycle through @coral-xyz/anchor and @solana/web3.js
 * against bazaar-localnet (programs/localnet), plus RPC-level robustness checks.
 *
 * Amounts are base units of a 6-decimal SPL mint; times are unix seconds.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnchorError, AnchorProvider, BN, Program, type Idl } from '@coral-xyz/anchor';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createMint,
  getAccount,
  getAssociatedTokenAddressSync,
  getOrCreateAssociatedTokenAccount,
  mintTo,
} from '@solana/spl-token';
import { startLocalnet, type Localnet } from './helpers/localnet';

const idlPath = fileURLToPath(new URL('../programs/escrow/idl/escrow.json', import.meta.url));
const haveIdl = existsSync(idlPath);

/** Minimal Anchor wallet over a Keypair (anchor's NodeWallet is not exported from its ESM build). */
function keypairWallet(kp: Keypair) {
  const sign = <T extends Transaction | VersionedTransaction>(tx: T): T => {
    if (tx instanceof VersionedTransaction) tx.sign([kp]);
    else tx.partialSign(kp);
    return tx;
  };
  return {
    publicKey: kp.publicKey,
    payer: kp,
    signTransaction: async <T extends Transaction | VersionedTransaction>(tx: T) => sign(tx),
    signAllTransactions: async <T extends Transaction | VersionedTransaction>(txs: T[]) => txs.map(sign),
  };
}

async function rawRpc(url: string, body: string): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return res.json();
}

let net: Localnet;
let connection: Connection;
/** The escrow's upgrade authority on this localnet, hence the only key that can initialise its config. */
const admin = Keypair.generate();

beforeAll(async () => {
  net = await startLocalnet({ escrowUpgradeAuthority: admin.publicKey.toBase58() });
  connection = new Connection(net.rpcUrl, { commitment: 'confirmed', wsEndpoint: net.wsUrl });
}, 900_000);

afterAll(async () => {
  await net?.stop();
});

/**
 * Resolves once the node acknowledged a websocket subscription of each method (its subscription id
 * arrived). web3.js keeps that state internally (`_subscriptionsByHash`) and exposes no event for it.
 */
async function subscribed(c: Connection, methods: string[]) {
  const subs = () => Object.values((c as unknown as { _subscriptionsByHash: Record<string, { method: string; state: string }> })._subscriptionsByHash);
  await expect
    .poll(() => methods.every((m) => subs().some((s) => s.method === m && s.state === 'subscribed')), { interval: 5, timeout: 5_000 })
    .toBe(true);
}

async function airdrop(to: PublicKey, sol = 10) {
  const sig = await connection.requestAirdrop(to, sol * LAMPORTS_PER_SOL);
  const bh = await connection.getLatestBlockhash();
  await connection.confirmTransaction({ signature: sig, ...bh });
}

describe('localnet RPC', () => {
  it('serves the basics web3.js needs', async () => {
    const version = await connection.getVersion();
    expect(version['solana-core']).toMatch(/^2\./);
    const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
    expect(blockhash.length).toBeGreaterThan(30);
    expect(lastValidBlockHeight).toBeGreaterThan(await connection.getBlockHeight());
    expect(await connection.isBlockhashValid(blockhash)).toMatchObject({ value: true });
    expect(await connection.getMinimumBalanceForRentExemption(165)).toBe(2_039_280);
    expect(typeof (await connection.getGenesisHash())).toBe('string');
    // slots move with time (one per 400 ms): the epoch info's slot is between two reads of it
    const slotBefore = await connection.getSlot();
    const epoch = await connection.getEpochInfo();
    const slotAfter = await connection.getSlot();
    expect(epoch.absoluteSlot).toBeGreaterThanOrEqual(slotBefore);
    expect(epoch.absoluteSlot).toBeLessThanOrEqual(slotAfter);
  });

  it('airdrops, transfers and indexes transactions', async () => {
    const a = Keypair.generate();
    const b = Keypair.generate();
    await airdrop(a.publicKey, 2);
    expect(await connection.getBalance(a.publicKey)).toBe(2 * LAMPORTS_PER_SOL);
    const tx = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: b.publicKey, lamports: 10_000_000 }),
    );
    const sig = await connection.sendTransaction(tx, [a]);
    const bh = await connection.getLatestBlockhash();
    const conf = await connection.confirmTransaction({ signature: sig, ...bh }, 'confirmed');
    expect(conf.value.err).toBeNull();
    expect(await connection.getBalance(b.publicKey)).toBe(10_000_000);
    const status = await connection.getSignatureStatus(sig, { searchTransactionHistory: true });
    expect(status.value?.confirmationStatus).toBe('finalized');
    const got = await connection.getTransaction(sig, { maxSupportedTransactionVersion: 0 });
    expect(got?.meta?.fee).toBe(5000);
    expect(got?.meta?.postBalances[1]).toBe(10_000_000);
    const sigs = await connection.getSignaturesForAddress(b.publicKey);
    expect(sigs.map((s) => s.signature)).toEqual([sig]);
  });

  it('simulates, prices and runs v0 transactions', async () => {
    const payer = Keypair.generate();
    await airdrop(payer.publicKey, 2);
    const { blockhash } = await connection.getLatestBlockhash();
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: LAMPORTS_PER_SOL / 10 })],
    }).compileToV0Message();
    expect((await connection.getFeeForMessage(message)).value).toBe(5000);
    const vtx = new VersionedTransaction(message);
    vtx.sign([payer]);
    const sim = await connection.simulateTransaction(vtx, { sigVerify: true });
    expect(sim.value.err).toBeNull();
    expect(sim.value.logs?.[0]).toMatch(/^Program 11111111111111111111111111111111 invoke \[1\]$/);
    expect(sim.value.unitsConsumed).toBeGreaterThan(0);
    const sig = await connection.sendTransaction(vtx);
    const got = await connection.getTransaction(sig, { maxSupportedTransactionVersion: 0 });
    expect(got?.version).toBe(0);
    expect(got?.meta?.err).toBeNull();
  });

  it('rejects a failing transaction at preflight with logs (-32002)', async () => {
    const poor = Keypair.generate();
    await airdrop(poor.publicKey, 1);
    const tx = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: poor.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5 * LAMPORTS_PER_SOL }),
    );
    const err = await connection.sendTransaction(tx, [poor]).catch((e) => e);
    expect(err?.constructor?.name).toBe('SendTransactionError');
    expect(err.message).toMatch(/Transaction simulation failed/);
    expect((err.logs ?? []).join('\n')).toMatch(/insufficient lamports/);
  });

  it('answers malformed requests with JSON-RPC errors and keeps serving', async () => {
    expect((await rawRpc(net.rpcUrl, '{not json')).error.code).toBe(-32700);
    expect((await rawRpc(net.rpcUrl, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'noSuchMethod' }))).error.code).toBe(-32601);
    expect((await rawRpc(net.rpcUrl, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'getBalance', params: ['nope'] }))).error.code).toBe(-32602);
    const badTx = await rawRpc(
      net.rpcUrl,
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'sendTransaction', params: ['%%%', { encoding: 'base64' }] }),
    );
    expect(badTx.error.code).toBe(-32602);
    const garbageTx = await rawRpc(
      net.rpcUrl,
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'sendTransaction', params: [randomBytes(80).toString('base64'), { encoding: 'base64' }] }),
    );
    expect(garbageTx.error.code).toBe(-32602);
    const batch = await rawRpc(net.rpcUrl, JSON.stringify([{ jsonrpc: '2.0', id: 5, method: 'getHealth' }, 42]));
    expect(batch[0].result).toBe('ok');
    expect(batch[1].error.code).toBe(-32600);
    expect(await connection.getSlot()).toBeGreaterThan(0);
  });

  it('advances the clock; a warp past a blockhash lifetime (150 blocks, 60 s) expires the blockhashes handed out before it', async () => {
    const before = await net.getClock();
    const old = await connection.getLatestBlockhash();
    await net.advanceClock(3600);
    const after = await net.getClock();
    expect(after.unix_timestamp - before.unix_timestamp).toBeGreaterThanOrEqual(3600);
    expect(after.slot - before.slot).toBeGreaterThanOrEqual(9000);
    expect(await connection.getBlockHeight()).toBeGreaterThan(old.lastValidBlockHeight);
    expect(await connection.isBlockhashValid(old.blockhash)).toMatchObject({ value: false });
    // web3.js reuses a blockhash it fetched in the last 30 s for sendTransaction(tx, signers), and
    // the warp expired it: continue on a new connection. Fresh blockhashes work.
    connection = new Connection(net.rpcUrl, { commitment: 'confirmed', wsEndpoint: net.wsUrl });
    await airdrop(Keypair.generate().publicKey, 1);
  });
});

describe.skipIf(!haveIdl)('escrow lifecycle on the localnet', () => {
  const FEE_BPS = 250;
  const REVIEW_WINDOW = 3600;
  const AMOUNT = 10_000_000; // 10 units of a 6-decimal mint
  const platform = Keypair.generate();
  const arbiter = Keypair.generate();
  const treasury = Keypair.generate();
  const buyer = Keypair.generate();
  const seller = Keypair.generate();
  let program: Program;
  let mint: PublicKey;
  let configPda: PublicKey;
  let buyerAta: PublicKey;
  let sellerAta: PublicKey;
  let treasuryAta: PublicKey;

  const balance = async (ata: PublicKey) => Number((await getAccount(connection, ata)).amount);
  const orderPda = (id: Buffer) => PublicKey.findProgramAddressSync([Buffer.from('order'), id], program.programId)[0];

  async function fund(id: Buffer, deadlineIn = 86_400) {
    const { unix_timestamp } = await net.getClock();
    const order = orderPda(id);
    await program.methods
      .fund([...id], new BN(AMOUNT), new BN(unix_timestamp + deadlineIn), new BN(REVIEW_WINDOW), new BN(unix_timestamp + 900))
      .accountsPartial({
        buyer: buyer.publicKey,
        platformAuthority: platform.publicKey,
        seller: seller.publicKey,
        config: configPda,
        order,
        mint,
        buyerTokenAccount: buyerAta,
        vault: getAssociatedTokenAddressSync(mint, order, true),
        tokenProgram: TOKEN_PROGRAM_ID,
        associatedTokenProgram: ASSOCIATED_TOKEN_PROGRAM_ID,
        systemProgram: SystemProgram.programId,
      })
      .signers([buyer, platform])
      .rpc();
    return order;
  }

  const payoutAccounts = (order: PublicKey) => ({
    config: configPda,
    order,
    mint,
    vault: getAssociatedTokenAddressSync(mint, order, true),
    sellerTokenAccount: sellerAta,
    treasuryTokenAccount: treasuryAta,
    rentPayer: buyer.publicKey,
    tokenProgram: TOKEN_PROGRAM_ID,
  });

  beforeAll(async () => {
    const idl = (await import('@bazaar/escrow-idl')).default as unknown as Idl;
    for (const kp of [admin, buyer, seller, platform, arbiter]) await airdrop(kp.publicKey, 10);
    const provider = new AnchorProvider(connection, keypairWallet(admin), { commitment: 'confirmed' });
    program = new Program(idl, provider);
    configPda = PublicKey.findProgramAddressSync([Buffer.from('config')], program.programId)[0];
    mint = await createMint(connection, admin, admin.publicKey, null, 6);
    buyerAta = (await getOrCreateAssociatedTokenAccount(connection, admin, mint, buyer.publicKey)).address;
    sellerAta = (await getOrCreateAssociatedTokenAccount(connection, admin, mint, seller.publicKey)).address;
    treasuryAta = (await getOrCreateAssociatedTokenAccount(connection, admin, mint, treasury.publicKey)).address;
    await mintTo(connection, admin, mint, buyerAta, admin, 100 * AMOUNT);
  }, 120_000);

  it('initializes the config: only the upgrade authority may (Anchor resolves the ProgramData account from the IDL)', async () => {
    const args = {
      platformAuthority: platform.publicKey,
      arbiter: arbiter.publicKey,
      treasury: treasury.publicKey,
      feeBps: FEE_BPS,
      defaultReviewWindow: new BN(REVIEW_WINDOW),
      maxReviewWindow: new BN(30 * 86_400),
      maxDeliveryWindow: new BN(366 * 86_400),
      allowedMints: [mint],
    };
    const intruder = Keypair.generate();
    await airdrop(intruder.publicKey, 1);
    const refused = await program.methods
      .initializeConfig(args)
      .accountsPartial({ admin: intruder.publicKey, config: configPda, systemProgram: SystemProgram.programId })
      .signers([intruder])
      .rpc()
      .catch((e) => e);
    expect(refused).toBeInstanceOf(AnchorError);
    expect((refused as AnchorError).error.errorCode.code).toBe('NotUpgradeAuthority');
    expect(await connection.getAccountInfo(configPda)).toBeNull();

    await program.methods
      .initializeConfig(args)
      .accountsPartial({ admin: admin.publicKey, config: configPda, systemProgram: SystemProgram.programId })
      .rpc();
    const cfg: any = await (program.account as any).config.fetch(configPda);
    expect(cfg.feeBps).toBe(FEE_BPS);
    expect(cfg.platformAuthority.toBase58()).toBe(platform.publicKey.toBase58());
  });

  it('funds, delivers and releases: seller gets amount - fee, treasury the fee', async () => {
    const id = randomBytes(16);
    const buyerBefore = await balance(buyerAta);
    const order = await fund(id);
    expect(await balance(getAssociatedTokenAddressSync(mint, order, true))).toBe(AMOUNT);
    expect(await balance(buyerAta)).toBe(buyerBefore - AMOUNT);
    const o: any = await (program.account as any).order.fetch(order);
    expect(o.amount.toNumber()).toBe(AMOUNT);

    await program.methods
      .markDelivered()
      .accountsPartial({ authority: seller.publicKey, config: configPda, order })
      .signers([seller])
      .rpc();

    const [sellerBefore, treasuryBefore] = [await balance(sellerAta), await balance(treasuryAta)];
    const sig = await program.methods
      .release()
      .accountsPartial({ authority: buyer.publicKey, ...payoutAccounts(order) })
      .signers([buyer])
      .rpc();
    const fee = Math.floor((AMOUNT * FEE_BPS) / 10_000);
    expect(await balance(sellerAta)).toBe(sellerBefore + AMOUNT - fee);
    expect(await balance(treasuryAta)).toBe(treasuryBefore + fee);
    expect(await connection.getAccountInfo(order)).toBeNull();

    // The transaction is indexed with token balances and logs.
    const tx = await connection.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(tx?.meta?.err).toBeNull();
    expect(tx?.meta?.logMessages?.join('\n')).toMatch(/Instruction: Release/);
    expect(tx?.meta?.postTokenBalances?.length).toBeGreaterThan(0);
    // CPIs (vault -> seller, vault -> treasury, close vault) are reported as inner instructions.
    const parsedTx = await connection.getParsedTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const inner = parsedTx?.meta?.innerInstructions?.[0]?.instructions ?? [];
    expect(inner.filter((ix) => ix.programId.equals(TOKEN_PROGRAM_ID)).length).toBeGreaterThanOrEqual(2);
    const sigs = await connection.getSignaturesForAddress(order);
    expect(sigs[0].signature).toBe(sig);
    const owned = await connection.getTokenAccountsByOwner(seller.publicKey, { mint });
    expect(owned.value.map((a) => a.pubkey.toBase58())).toContain(sellerAta.toBase58());
  });

  it('resolves a dispute with a split decided by the arbiter', async () => {
    const order = await fund(randomBytes(16));
    // Anchor event listener (logsSubscribe) and an account subscription on the buyer's ATA.
    const events: any[] = [];
    const listener = program.addEventListener('disputeResolved', (e) => events.push(e));
    const accountUpdates: number[] = [];
    const accSub = connection.onAccountChange(buyerAta, (info) => accountUpdates.push(info.data.length), { commitment: 'confirmed' });
    await subscribed(connection, ['logsSubscribe', 'accountSubscribe']); // the node acknowledged both
    await program.methods
      .openDispute()
      .accountsPartial({ authority: buyer.publicKey, config: configPda, order })
      .signers([buyer])
      .rpc();
    const before = await Promise.all([buyerAta, sellerAta, treasuryAta].map(balance));
    await program.methods
      .resolveDispute(4_000)
      .accountsPartial({ arbiter: arbiter.publicKey, buyerTokenAccount: buyerAta, ...payoutAccounts(order) })
      .signers([arbiter])
      .rpc();
    const after = await Promise.all([buyerAta, sellerAta, treasuryAta].map(balance));
    const toBuyer = (AMOUNT * 4_000) / 10_000;
    const fee = Math.floor(((AMOUNT - toBuyer) * FEE_BPS) / 10_000);
    expect(after[0] - before[0]).toBe(toBuyer);
    expect(after[1] - before[1]).toBe(AMOUNT - toBuyer - fee);
    expect(after[2] - before[2]).toBe(fee);
    await expect.poll(() => events.length, { timeout: 5_000 }).toBe(1);
    expect(events[0].buyerBps).toBe(4_000);
    await expect.poll(() => accountUpdates.length, { timeout: 5_000 }).toBeGreaterThan(0);
    expect(accountUpdates[0]).toBe(165);
    await program.removeEventListener(listener);
    await connection.removeAccountChangeListener(accSub);
  });

  it('lets anyone claim after the review window once the clock has advanced', async () => {
    const order = await fund(randomBytes(16));
    await program.methods
      .markDelivered()
      .accountsPartial({ authority: platform.publicKey, config: configPda, order })
      .signers([platform])
      .rpc();
    const stranger = Keypair.generate();
    await airdrop(stranger.publicKey, 1);
    const claim = () =>
      program.methods
        .claim()
        .accountsPartial({ payer: stranger.publicKey, ...payoutAccounts(order) })
        .signers([stranger])
        .rpc();
    const early = await claim().catch((e) => e);
    expect(early).toBeInstanceOf(AnchorError);
    expect((early as AnchorError).error.errorCode.code).toBe('ReviewWindowNotElapsed');

    await net.advanceClock(REVIEW_WINDOW + 1);
    const sellerBefore = await balance(sellerAta);
    await claim();
    const fee = Math.floor((AMOUNT * FEE_BPS) / 10_000);
    expect(await balance(sellerAta)).toBe(sellerBefore + AMOUNT - fee);
  });

  it('funds an order whose vault someone created first (issue 20 item 10: the vault is accepted as the order PDA\'s ATA)', async () => {
    // The order id is known before funding (it is in the Solana Pay link, the order API): anyone can
    // derive the order PDA and create its associated token account first, and put tokens in it.
    const id = randomBytes(16);
    const order = orderPda(id);
    const vault = getAssociatedTokenAddressSync(mint, order, true);
    const mallory = Keypair.generate();
    await airdrop(mallory.publicKey, 1);
    const front = new Transaction().add(
      createAssociatedTokenAccountIdempotentInstruction(mallory.publicKey, vault, order, mint),
    );
    // a fresh Connection: web3.js reuses a blockhash fetched in the last 30 s, which the claim test's warp expired
    const fresh = new Connection(net.rpcUrl, { commitment: 'confirmed' });
    await fresh.sendTransaction(front, [mallory]).then((sig) => fresh.confirmTransaction(sig, 'confirmed'));
    expect(await balance(vault)).toBe(0);
    await mintTo(fresh, admin, mint, vault, admin, 3);

    await fund(id);
    expect(await balance(vault)).toBe(AMOUNT + 3);
    const [sellerBefore, treasuryBefore] = [await balance(sellerAta), await balance(treasuryAta)];
    await program.methods
      .release()
      .accountsPartial({ authority: buyer.publicKey, ...payoutAccounts(order) })
      .signers([buyer])
      .rpc();
    const fee = Math.floor((AMOUNT * FEE_BPS) / 10_000);
    expect(await balance(sellerAta)).toBe(sellerBefore + AMOUNT - fee);
    expect(await balance(treasuryAta)).toBe(treasuryBefore + fee + 3); // the stray tokens are swept
    expect(await connection.getAccountInfo(vault)).toBeNull();
  });

  it('refuses a release signed by someone who is neither buyer nor platform', async () => {
    const order = await fund(randomBytes(16));
    const mallory = Keypair.generate();
    await airdrop(mallory.publicKey, 1);
    const err = await program.methods
      .release()
      .accountsPartial({ authority: mallory.publicKey, ...payoutAccounts(order) })
      .signers([mallory])
      .rpc()
      .catch((e) => e);
    expect(err).toBeInstanceOf(AnchorError);
    expect((err as AnchorError).error.errorCode.code).toBe('NotBuyerOrPlatform');
    expect(await balance(getAssociatedTokenAddressSync(mint, order, true))).toBe(AMOUNT);
    // The order is still open and discoverable through getProgramAccounts (memcmp on the discriminator).
    const open: any[] = await (program.account as any).order.all();
    expect(open.map((o) => o.publicKey.toBase58())).toContain(order.toBase58());
  });
});
