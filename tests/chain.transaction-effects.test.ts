/**
 * The one transaction parser (server/src/chain/transaction-effects.ts) and the settlement reader
 * built on it, over `getTransaction` results compiled by web3.js (tests/helpers/fake-transaction.ts).
 */
import { randomUUID } from 'node:crypto';
import { BN, BorshCoder, BorshInstructionCoder, EventParser, type Idl } from '@coral-xyz/anchor';
import { Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID, createBurnInstruction, createMintToInstruction, createTransferInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import escrowIdl from '@bazaar/escrow-idl';
import { describe, expect, it } from 'vitest';
import { parseTransaction, tokenDelta } from '../server/src/chain/transaction-effects.js';
import { escrowInstructions, settlementFromTransaction } from '../server/src/chain/settlement.js';
import { fakeTable, fakeTransaction, transferChecked } from './helpers/fake-transaction.js';

const idl = escrowIdl as unknown as Idl;
const coder = new BorshCoder(idl);
const escrowId = new PublicKey((escrowIdl as { address: string }).address);
const CPI_CALLER = new PublicKey('CpiCa11erTest111111111111111111111111111111');
const key = () => Keypair.generate().publicKey;

describe('parseTransaction', () => {
  it('legacy: top-level token instructions become movements with owners and mint (Transfer carries no mint: taken from the balances)', () => {
    const [mint, alice, bob, authority] = [key(), key(), key(), key()];
    const [a, b] = [getAssociatedTokenAddressSync(mint, alice), getAssociatedTokenAddressSync(mint, bob)];
    const fx = parseTransaction(
      fakeTransaction({
        payer: alice,
        instructions: [
          { ix: createTransferInstruction(a, b, alice, 5n) },
          { ix: createMintToInstruction(mint, b, authority, 7n) },
          { ix: createBurnInstruction(a, mint, alice, 2n) },
        ],
        tokenBalances: [
          { account: a, mint, owner: alice, pre: 10n, post: 3n },
          { account: b, mint, owner: bob, pre: null, post: 12n },
        ],
      }),
    );
    expect(fx.keysResolved).toBe(true);
    expect(fx.failed).toBe(false);
    expect(fx.tokenMovements.map(({ kind, source, sourceOwner, destination, destinationOwner, mint: m, amount, depth }) => ({ kind, source, sourceOwner, destination, destinationOwner, mint: m, amount, depth }))).toEqual([
      { kind: 'transfer', source: a.toBase58(), sourceOwner: alice.toBase58(), destination: b.toBase58(), destinationOwner: bob.toBase58(), mint: mint.toBase58(), amount: 5n, depth: 1 },
      { kind: 'mint', source: null, sourceOwner: null, destination: b.toBase58(), destinationOwner: bob.toBase58(), mint: mint.toBase58(), amount: 7n, depth: 1 },
      { kind: 'burn', source: a.toBase58(), sourceOwner: alice.toBase58(), destination: null, destinationOwner: null, mint: mint.toBase58(), amount: 2n, depth: 1 },
    ]);
    expect(tokenDelta(fx, b.toBase58())).toBe(12n);
    expect(tokenDelta(fx, a.toBase58())).toBe(-7n);
    expect([...fx.invokedPrograms]).toEqual([TOKEN_PROGRAM_ID.toBase58()]);
  });

  it('v0: keys are static + loaded (writable, then readonly); a program reached by CPI with its id from a lookup table is invoked; CPI movements carry their depth', () => {
    const [mint, payer, vaultOwner, to] = [key(), key(), key(), key()];
    const vault = getAssociatedTokenAddressSync(mint, vaultOwner, true);
    const dest = getAssociatedTokenAddressSync(mint, to);
    const inner = new TransactionInstruction({
      programId: escrowId,
      keys: [
        { pubkey: vault, isSigner: false, isWritable: true },
        { pubkey: dest, isSigner: false, isWritable: true },
        { pubkey: mint, isSigner: false, isWritable: false },
        { pubkey: vaultOwner, isSigner: false, isWritable: false },
        { pubkey: TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
      ],
      data: Buffer.from([1]),
    });
    const caller = new TransactionInstruction({ programId: CPI_CALLER, keys: [{ pubkey: escrowId, isSigner: false, isWritable: false }, ...inner.keys], data: inner.data });
    const tx = fakeTransaction({
      payer,
      instructions: [{ ix: caller, cpis: [{ ix: inner, depth: 2 }, { ix: transferChecked(vault, mint, dest, vaultOwner, 9n), depth: 3 }] }],
      tables: [fakeTable([escrowId, dest, mint])],
      tokenBalances: [
        { account: vault, mint, owner: vaultOwner, pre: 9n, post: 0n },
        { account: dest, mint, owner: to, pre: 0n, post: 9n },
      ],
    });
    expect(tx.transaction.message.staticAccountKeys.map((k) => k.toBase58())).not.toContain(escrowId.toBase58());
    const fx = parseTransaction(tx);
    // static: payer, vault, the caller, the vault owner, the token program; loaded: dest (writable), then escrow, mint (readonly)
    expect(fx.accountKeys.slice(-3)).toEqual([dest.toBase58(), escrowId.toBase58(), mint.toBase58()]);
    expect(fx.invokedPrograms.has(escrowId.toBase58())).toBe(true);
    expect(fx.invokedPrograms.has(CPI_CALLER.toBase58())).toBe(true);
    expect(fx.instructions.map((i) => [i.programId, i.depth, i.top])).toEqual([
      [CPI_CALLER.toBase58(), 1, 0],
      [escrowId.toBase58(), 2, 0],
      [TOKEN_PROGRAM_ID.toBase58(), 3, 0],
    ]);
    expect(fx.tokenMovements).toMatchObject([{ kind: 'transfer', source: vault.toBase58(), sourceOwner: vaultOwner.toBase58(), destination: dest.toBase58(), destinationOwner: to.toBase58(), mint: mint.toBase58(), amount: 9n, depth: 3 }]);
    expect(tokenDelta(fx, dest.toBase58())).toBe(9n);

    // a node that does not say what the tables loaded: the keys are not resolved
    const blind = parseTransaction(fakeTransaction({ payer, instructions: [{ ix: caller }], tables: [fakeTable([escrowId, dest, mint])], omitLoadedAddresses: true }));
    expect(blind.keysResolved).toBe(false);
    expect(blind.invokedPrograms.has(escrowId.toBase58())).toBe(false);
    // a node that records no CPIs
    expect(parseTransaction(fakeTransaction({ payer, instructions: [{ ix: caller }], omitInnerInstructions: true })).innerInstructionsKnown).toBe(false);
  });

  it('Program data logs are attributed to the program that wrote them, at any depth (Anchor\'s EventParser misses an event of a program reached by CPI)', () => {
    const payer = key();
    const event = 'ZXZlbnQ=';
    const logs = [
      `Program ${CPI_CALLER.toBase58()} invoke [1]`,
      `Program ${escrowId.toBase58()} invoke [2]`,
      'Program log: Instruction: Refund',
      `Program ${TOKEN_PROGRAM_ID.toBase58()} invoke [3]`,
      `Program ${TOKEN_PROGRAM_ID.toBase58()} success`,
      `Program data: ${event}`,
      `Program ${escrowId.toBase58()} success`,
      `Program data: b3RoZXI=`,
      `Program ${CPI_CALLER.toBase58()} success`,
    ];
    const fx = parseTransaction(fakeTransaction({ payer, instructions: [{ ix: new TransactionInstruction({ programId: CPI_CALLER, keys: [], data: Buffer.alloc(0) }) }], logs }));
    expect(fx.programData).toEqual([
      { programId: escrowId.toBase58(), data: event, depth: 2 },
      { programId: CPI_CALLER.toBase58(), data: 'b3RoZXI=', depth: 1 },
    ]);
    // what Anchor's own parser makes of the same logs: the escrow's line is not its event
    const anchorSees: unknown[] = [];
    try {
      for (const e of new EventParser(escrowId, coder).parseLogs(logs)) anchorSees.push(e);
    } catch {
      /* it may also throw */
    }
    expect(anchorSees).toEqual([]);
  });
});

describe('settlementFromTransaction over the shared parser', () => {
  it('a refund made by CPI, the escrow id loaded from a lookup table: instruction, transfers and the event agree (verified)', () => {
    const [mint, seller, depositKey] = [key(), key(), key()];
    const orderId = Buffer.from(randomUUID().replace(/-/g, ''), 'hex');
    const order = PublicKey.findProgramAddressSync([Buffer.from('order'), orderId], escrowId)[0];
    const config = PublicKey.findProgramAddressSync([Buffer.from('config')], escrowId)[0];
    const vault = getAssociatedTokenAddressSync(mint, order, true);
    const buyerAta = getAssociatedTokenAddressSync(mint, depositKey, true);
    const refund = new TransactionInstruction({
      programId: escrowId,
      keys: [seller, config, order, mint, vault, buyerAta, depositKey, TOKEN_PROGRAM_ID].map((pubkey, i) => ({ pubkey, isSigner: i === 0, isWritable: [2, 4, 5, 6].includes(i) })),
      data: new BorshInstructionCoder(idl).encode('refund', {}),
    });
    const caller = new TransactionInstruction({ programId: CPI_CALLER, keys: [{ pubkey: escrowId, isSigner: false, isWritable: false }, ...refund.keys], data: refund.data });
    // the event as the program logs it: 8-byte discriminator (IDL) + borsh fields
    const disc = (idl.events ?? []).find((e) => e.name === 'OrderRefunded')!.discriminator;
    const fields = coder.types.encode('OrderRefunded', { order, order_id: [...orderId], by: seller, amount: new BN(6_000_000), refunded_at: new BN(1_800_000_000) });
    const eventData = Buffer.concat([Buffer.from(disc), fields]);
    const logs = [
      `Program ${CPI_CALLER.toBase58()} invoke [1]`,
      `Program ${escrowId.toBase58()} invoke [2]`,
      `Program data: ${Buffer.from(eventData).toString('base64')}`,
      `Program ${escrowId.toBase58()} success`,
      `Program ${CPI_CALLER.toBase58()} success`,
    ];
    const tx = fakeTransaction({
      payer: seller,
      instructions: [{ ix: caller, cpis: [{ ix: refund, depth: 2 }, { ix: transferChecked(vault, mint, buyerAta, order, 6_000_000n), depth: 3 }] }],
      tables: [fakeTable([escrowId, config, vault, mint, TOKEN_PROGRAM_ID])],
      tokenBalances: [
        { account: vault, mint, owner: order, pre: 6_000_000n, post: null },
        { account: buyerAta, mint, owner: depositKey, pre: 0n, post: 6_000_000n },
      ],
      logs,
    });
    const ctx = { programId: escrowId, idl, coder, order, vault };
    expect(escrowInstructions(parseTransaction(tx), ctx).map((i) => [i.name, i.depth, i.named.vault])).toEqual([['refund', 2, vault.toBase58()]]);
    const s = settlementFromTransaction(tx, 'sig', ctx);
    expect(s).toMatchObject({
      instruction: 'refund',
      paid: { buyer: 6_000_000n, seller: 0n, treasury: 0n },
      event: { buyer: 6_000_000n, seller: 0n, treasury: 0n },
      accounts: { buyer: buyerAta.toBase58() },
      vaultBefore: 6_000_000n,
      verified: true,
    });
  });
});
