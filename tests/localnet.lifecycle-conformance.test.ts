/**
 * Conformance of the escrow program (programs/escrow, on the localnet) with the contract's order lifecycle
 * table (`orderTransitions`, contract/src/orders.contract.ts), issue 22 item 4. Every row is read from the
 * table, none is listed here:
 *
 *  - allowed: every (state, action, actor) the table lets happen on chain succeeds when that actor's key
 *    signs the row's instruction (inside the row's chain timing), and leaves the order account in the
 *    state the row leads to (`escrowStateOf[to]`; closed for a terminal status);
 *  - refused: every other (state, action, actor) of ORDER_STATUSES x the chain actions x the actors fails
 *    on chain with an error of the escrow program (AnchorError in the logs) and leaves the account as it was;
 *  - timing: every allowed row whose chain timing binds the actor fails on the wrong side of it.
 *
 * How the program enforces the table (the contract's "On chain" paragraph): the buyer's, seller's and
 * arbiter's (admin) own keys take exactly their rows; a `permissionless` row (claim) any key; the platform
 * authority (system) its rows and every instruction a buyer, seller or system row allows in that state
 * except `fund` (it signs for the parties when they act through the API, the server checking the table
 * first), without the buyer's timing. `pay` is the buyer's key with the platform's co-signature of the
 * fund terms, which the service gives exactly where the table allows pay (awaiting_payment, the buyer):
 * every other pay attempt is the actor signing what it can without it.
 *
 * Times: delivery_deadline = funding + 100 s, review window 200 s, moved with localnet_advanceClock.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnchorProvider, BN, Program } from '@coral-xyz/anchor';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  ORDER_STATUSES,
  escrowStateOf,
  orderTransitions,
  type OrderActor,
  type OrderStatus,
  type OrderTiming,
  type OrderTransition,
} from '@bazaar/contract';
import escrowIdl from '../programs/escrow/idl/escrow.json' with { type: 'json' };
import type { Escrow } from '../programs/escrow/idl/escrow';
import { ensureSol, loadOrCreateKeypair, mintTestUsdc } from '../server/scripts/bootstrap-localnet';
import { orderIdBytes, vaultAddress } from '../server/src/chain/pda';
import { startBootstrappedChain, type BootstrappedChain } from './helpers/localnet';

type Action = OrderTransition['action'];
const rows = orderTransitions as readonly OrderTransition[];
/** the actions that happen on chain (the table's rows with an instruction) */
const ACTIONS: readonly Action[] = [...new Set(rows.filter((r) => r.instruction).map((r) => r.action))];
const ACTORS: readonly OrderActor[] = ['buyer', 'seller', 'admin', 'system'];
const DEADLINE_IN = 100;
/** the split proposed and accepted in the settlement rows; the program's party codes (proposed_by) */
const SETTLEMENT_BPS = 2500;
const PARTY = { buyer: 1, seller: 2 } as const;
const REVIEW_WINDOW = 200;
const AMOUNT = 1_000_000n;

/** The table's row for (state, action) on chain, when `actor`'s key may take it there; else null. */
function allowedRow(state: OrderStatus, action: Action, actor: OrderActor): OrderTransition | null {
  const row = rows.find((r) => r.from === state && r.action === action && r.instruction);
  if (!row) return null;
  if (row.permissionless || row.by.includes(actor)) return row;
  // the platform authority signs for the parties (not fund: the buyer's wallet signs that)
  if (actor === 'system' && action !== 'pay' && row.by.some((b) => b !== 'admin')) return row;
  return null;
}

/** The row's chain timing when it binds the actor (service-clock rules are the server's alone). */
function bindingTiming(row: OrderTransition, actor: OrderActor): OrderTiming | null {
  const t = row.timing;
  return t && t.clock === 'chain' && (!t.only || t.only === actor) ? t : null;
}

/** Where an order is on its timeline: delivered after the deadline (`late`), and when the attempt happens. */
interface Scenario {
  late: boolean;
  when: 'now' | 'pastDeadline' | 'pastAutoRelease';
}
const SCENARIOS: readonly Scenario[] = (['now', 'pastDeadline', 'pastAutoRelease'] as const).flatMap((when) => [
  { late: false, when },
  { late: true, when },
]);
const label = (s: Scenario) => `${s.late ? 'late, ' : ''}${s.when}`;

/** The order's times under a scenario, seconds after funding (t0 = 0), as the program will see them. */
function timeline(state: OrderStatus, s: Scenario) {
  const deadline = DEADLINE_IN;
  // delivered: on time at once, late just after the deadline; disputed: an on-time delivery first, or none
  const deliveredAt = state === 'delivered' ? (s.late ? deadline + 1 : 0) : state === 'disputed' && !s.late ? 0 : null;
  const autoRelease = deliveredAt === null ? null : deliveredAt + REVIEW_WINDOW;
  const now = s.when === 'now' ? (deliveredAt ?? 0) : s.when === 'pastDeadline' ? Math.max(deliveredAt ?? 0, deadline + 1) : (autoRelease ?? deadline) + 1;
  return { deadline, deliveredAt, autoRelease, now };
}

/** A timing rule of the table evaluated on a timeline (contract OrderTiming's definition). */
function timingAllows(t: OrderTiming, x: ReturnType<typeof timeline>): boolean {
  const at = t.at === 'delivery_deadline' ? x.deadline : t.at === 'auto_release_at' ? x.autoRelease : null;
  let ok = t.allowed === 'before' ? at === null || x.now < at : t.allowed === 'from' ? at !== null && x.now >= at : at !== null && x.now > at;
  if (t.late) ok &&= !(x.deliveredAt !== null && x.deliveredAt <= x.deadline);
  if (t.until) ok &&= x.autoRelease === null || x.now < x.autoRelease;
  return ok;
}

/** scenarios a state can be in: only a delivered or disputed order has a delivery to be late or not */
const scenariosOf = (state: OrderStatus) =>
  SCENARIOS.filter((s) => {
    const x = timeline(state, s);
    const delivers = state === 'delivered' || state === 'disputed';
    return (delivers || !s.late) && (s.when !== 'pastAutoRelease' || x.autoRelease !== null);
  });

interface Attempt {
  state: OrderStatus;
  action: Action;
  actor: OrderActor;
  scenario: Scenario;
  /** the row the table allows it by; null: it must be refused */
  row: OrderTransition | null;
}

// ---- the generated rows ----
const allowed: Attempt[] = [];
const refused: Attempt[] = [];
const timingRefused: Attempt[] = [];
const BASE: Scenario = { late: false, when: 'now' };
for (const state of ORDER_STATUSES) {
  for (const action of ACTIONS) {
    for (const actor of ACTORS) {
      const row = allowedRow(state, action, actor);
      if (!row) {
        refused.push({ state, action, actor, scenario: BASE, row: null });
        continue;
      }
      const t = bindingTiming(row, actor);
      const inside = scenariosOf(state).find((s) => !t || timingAllows(t, timeline(state, s)));
      if (!inside) throw new Error(`${state} ${action} ${actor}: no scenario meets the row's timing`);
      allowed.push({ state, action, actor, scenario: inside, row });
      if (t) for (const s of scenariosOf(state)) if (!timingAllows(t, timeline(state, s))) timingRefused.push({ state, action, actor, scenario: s, row: null });
    }
  }
}

// ---- the chain ----
let env: BootstrappedChain;
let program: Program<Escrow>;
let mint: PublicKey;
let treasury: PublicKey;
const keys = { buyer: Keypair.generate(), seller: Keypair.generate(), admin: Keypair.generate() } as Record<OrderActor, Keypair>;

const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
let sends = 0;

/**
 * Send `ixs` without preflight (a refused one lands as a failed transaction) and read its record. A memo
 * numbers each transaction: the same instructions signed twice in one block would be the same
 * transaction, which a node answers with the first one's signature without running it again.
 */
async function send(payer: Keypair, ixs: TransactionInstruction[], signers: Keypair[]) {
  const conn = env.chain.connection;
  const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
  const memo = new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from(`conformance ${++sends}`) });
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(...ixs, memo);
  tx.sign(...[payer, ...signers.filter((k) => !k.publicKey.equals(payer.publicKey))]);
  const signature = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
  // the localnet executes a transaction when it is sent: its record is there at once
  const got = await conn.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  expect(got, `transaction ${signature} recorded`).not.toBeNull();
  return { err: got!.meta!.err, logs: got!.meta!.logMessages ?? [] };
}

/** one order's terms and accounts (known before it exists, as the service knows them) */
function orderOf(id: string) {
  const order = env.chain.escrow.orderAddress(id);
  const ata = (owner: PublicKey) => getAssociatedTokenAddressSync(mint, owner, true, TOKEN_PROGRAM_ID);
  return {
    id,
    order,
    vault: vaultAddress(order, mint, TOKEN_PROGRAM_ID),
    buyerTokenAccount: ata(keys.buyer.publicKey),
    sellerTokenAccount: ata(keys.seller.publicKey),
    treasuryTokenAccount: ata(treasury),
  };
}
type Order = ReturnType<typeof orderOf>;

/** The instruction of `action` on `o`, signed (as authority, payer or arbiter) by `signer`. */
async function instruction(action: Action, o: Order, signer: PublicKey, fundAs?: { buyer: PublicKey; cosigned: boolean }): Promise<TransactionInstruction> {
  const m = program.methods;
  const config = env.chain.escrow.configAddress();
  const common = { config, order: o.order, mint, vault: o.vault, rentPayer: keys.buyer.publicKey, tokenProgram: TOKEN_PROGRAM_ID };
  switch (action) {
    case 'pay': {
      const now = await env.chain.escrow.chainNow();
      const ix = await m
        .fund(Array.from(orderIdBytes(o.id)), new BN(AMOUNT.toString()), new BN(now + DEADLINE_IN), new BN(REVIEW_WINDOW), new BN(now + 900))
        .accountsPartial({
          buyer: fundAs!.buyer,
          platformAuthority: env.chain.service.publicKey,
          seller: keys.seller.publicKey,
          config,
          order: o.order,
          mint,
          buyerTokenAccount: getAssociatedTokenAddressSync(mint, fundAs!.buyer, true, TOKEN_PROGRAM_ID),
          vault: o.vault,
          tokenProgram: TOKEN_PROGRAM_ID,
          associatedTokenProgram: ASSOCIATED_TOKEN_PROGRAM_ID,
          systemProgram: SystemProgram.programId,
        })
        .instruction();
      // a key that does not sign is passed as a plain account: the program must notice
      for (const k of ix.keys) {
        if (k.pubkey.equals(env.chain.service.publicKey) && !fundAs!.cosigned) k.isSigner = false;
        if (k.pubkey.equals(fundAs!.buyer) && !fundAs!.buyer.equals(signer)) k.isSigner = false;
      }
      return ix;
    }
    case 'deliver':
      return m.markDelivered().accountsPartial({ authority: signer, config, order: o.order }).instruction();
    case 'dispute':
      return m.openDispute().accountsPartial({ authority: signer, config, order: o.order }).instruction();
    case 'confirm':
      return m.release().accountsPartial({ ...common, authority: signer, sellerTokenAccount: o.sellerTokenAccount, treasuryTokenAccount: o.treasuryTokenAccount }).instruction();
    case 'auto_release':
      return m.claim().accountsPartial({ ...common, payer: signer, sellerTokenAccount: o.sellerTokenAccount, treasuryTokenAccount: o.treasuryTokenAccount }).instruction();
    case 'refund':
      return m.refund().accountsPartial({ ...common, authority: signer, buyerTokenAccount: o.buyerTokenAccount }).instruction();
    // issue 24: revisions, extensions, settlement by agreement (escrow v2)
    case 'request_revision':
      return m.requestRevision().accountsPartial({ authority: signer, config, order: o.order }).instruction();
    case 'accept_extension': {
      // later than the deadline (funding + DEADLINE_IN), in the future, inside the delivery window
      const now = await env.chain.escrow.chainNow();
      return m.extendDeadline(new BN(now + 10 * DEADLINE_IN)).accountsPartial({ authority: signer, config, order: o.order }).instruction();
    }
    case 'propose_settlement': {
      const now = await env.chain.escrow.chainNow();
      // the party the signer proposes as: the seller's key as seller, every other key as buyer
      const as = signer.equals(keys.seller.publicKey) ? PARTY.seller : PARTY.buyer;
      return m.proposeSettlement(SETTLEMENT_BPS, new BN(now + 3600), as).accountsPartial({ authority: signer, config, order: o.order }).instruction();
    }
    case 'accept_settlement':
      return m
        .acceptSettlement(SETTLEMENT_BPS)
        .accountsPartial({ ...common, authority: signer, buyerTokenAccount: o.buyerTokenAccount, sellerTokenAccount: o.sellerTokenAccount, treasuryTokenAccount: o.treasuryTokenAccount })
        .instruction();
    case 'withdraw_settlement':
      return m.withdrawSettlement().accountsPartial({ authority: signer, config, order: o.order }).instruction();
    case 'resolve':
      return m
        .resolveDispute(5000)
        .accountsPartial({ ...common, arbiter: signer, buyerTokenAccount: o.buyerTokenAccount, sellerTokenAccount: o.sellerTokenAccount, treasuryTokenAccount: o.treasuryTokenAccount })
        .instruction();
    default:
      throw new Error(`${action} has no instruction`);
  }
}

/** `actor` attempts `action` on `o` with its own key (pay: see the module comment). */
async function attempt(action: Action, actor: OrderActor, o: Order, state: OrderStatus) {
  const signer = keys[actor];
  if (action !== 'pay') return send(signer, [await instruction(action, o, signer.publicKey)], []);
  const cosigned = actor === 'buyer' && !!allowedRow(state, 'pay', 'buyer');
  const buyer = actor === 'system' ? keys.buyer.publicKey : signer.publicKey;
  return send(signer, [await instruction('pay', o, signer.publicKey, { buyer, cosigned })], cosigned ? [env.chain.service] : []);
}

/**
 * Take the table's own rows (as their first actor) to bring a new order into `state` under `s`. `revisions`:
 * fund it as milestone 1 of 1 with that many revisions included (`fund_milestone`, escrow v2) instead of `fund`
 * (which includes none), so a request_revision row can be taken.
 */
async function orderIn(state: OrderStatus, s: Scenario, revisions = 0): Promise<Order> {
  const o = orderOf(randomUUID());
  const take = async (action: Action, actor: OrderActor) => {
    const r = await attempt(action, actor, o, action === 'pay' ? 'awaiting_payment' : state);
    expect(r.err, `${action} by the ${actor} while setting up ${state}: ${r.logs.join('\n')}`).toBeNull();
  };
  const advance = (seconds: number) => env.localnet.advanceClock(seconds);
  if (escrowStateOf[state] === 'none') return o; // no escrow (yet / ever): awaiting_payment, expired, a scheduled milestone
  if (revisions > 0) {
    const r = await send(keys.buyer, [await fundMilestone(o, revisions)], [env.chain.service]);
    expect(r.err, `fund_milestone while setting up ${state}: ${r.logs.join('\n')}`).toBeNull();
  } else await take('pay', 'buyer');
  const x = timeline(state, s);
  if (state === 'delivered') {
    if (s.late) await advance(DEADLINE_IN + 1);
    await take('deliver', 'seller');
  }
  if (state === 'disputed') {
    if (x.deliveredAt !== null) await take('deliver', 'seller');
    await take('dispute', 'buyer');
  }
  if (state === 'completed') await take('confirm', 'buyer');
  if (state === 'refunded') await take('refund', 'seller');
  if (state === 'resolved') {
    await take('dispute', 'buyer');
    await take('resolve', 'admin');
  }
  const elapsed = state === 'delivered' && s.late ? DEADLINE_IN + 1 : 0;
  if (x.now > elapsed) await advance(x.now - elapsed);
  return o;
}

/** fund_milestone of `o` as milestone 1 of 1 (escrow id = parent id) with `revisions` included, co-signed by the platform. */
async function fundMilestone(o: Order, revisions: number): Promise<TransactionInstruction> {
  const now = await env.chain.escrow.chainNow();
  const id = Array.from(orderIdBytes(o.id));
  return program.methods
    .fundMilestone({
      escrowId: id,
      parentOrderId: id,
      milestoneIndex: 1,
      amount: new BN(AMOUNT.toString()),
      deliveryDeadline: new BN(now + DEADLINE_IN),
      reviewWindow: new BN(REVIEW_WINDOW),
      expiresAt: new BN(now + 900),
      revisionsIncluded: revisions,
    })
    .accountsPartial({
      buyer: keys.buyer.publicKey,
      platformAuthority: env.chain.service.publicKey,
      seller: keys.seller.publicKey,
      config: env.chain.escrow.configAddress(),
      order: o.order,
      mint,
      buyerTokenAccount: o.buyerTokenAccount,
      vault: o.vault,
      tokenProgram: TOKEN_PROGRAM_ID,
      associatedTokenProgram: ASSOCIATED_TOKEN_PROGRAM_ID,
      systemProgram: SystemProgram.programId,
    })
    .instruction();
}

/**
 * What a row needs of the order besides its state (the table's `requires`) that the program also holds: a
 * pending settlement proposal by the other party (accept: the seller's, or the buyer's when the seller
 * accepts) or by the actor (withdraw; the platform's as the buyer). Revisions: `orderIn(..., 1)`. An
 * extension's proposal lives off chain: the program needs only the buyer's (or the platform's) signature.
 */
async function meetRequirement(row: OrderTransition, actor: OrderActor, o: Order): Promise<void> {
  const by = row.requires === 'settlement_by_other' ? (actor === 'seller' ? 'buyer' : 'seller') : row.requires === 'settlement_by_self' ? (actor === 'seller' ? 'seller' : 'buyer') : null;
  if (!by) return;
  const r = await send(keys[by], [await instruction('propose_settlement', o, keys[by].publicKey)], []);
  expect(r.err, `propose_settlement by the ${by}: ${r.logs.join('\n')}`).toBeNull();
}
const revisionsFor = (action: Action) => (action === 'request_revision' ? 1 : 0);

async function accountState(o: Order): Promise<{ state: string; data: string } | null> {
  const info = await env.chain.connection.getAccountInfo(o.order, 'confirmed');
  if (!info) return null;
  const decoded = program.coder.accounts.decode('order', info.data) as { state: Record<string, unknown> };
  return { state: Object.keys(decoded.state)[0]!, data: info.data.toString('base64') };
}

const ESCROW_ERROR = /Error Code: (\w+)\. Error Number: (\d+)/;
/** errors that refuse the signer (its role, a missing signature), and those that refuse the moment */
const SIGNER_ERRORS = /^(Not\w+|AccountNotSigner|BuyerIsSeller|OwnSettlementProposal)$/;
const TIMING_ERRORS = /^(ReviewWindowNotElapsed|ReviewWindowElapsed|BuyerRefundNotAllowed)$/;

async function expectRefused(a: Attempt, o: Order) {
  const before = await accountState(o);
  const r = await attempt(a.action, a.actor, o, a.state);
  expect(r.err, `${a.state} ${a.action} by the ${a.actor} (${label(a.scenario)}) landed: the table does not allow it`).not.toBeNull();
  const escrowError = r.logs.map((l) => ESCROW_ERROR.exec(l)).find(Boolean);
  expect(escrowError, `an error of the escrow program in the logs:\n${r.logs.join('\n')}`).toBeTruthy();
  expect(r.logs.some((l) => l.startsWith(`Program ${program.programId.toBase58()} failed`))).toBe(true);
  expect(await accountState(o)).toEqual(before);
  return escrowError![1]!;
}

beforeAll(async () => {
  env = await startBootstrappedChain('conformance');
  mint = new PublicKey(env.boot.usdcMint);
  treasury = new PublicKey(env.boot.treasury);
  keys.system = env.chain.service;
  program = new Program<Escrow>(escrowIdl as unknown as Escrow, new AnchorProvider(env.chain.connection, { publicKey: keys.buyer.publicKey } as never, {}));
  const conn = env.chain.connection;
  await Promise.all([...ACTORS.map((a) => ensureSol(conn, keys[a].publicKey, BigInt(LAMPORTS_PER_SOL), 10 * LAMPORTS_PER_SOL))]);
  await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, keys.buyer.publicKey.toBase58(), AMOUNT * 200n);
  await env.chain.escrow.ensureAta(keys.seller.publicKey.toBase58(), mint.toBase58());
  // an arbiter apart from the platform authority (the dev bootstrap makes the service both), so that the
  // admin rows and the platform's are told apart
  const admin = loadOrCreateKeypair(env.dataDir, 'admin');
  const none = { admin: null, platformAuthority: null, treasury: null, feeBps: null, defaultReviewWindow: null, maxReviewWindow: null, maxDeliveryWindow: null, allowedMints: null };
  const ix = await program.methods.updateConfig({ ...none, arbiter: keys.admin.publicKey }).accountsPartial({ admin: admin.publicKey, config: env.chain.escrow.configAddress() }).instruction();
  expect((await send(admin, [ix], [])).err).toBeNull();
  expect((await env.chain.escrow.fetchConfig())!.arbiter).toBe(keys.admin.publicKey.toBase58());
}, 900_000);

afterAll(async () => {
  await env?.stop();
});

describe('the escrow program conforms to the lifecycle table (issue 22 item 4)', () => {
  it(`generates the rows from the table: ${allowed.length} allowed, ${refused.length} refused, ${timingRefused.length} refused by timing`, () => {
    expect(allowed.length + refused.length).toBe(ORDER_STATUSES.length * ACTIONS.length * ACTORS.length);
    // every chain row of the table is taken by each of its actors
    for (const r of rows.filter((x) => x.instruction && x.from)) {
      for (const by of r.by) expect(allowed.some((a) => a.state === r.from && a.action === r.action && a.actor === by), `${r.from} ${r.action} ${by}`).toBe(true);
    }
    expect(ACTIONS).toEqual(
      expect.arrayContaining(['pay', 'deliver', 'confirm', 'auto_release', 'dispute', 'refund', 'resolve', 'request_revision', 'accept_extension', 'propose_settlement', 'accept_settlement', 'withdraw_settlement']),
    );
  });

  describe('every allowed row succeeds and leaves the account in the state it leads to', () => {
    for (const a of allowed) {
      it(`${a.state} -${a.action}-> ${a.row!.to}: the ${a.actor}${a.scenario === BASE ? '' : ` (${label(a.scenario)})`}`, async () => {
        const o = await orderIn(a.state, a.scenario, revisionsFor(a.action));
        await meetRequirement(a.row!, a.actor, o);
        const r = await attempt(a.action, a.actor, o, a.state);
        expect(r.err, r.logs.join('\n')).toBeNull();
        const want = escrowStateOf[a.row!.to];
        const after = await accountState(o);
        if (want === 'funded' || want === 'delivered' || want === 'disputed') expect(after?.state).toBe(want);
        else expect(after, `${a.row!.to}: the escrow is closed`).toBeNull();
      });
    }
  });

  describe('every (state, action, actor) the table does not allow fails with the program error', () => {
    const byState = new Map<OrderStatus, Attempt[]>();
    for (const a of refused) byState.set(a.state, [...(byState.get(a.state) ?? []), a]);
    for (const [state, attempts] of byState) {
      it(`${state}: ${attempts.length} refused (${[...new Set(attempts.map((a) => a.action))].join(', ')})`, async () => {
        // with a revision left and the buyer's settlement proposal pending, so that what refuses is the signer or the state
        const o = await orderIn(state, BASE, 1);
        if (await accountState(o)) {
          const r = await send(keys.buyer, [await instruction('propose_settlement', o, keys.buyer.publicKey)], []);
          expect(r.err, r.logs.join('\n')).toBeNull();
        }
        for (const a of attempts) {
          const error = await expectRefused(a, o);
          // where the table lets another actor take the action, the program refuses this one for its key
          if (rows.some((r) => r.from === state && r.action === a.action && r.instruction)) expect(error, `${state} ${a.action} by the ${a.actor}`).toMatch(SIGNER_ERRORS);
        }
      });
    }
  });

  describe('every allowed row fails on the wrong side of its chain timing', () => {
    // one order per (state, scenario), used at once by the attempts on it (the clock only moves forward)
    const key = (a: Attempt) => `${a.state} ${label(a.scenario)}`;
    const sorted = [...timingRefused].sort((x, y) => key(x).localeCompare(key(y)));
    let last: { key: string; order: Promise<Order> } | null = null;
    for (const a of sorted) {
      it(`${a.state} ${a.action} by the ${a.actor} (${label(a.scenario)})`, async () => {
        if (last?.key !== key(a)) last = { key: key(a), order: orderIn(a.state, a.scenario, 1) };
        expect(await expectRefused(a, await last.order)).toMatch(TIMING_ERRORS);
      });
    }
  });
});
