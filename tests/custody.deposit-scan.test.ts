/**
 * The deposit scanner over recorded transactions (no node, no database): the real CustodyChain and
 * CustodyWorker, a Connection that answers getSignaturesForAddress / getTransaction with
 * transactions built by web3.js (tests/helpers/fake-transaction.ts), and a repository that records
 * what would be credited.
 *
 * The rule under test (issue 20 item 1): no deposit credit for any token movement that a known
 * escrow vault paid out, however the escrow was reached (top level, by CPI from any program, its id
 * static or loaded from an address lookup table); what else arrived in the same transaction is
 * credited.
 */
import { randomUUID } from 'node:crypto';
import { type Idl, BorshInstructionCoder } from '@coral-xyz/anchor';
import { Keypair, PublicKey, TransactionInstruction, type VersionedTransactionResponse } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token';
import escrowIdl from '@bazaar/escrow-idl';
import { describe, expect, it } from 'vitest';
import { EscrowClient } from '../server/src/chain/escrow.js';
import { CustodyChain } from '../server/src/modules/custody/custody.chain.js';
import { CustodyWorker, type CustodyPass } from '../server/src/modules/custody/custody.worker.js';
import { fakeTable, fakeTransaction, transferChecked } from './helpers/fake-transaction.js';

const CPI_CALLER = new PublicKey('CpiCa11erTest111111111111111111111111111111');
const idl = escrowIdl as unknown as Idl;
const coder = new BorshInstructionCoder(idl);

/** One scan of one deposit address over `txs` (oldest first); what it credited and where its cursor ended. */
async function scan(txs: VersionedTransactionResponse[], o: { knownVaults?: string[] } = {}) {
  const byName = new Map(txs.map((tx, i) => [`sig${i}`, tx]));
  const connection = {
    getSignaturesForAddress: async () =>
      [...byName.keys()].reverse().map((signature) => ({ signature, slot: byName.get(signature)!.slot, err: null, blockTime: null, memo: null })),
    getTransaction: async (signature: string) => byName.get(signature) ?? null,
  };
  const service = Keypair.generate();
  const escrow = new EscrowClient({ connection: connection as never, idl, service });
  const chain = new CustodyChain({ connection: connection as never, service, escrow });
  const recorded: Array<{ signature: string; amount: bigint; status: string }> = [];
  let cursor: string | null = null;
  const repo = {
    listAddresses: async () => [{ userId: randomUUID(), address: w.depositKey.toBase58(), index: 0 }],
    getCursor: async () => null,
    setCursor: async (_: string, sig: string) => {
      cursor = sig;
    },
    recordDeposit: async (d: { signature: string; amount: bigint; status: string }) => {
      recorded.push({ signature: d.signature, amount: d.amount, status: d.status });
      return true;
    },
    orderVaults: async (accounts: string[]) => new Set(accounts.filter((a) => (o.knownVaults ?? []).includes(a))),
  };
  const currencies = [{ code: 'USDC', mint: w.mint.toBase58(), decimals: 6, minDeposit: 1n, tokenProgram: TOKEN_PROGRAM_ID.toBase58() }];
  const worker = new CustodyWorker({ service: { currencies } as never, repo: repo as never, chain });
  const pass: CustodyPass = { reconciled: {}, credited: [], belowMinimum: [], sweeps: [], closedOrders: [] };
  await worker.scanDeposits(pass);
  return { credited: recorded.filter((r) => r.status === 'credited'), pass, cursor, escrowId: escrow.programId, chain };
}

/** The world of one custodial order: its escrow accounts, the deposit key and its ATA, a seller. */
function world() {
  const mint = Keypair.generate().publicKey;
  const depositKey = Keypair.generate().publicKey;
  const seller = Keypair.generate().publicKey;
  const escrowId = new PublicKey((escrowIdl as { address: string }).address);
  const orderId = Buffer.from(randomUUID().replace(/-/g, ''), 'hex');
  const order = PublicKey.findProgramAddressSync([Buffer.from('order'), orderId], escrowId)[0];
  const config = PublicKey.findProgramAddressSync([Buffer.from('config')], escrowId)[0];
  const vault = getAssociatedTokenAddressSync(mint, order, true);
  const ata = getAssociatedTokenAddressSync(mint, depositKey, true);
  return { mint, depositKey, seller, escrowId, order, config, vault, ata };
}
let w = world();

/** The escrow's `refund` of the order by the seller (accounts in IDL order), paying `to` (the buyer's token account). */
function refundIx(to: PublicKey = w.ata): TransactionInstruction {
  return new TransactionInstruction({
    programId: w.escrowId,
    keys: [
      { pubkey: w.seller, isSigner: true, isWritable: false }, // authority
      { pubkey: w.config, isSigner: false, isWritable: false },
      { pubkey: w.order, isSigner: false, isWritable: true },
      { pubkey: w.mint, isSigner: false, isWritable: false },
      { pubkey: w.vault, isSigner: false, isWritable: true },
      { pubkey: to, isSigner: false, isWritable: true }, // buyer_token_account
      { pubkey: w.depositKey, isSigner: false, isWritable: true }, // rent_payer
      { pubkey: TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
    ],
    data: coder.encode('refund', {}),
  });
}

/** `ix` made by the CPI caller (its program id becomes an account of the caller's instruction). */
const viaCaller = (ix: TransactionInstruction) =>
  new TransactionInstruction({ programId: CPI_CALLER, keys: [{ pubkey: ix.programId, isSigner: false, isWritable: false }, ...ix.keys], data: ix.data });

/** The seller refunds `amount` through her own program by CPI; `tableHolds` names what comes from a lookup table. */
function refundByCpi(amount: bigint, tableHolds: PublicKey[], extra: { ix: TransactionInstruction; cpis?: never[] }[] = []) {
  const refund = refundIx();
  return fakeTransaction({
    payer: w.seller,
    instructions: [
      { ix: viaCaller(refund), cpis: [{ ix: refund, depth: 2 }, { ix: transferChecked(w.vault, w.mint, w.ata, w.order, amount), depth: 3 }] },
      ...extra,
    ],
    tables: [fakeTable(tableHolds)],
    tokenBalances: [
      { account: w.vault, mint: w.mint, owner: w.order, pre: amount, post: null },
      { account: w.ata, mint: w.mint, owner: w.depositKey, pre: 0n, post: amount + (extra.length ? 2_000_000n : 0n) },
    ],
  });
}

describe('deposit scanner: no deposit credit for what an escrow vault paid out', () => {
  it('a refund by CPI with the escrow id in a lookup table is not a deposit (the double credit of issue 20 item 1)', async () => {
    w = world();
    // the deposit token account stays a static key (so a reader of static keys sees the balance rise), the escrow id is loaded
    const { credited, pass, cursor } = await scan([refundByCpi(10_000_000n, [w.escrowId, w.config, w.vault, w.mint, TOKEN_PROGRAM_ID])]);
    expect(credited).toEqual([]);
    expect(pass.credited).toEqual([]);
    expect(cursor).toBe('sig0'); // read and passed, not stuck
  });

  it('…nor when every account, the deposit token account included, comes from the table', async () => {
    w = world();
    const everything = [w.escrowId, w.config, w.order, w.vault, w.mint, w.ata, w.depositKey, TOKEN_PROGRAM_ID];
    expect((await scan([refundByCpi(10_000_000n, everything)])).credited).toEqual([]);
  });

  it('a refund at top level (the escrow a static key) is not a deposit', async () => {
    w = world();
    const refund = refundIx();
    const tx = fakeTransaction({
      payer: w.seller,
      instructions: [{ ix: refund, cpis: [{ ix: transferChecked(w.vault, w.mint, w.ata, w.order, 4_000_000n), depth: 2 }] }],
      tokenBalances: [
        { account: w.vault, mint: w.mint, owner: w.order, pre: 4_000_000n, post: null },
        { account: w.ata, mint: w.mint, owner: w.depositKey, pre: 0n, post: 4_000_000n },
      ],
    });
    expect((await scan([tx])).credited).toEqual([]);
  });

  it('a payout from a vault the service funded is not a deposit even when no escrow instruction can be read', async () => {
    w = world();
    // e.g. an escrow built from another IDL: its instruction does not decode, the vault is known from the books
    const opaque = new TransactionInstruction({ programId: w.escrowId, keys: refundIx().keys, data: Buffer.from([9, 9, 9]) });
    const tx = fakeTransaction({
      payer: w.seller,
      instructions: [{ ix: viaCaller(opaque), cpis: [{ ix: opaque, depth: 2 }, { ix: transferChecked(w.vault, w.mint, w.ata, w.order, 3_000_000n), depth: 3 }] }],
      tables: [fakeTable([w.escrowId])],
      tokenBalances: [
        { account: w.vault, mint: w.mint, owner: w.order, pre: 3_000_000n, post: null },
        { account: w.ata, mint: w.mint, owner: w.depositKey, pre: 0n, post: 3_000_000n },
      ],
    });
    expect((await scan([tx], { knownVaults: [w.vault.toBase58()] })).credited).toEqual([]);
  });

  it('what else arrives in the same transaction is a deposit: a refund bundled with a transfer credits the transfer only', async () => {
    w = world();
    const outsider = Keypair.generate().publicKey;
    const outsiderAta = getAssociatedTokenAddressSync(w.mint, outsider, true);
    const tx = refundByCpi(10_000_000n, [w.escrowId, w.config, w.vault], [{ ix: transferChecked(outsiderAta, w.mint, w.ata, w.seller, 2_000_000n) }]);
    const { credited } = await scan([tx]);
    expect(credited).toEqual([{ signature: 'sig0', amount: 2_000_000n, status: 'credited' }]);
  });

  it('an ordinary v0 deposit whose deposit token account comes from a lookup table is credited', async () => {
    w = world();
    const from = Keypair.generate().publicKey;
    const fromAta = getAssociatedTokenAddressSync(w.mint, from, true);
    const tx = fakeTransaction({
      payer: from,
      instructions: [{ ix: transferChecked(fromAta, w.mint, w.ata, from, 7_000_000n) }],
      tables: [fakeTable([w.ata, w.mint])],
      tokenBalances: [
        { account: fromAta, mint: w.mint, owner: from, pre: 7_000_000n, post: 0n },
        { account: w.ata, mint: w.mint, owner: w.depositKey, pre: 0n, post: 7_000_000n },
      ],
    });
    expect((await scan([tx])).credited).toEqual([{ signature: 'sig0', amount: 7_000_000n, status: 'credited' }]);
  });

  it('a transaction whose lookups the node did not resolve is not credited: the scan stops before it and reads it again later', async () => {
    w = world();
    const from = Keypair.generate().publicKey;
    const fromAta = getAssociatedTokenAddressSync(w.mint, from, true);
    const plain = fakeTransaction({
      payer: from,
      instructions: [{ ix: transferChecked(fromAta, w.mint, w.ata, from, 1_000_000n) }],
      tokenBalances: [{ account: w.ata, mint: w.mint, owner: w.depositKey, pre: 0n, post: 1_000_000n }],
    });
    const unresolved = fakeTransaction({
      payer: w.seller,
      instructions: [{ ix: viaCaller(refundIx()) }],
      tables: [fakeTable([w.escrowId, w.config, w.vault])],
      omitLoadedAddresses: true,
      tokenBalances: [{ account: w.ata, mint: w.mint, owner: w.depositKey, pre: 1_000_000n, post: 11_000_000n }],
    });
    const { credited, cursor } = await scan([plain, unresolved]);
    expect(credited).toEqual([{ signature: 'sig0', amount: 1_000_000n, status: 'credited' }]);
    expect(cursor).toBe('sig0');
  });
});
