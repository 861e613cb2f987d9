/**
 * Issue 24 end to end on the localnet, through the service's chain client (server/src/chain/escrow.ts)
 * against the real escrow program: two milestones funded in ONE transaction with ONE buyer signature;
 * on milestone 1 a revision (the buyer's own wallet) then a delivery and a release; on milestone 2 an
 * accepted deadline extension, then a settlement proposed by the seller's wallet and accepted by the
 * buyer's wallet with the exact payout on chain (and read back by the settlement reader); an order of
 * the layout before milestones (version 1) migrated by the upgrade authority, then released.
 *
 * It also measures the figures programs/escrow/README.md states (printed as `[figures]`): the size in
 * bytes of each new instruction's transaction as built, and the rent of one milestone escrow (order
 * account + vault) at the rate this localnet's getMinimumBalanceForRentExemption returns.
 *
 * Amounts are base units of the 6-decimal test USDC; times unix seconds on the chain clock.
 */
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import { ACCOUNT_SIZE, TOKEN_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcCall, startBootstrappedChain, type BootstrappedChain } from './helpers/localnet';
import { ensureSol, loadOrCreateKeypair, mintTestUsdc } from '../server/scripts/bootstrap-localnet';
import { MAX_MILESTONES_PER_FUND_TRANSACTION, type MilestoneFundTerms, type PartyTransaction } from '../server/src/chain/escrow';

const DAY = 86_400;
const USDC = (n: number) => BigInt(Math.round(n * 1e6));
/** Solana's packet limit for a serialized transaction (bytes). */
const PACKET_DATA_SIZE = 1232;

let net: BootstrappedChain;
const alice = Keypair.generate(); // buyer
const bob = Keypair.generate(); // seller
const figures: Record<string, number> = {};

const escrow = () => net.chain.escrow;
async function balance(owner: PublicKey | string): Promise<bigint> {
  const ata = getAssociatedTokenAddressSync(new PublicKey(net.boot.usdcMint), new PublicKey(owner), true, TOKEN_PROGRAM_ID);
  return getAccount(net.chain.connection, ata, 'confirmed', TOKEN_PROGRAM_ID).then((a) => a.amount, () => 0n);
}

/** A party signs the unsigned transaction built for her wallet and submits it; records its size. */
async function signAndSend(built: PartyTransaction, signer: Keypair, figure: string) {
  const tx = Transaction.from(Buffer.from(built.transaction, 'base64'));
  expect(tx.feePayer?.toBase58()).toBe(signer.publicKey.toBase58());
  expect(tx.signatures.map((s) => s.publicKey.toBase58())).toEqual([signer.publicKey.toBase58()]);
  tx.sign(signer);
  const wire = tx.serialize();
  figures[figure] = wire.length;
  return escrow().submitSignedTransaction(wire.toString('base64'));
}

/** Terms of milestone `index`: `escrowId` the order id for milestone 1, a fresh UUID otherwise. */
async function milestone(escrowId: string, index: number, amount: bigint, revisions: number, deadlineIn = 7 * DAY): Promise<MilestoneFundTerms> {
  const now = await escrow().chainNow();
  return { escrowId, milestoneIndex: index, amount, deliveryDeadline: now + deadlineIn, reviewWindow: 0, revisionsIncluded: revisions };
}

beforeAll(async () => {
  net = await startBootstrappedChain('milestones');
  await Promise.all([
    ensureSol(net.chain.connection, alice.publicKey, BigInt(LAMPORTS_PER_SOL), 10 * LAMPORTS_PER_SOL),
    ensureSol(net.chain.connection, bob.publicKey, BigInt(LAMPORTS_PER_SOL), 10 * LAMPORTS_PER_SOL),
    mintTestUsdc(net.dataDir, net.localnet.rpcUrl, alice.publicKey.toBase58(), USDC(100)),
  ]);
  await escrow().ensureAta(bob.publicKey.toBase58(), net.boot.usdcMint);
}, 900_000);

afterAll(async () => {
  if (Object.keys(figures).length) console.info(`[figures] ${JSON.stringify(figures)}`);
  await net?.stop();
});

describe('milestones, revisions, extensions and settlement by agreement on the localnet', () => {
  const orderId = randomUUID();
  const second = randomUUID();
  let feeBps = 0;
  let treasury = '';

  it('funds two milestones in one transaction with one buyer signature', async () => {
    const cfg = (await escrow().fetchConfig())!;
    feeBps = cfg.feeBps;
    treasury = cfg.treasury;
    const now = await escrow().chainNow();
    const terms = {
      parentOrderId: orderId,
      buyer: alice.publicKey.toBase58(),
      seller: bob.publicKey.toBase58(),
      mint: net.boot.usdcMint,
      expiresAt: now + 900,
      milestones: [await milestone(orderId, 1, USDC(3), 1), await milestone(second, 2, USDC(1), 0, 14 * DAY)],
    };
    const before = await balance(alice.publicKey);
    // what the wallet needs, read from the RPC: the fee of this message + the rent of 2 escrows and 2 vaults
    const needs = await escrow().fundMilestonesNeeds(terms);
    const rent = (await net.chain.connection.getMinimumBalanceForRentExemption(escrow().orderAccountSize())) + (await net.chain.connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE));
    expect(needs.lamports).toBeGreaterThan(2n * BigInt(rent)); // + the network fee of the message
    expect(needs.tokenBalance).toBe(before);
    const lamportsBefore = BigInt(await net.chain.connection.getBalance(alice.publicKey, 'confirmed'));
    const built = await escrow().buildFundMilestonesTransaction(terms);
    const tx = Transaction.from(Buffer.from(built.transaction, 'base64'));
    // two fund_milestone instructions, two signers: the platform (signed) and the buyer (her one signature)
    expect(tx.instructions.filter((ix) => ix.programId.equals(escrow().programId))).toHaveLength(2);
    expect(tx.signatures.map((s) => [s.publicKey.toBase58(), s.signature !== null])).toEqual([
      [alice.publicKey.toBase58(), false],
      [escrow().service.publicKey.toBase58(), true],
    ]);
    tx.partialSign(alice);
    const wire = tx.serialize();
    figures.fund_milestone_x2 = wire.length;
    await escrow().submitSignedTransaction(wire.toString('base64'));

    expect(await balance(alice.publicKey)).toBe(before - USDC(4));
    expect(lamportsBefore - BigInt(await net.chain.connection.getBalance(alice.publicKey, 'confirmed'))).toBe(needs.lamports);
    expect(built.escrows.map((e) => e.escrowAddress)).toEqual([escrow().orderAddress(orderId).toBase58(), escrow().orderAddress(second).toBase58()]);
    const [m1, m2] = [await escrow().fetchOrder(orderId), await escrow().fetchOrder(second)];
    expect(m1).toMatchObject({ version: 2, orderId, parentOrderId: orderId, milestoneIndex: 1, revisionsIncluded: 1, revisionsUsed: 0, settlement: null, amount: USDC(3), state: 'funded' });
    expect(m2).toMatchObject({ version: 2, orderId: second, parentOrderId: orderId, milestoneIndex: 2, revisionsIncluded: 0, amount: USDC(1), deliveryDeadline: terms.milestones[1].deliveryDeadline });
    expect(await escrow().tokenBalance(built.escrows[1].vaultAddress)).toBe(USDC(1));
  });

  it('measures the fund transaction per number of milestones: flat per milestone, and where the packet ends', async () => {
    const now = await escrow().chainNow();
    const base = { parentOrderId: randomUUID(), buyer: alice.publicKey.toBase58(), seller: bob.publicKey.toBase58(), mint: net.boot.usdcMint, expiresAt: now + 900 };
    const sizes: number[] = [];
    for (let n = 1; n <= MAX_MILESTONES_PER_FUND_TRANSACTION + 1; n++) {
      const ms = await Promise.all(Array.from({ length: n }, (_, i) => milestone(i === 0 ? base.parentOrderId : randomUUID(), i + 1, USDC(1), 0)));
      const ixs = await Promise.all(ms.map((m) => escrow().fundMilestoneInstruction({ ...base, milestone: m })));
      const tx = new Transaction({ feePayer: alice.publicKey, blockhash: PublicKey.default.toBase58(), lastValidBlockHeight: 0 }).add(...ixs.map((i) => i.instruction));
      // wire size = signature count (compact-u16, 1 byte) + 64 per signature + the message
      const size = 1 + 64 * 2 + tx.compileMessage().serialize().length;
      sizes.push(size);
      figures[`fund_milestone_x${n}`] = size;
    }
    const steps = sizes.slice(1).map((s, i) => s - sizes[i]);
    expect(new Set(steps).size).toBe(1); // every milestone adds the same number of bytes
    figures.fund_milestone_per_additional = steps[0];
    expect(sizes[MAX_MILESTONES_PER_FUND_TRANSACTION - 1]).toBeLessThanOrEqual(PACKET_DATA_SIZE);
    expect(sizes[MAX_MILESTONES_PER_FUND_TRANSACTION]).toBeGreaterThan(PACKET_DATA_SIZE);
    await expect(
      escrow().buildFundMilestonesTransaction({
        ...base,
        milestones: await Promise.all(Array.from({ length: MAX_MILESTONES_PER_FUND_TRANSACTION + 1 }, (_, i) => milestone(randomUUID(), i + 2, USDC(1), 0))),
      }),
    ).rejects.toThrow(TypeError);
  });

  it('measures the sponsored fund transaction (issue 26: a fee sponsor as fee payer and rent_payer): 4 milestones still fit a packet', async () => {
    const now = await escrow().chainNow();
    const sponsor = Keypair.generate().publicKey;
    const base = { parentOrderId: randomUUID(), buyer: alice.publicKey.toBase58(), seller: bob.publicKey.toBase58(), mint: net.boot.usdcMint, expiresAt: now + 900, rentPayer: sponsor.toBase58() };
    const sizes: number[] = [];
    for (let n = 1; n <= MAX_MILESTONES_PER_FUND_TRANSACTION + 1; n++) {
      const ms = await Promise.all(Array.from({ length: n }, (_, i) => milestone(i === 0 ? base.parentOrderId : randomUUID(), i + 1, USDC(1), 0)));
      const ixs = await Promise.all(ms.map((m) => escrow().fundMilestoneInstruction({ ...base, milestone: m })));
      for (const { instruction } of ixs) {
        const payer = instruction.keys.find((k) => k.pubkey.equals(sponsor));
        expect(payer).toMatchObject({ isSigner: true, isWritable: true });
        expect(instruction.keys.find((k) => k.pubkey.equals(alice.publicKey))).toMatchObject({ isSigner: true, isWritable: false });
      }
      const tx = new Transaction({ feePayer: sponsor, blockhash: PublicKey.default.toBase58(), lastValidBlockHeight: 0 }).add(...ixs.map((i) => i.instruction));
      // three signatures: sponsor (fee payer), platform authority, buyer
      const size = 1 + 64 * 3 + tx.compileMessage().serialize().length;
      sizes.push(size);
      figures[`sponsored_fund_milestone_x${n}`] = size;
    }
    expect(sizes[MAX_MILESTONES_PER_FUND_TRANSACTION - 1]).toBeLessThanOrEqual(PACKET_DATA_SIZE);
    expect(sizes[MAX_MILESTONES_PER_FUND_TRANSACTION]).toBeGreaterThan(PACKET_DATA_SIZE);
  });

  it('milestone 1: a revision from the buyer\'s wallet sends the work back and moves the deadline, then delivery and release', async () => {
    await escrow().markDelivered(orderId);
    const delivered = (await escrow().fetchOrder(orderId))!;
    expect(delivered.state).toBe('delivered');
    const leftAtDelivery = delivered.deliveryDeadline - delivered.deliveredAt!;
    await net.localnet.advanceClock(3600);
    const now = await escrow().chainNow();
    await signAndSend(await escrow().buildPartyTransaction('request_revision', orderId, alice.publicKey.toBase58()), alice, 'request_revision');
    const revised = (await escrow().fetchOrder(orderId))!;
    expect(revised).toMatchObject({ state: 'funded', deliveredAt: null, revisionsUsed: 1 });
    // the seller gets back the time left at delivery (at least a day), counted from the request
    expect(revised.deliveryDeadline).toBeGreaterThanOrEqual(now + Math.max(leftAtDelivery, DAY));
    expect(revised.deliveryDeadline).toBeLessThanOrEqual((await escrow().chainNow()) + Math.max(leftAtDelivery, DAY));
    // the included revision is used up
    await escrow().markDelivered(orderId);
    await expect(escrow().requestRevision(orderId)).rejects.toMatchObject({ extensions: expect.objectContaining({ program_error: 'RevisionLimitReached' }) });

    const sellerBefore = await balance(bob.publicKey);
    await escrow().release(orderId);
    const fee = (USDC(3) * BigInt(feeBps)) / 10_000n;
    expect(await balance(bob.publicKey)).toBe(sellerBefore + USDC(3) - fee);
    expect(await escrow().fetchOrder(orderId)).toBeNull();
    // milestone 2 is untouched
    expect((await escrow().fetchOrder(second))?.state).toBe('funded');
  });

  it('milestone 2: an accepted extension moves the deadline; a withdrawn proposal cannot be accepted', async () => {
    const before = (await escrow().fetchOrder(second))!;
    const later = before.deliveryDeadline + 3 * DAY;
    await signAndSend(await escrow().buildPartyTransaction('extend_deadline', second, alice.publicKey.toBase58(), { newDeadline: later }), alice, 'extend_deadline');
    expect((await escrow().fetchOrder(second))?.deliveryDeadline).toBe(later);
    // the seller's key cannot move it
    await expect(
      signAndSend(await escrow().buildPartyTransaction('extend_deadline', second, bob.publicKey.toBase58(), { newDeadline: later + DAY }), bob, 'extend_deadline_refused'),
    ).rejects.toMatchObject({ extensions: expect.objectContaining({ program_error: 'NotBuyerOrPlatform' }) });
    delete figures.extend_deadline_refused;

    const now = await escrow().chainNow();
    await signAndSend(await escrow().buildPartyTransaction('propose_settlement', second, alice.publicKey.toBase58(), { buyerBps: 9_000, expiresAt: now + DAY }), alice, 'propose_settlement');
    expect((await escrow().fetchOrder(second))?.settlement).toEqual({ proposedBy: 'buyer', buyerBps: 9_000, expiresAt: now + DAY });
    await signAndSend(await escrow().buildPartyTransaction('withdraw_settlement', second, alice.publicKey.toBase58()), alice, 'withdraw_settlement');
    expect((await escrow().fetchOrder(second))?.settlement).toBeNull();
    await expect(escrow().acceptSettlement(second, 9_000)).rejects.toMatchObject({ extensions: expect.objectContaining({ program_error: 'NoSettlementProposal' }) });
  });

  it('milestone 2: the seller proposes, the buyer accepts from her wallet, the program pays exactly that split', async () => {
    const now = await escrow().chainNow();
    await signAndSend(await escrow().buildPartyTransaction('propose_settlement', second, bob.publicKey.toBase58(), { buyerBps: 2_500, expiresAt: now + 3 * DAY }), bob, 'propose_settlement');
    expect((await escrow().fetchOrder(second))?.settlement).toEqual({ proposedBy: 'seller', buyerBps: 2_500, expiresAt: now + 3 * DAY });
    // the seller cannot accept her own proposal, nor anyone another share
    await expect(
      signAndSend(await escrow().buildPartyTransaction('accept_settlement', second, bob.publicKey.toBase58(), { buyerBps: 2_500 }), bob, 'refused'),
    ).rejects.toMatchObject({ extensions: expect.objectContaining({ program_error: 'OwnSettlementProposal' }) });
    await expect(
      signAndSend(await escrow().buildPartyTransaction('accept_settlement', second, alice.publicKey.toBase58(), { buyerBps: 5_000 }), alice, 'refused'),
    ).rejects.toMatchObject({ extensions: expect.objectContaining({ program_error: 'SettlementTermsMismatch' }) });
    delete figures.refused;

    const [buyerBefore, sellerBefore, treasuryBefore] = [await balance(alice.publicKey), await balance(bob.publicKey), await balance(treasury)];
    const res = await signAndSend(await escrow().buildPartyTransaction('accept_settlement', second, alice.publicKey.toBase58(), { buyerBps: 2_500 }), alice, 'accept_settlement');
    const buyerShare = (USDC(1) * 2_500n) / 10_000n;
    const fee = ((USDC(1) - buyerShare) * BigInt(feeBps)) / 10_000n;
    const sellerShare = USDC(1) - buyerShare - fee;
    expect(await balance(alice.publicKey)).toBe(buyerBefore + buyerShare);
    expect(await balance(bob.publicKey)).toBe(sellerBefore + sellerShare);
    expect(await balance(treasury)).toBe(treasuryBefore + fee);
    expect(await escrow().fetchOrder(second)).toBeNull();

    // the settlement reader recognises accept_settlement as the closing instruction, with its payout
    const settled = await escrow().findSettlement(second, net.boot.usdcMint, { signature: res.signature });
    expect(settled).toMatchObject({
      instruction: 'accept_settlement',
      buyerBps: 2_500,
      paid: { buyer: buyerShare, seller: sellerShare, treasury: fee },
      event: { buyer: buyerShare, seller: sellerShare, treasury: fee },
      vaultBefore: USDC(1),
      verified: true,
    });
  });

  it('states the rent of one milestone escrow at this localnet\'s rate (order account + vault)', async () => {
    const orderSize = escrow().orderAccountSize();
    expect(orderSize).toBe(267);
    const [orderRent, vaultRent] = await Promise.all([
      net.chain.connection.getMinimumBalanceForRentExemption(orderSize),
      net.chain.connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE),
    ]);
    Object.assign(figures, { order_account_bytes: orderSize, order_rent_lamports: orderRent, vault_rent_lamports: vaultRent, rent_per_milestone_lamports: orderRent + vaultRent });
    expect(orderRent).toBeGreaterThan(0);
  });
});

describe('an order funded before milestones (layout version 1) after the upgrade', () => {
  it('is listed, migrated by the upgrade authority into milestone 1 of a one-milestone order, and released', async () => {
    const id = randomUUID();
    const now = await escrow().chainNow();
    const built = await escrow().buildFundTransaction({
      orderId: id,
      buyer: alice.publicKey.toBase58(),
      seller: bob.publicKey.toBase58(),
      mint: net.boot.usdcMint,
      amount: USDC(2),
      deliveryDeadline: now + 7 * DAY,
      reviewWindow: 0,
      expiresAt: now + 900,
    });
    const tx = Transaction.from(Buffer.from(built.transaction, 'base64'));
    tx.partialSign(alice);
    await escrow().submitSignedTransaction(tx.serialize().toString('base64'));
    const address = escrow().orderAddress(id);
    const data = (await net.chain.connection.getAccountInfo(address, 'confirmed'))!.data;
    expect(data.length).toBe(267);
    // version 1 (issue 20 until issue 24): the first release's 236 bytes, then the version byte 1
    const v1 = Buffer.concat([data.subarray(0, 236), Buffer.from([1])]);
    const lamports = await net.chain.connection.getMinimumBalanceForRentExemption(v1.length);
    await rpcCall(net.localnet.rpcUrl, 'localnet_setAccount', [address.toBase58(), { lamports, data: v1.toString('base64'), owner: escrow().programId.toBase58() }]);

    expect((await escrow().legacyAccounts()).orders).toEqual([address.toBase58()]);
    await expect(escrow().release(id)).rejects.toThrow(); // the client cannot even read it as an order of this version
    await expect(escrow().migrateOrder(escrow().service, address.toBase58())).rejects.toMatchObject({
      extensions: expect.objectContaining({ program_error: 'NotUpgradeAuthority' }),
    });
    const admin = loadOrCreateKeypair(net.dataDir, 'admin');
    const adminBefore = await net.chain.connection.getBalance(admin.publicKey, 'confirmed');
    await escrow().migrateOrder(admin, address.toBase58());
    const migrated = (await escrow().fetchOrder(id))!;
    expect(migrated).toMatchObject({ version: 2, orderId: id, parentOrderId: id, milestoneIndex: 1, revisionsIncluded: 0, revisionsUsed: 0, settlement: null, state: 'funded', amount: USDC(2) });
    // the upgrade authority paid the rent of the 30 added bytes (and the fee)
    const added = (await net.chain.connection.getMinimumBalanceForRentExemption(267)) - lamports;
    expect(adminBefore - (await net.chain.connection.getBalance(admin.publicKey, 'confirmed'))).toBeGreaterThanOrEqual(added);
    figures.migration_rent_lamports = added;

    const sellerBefore = await balance(bob.publicKey);
    await escrow().release(id);
    const cfg = (await escrow().fetchConfig())!;
    expect(await balance(bob.publicKey)).toBe(sellerBefore + USDC(2) - (USDC(2) * BigInt(cfg.feeBps)) / 10_000n);
    expect(await escrow().fetchOrder(id)).toBeNull();
  });
});
