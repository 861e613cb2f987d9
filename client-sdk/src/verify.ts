/**
 * `@bazaar/client-sdk/verify`: check the service's fund transaction before the wallet signs it (issue 26).
 *
 * The API hands the buyer a fund transaction (base64, `payment.transaction`) that the platform authority
 * has already signed; the wallet adds the buyer's signature. A wallet shows little of what it signs, so a
 * buyer who takes the bytes on trust would sign whatever a compromised or buggy server sends. This module
 * decodes the transaction with the Codama-generated Kit client of the escrow program
 * (`@bazaar/escrow-client`, accounts by their IDL NAMES, so a regenerated client with new accounts keeps
 * working) and checks that it commits to exactly the order the API returned:
 *
 * - a legacy or v0 message without address lookup tables, with a blockhash lifetime (no durable nonce);
 * - fee payer: the buyer, or `payment.fee_payer` when `payment.sponsored` (fee sponsorship);
 * - signers: only the buyer, the fee payer and the platform authority that co-signs the terms;
 * - instructions: for wrapped SOL the wrap prelude (create the buyer's wSOL account idempotently,
 *   transfer exactly the total, sync it), then exactly one `fund_milestone` of the escrow program per
 *   milestone being paid, in order, and nothing else (no transfer to anyone, no other program);
 * - each `fund_milestone`: program id, escrow id = the milestone's id, parent order id = the order's id,
 *   milestone index, amount (base units), mint, seller, buyer, the buyer's associated token account, the
 *   escrow PDA `["order", escrow_id]` (= the API's `escrow_account_address`), the vault (the escrow PDA's
 *   associated token account, = the API's `vault_address`), the config PDA, the token, associated-token
 *   and system programs, delivery deadline, review window, revisions, the terms' expiry (not past the
 *   payment window, see VerifyFundTransactionOptions.chainTime), and `rent_payer` (when the program has
 *   that account): the buyer, or the sponsoring fee payer.
 *
 * Any difference throws FundTransactionMismatchError naming the first mismatch (`code`, `expected`,
 * `actual`, `instruction`). Runs anywhere @solana/kit runs (browser, Node 20+): Kit's granular packages at the version
 * @bazaar/escrow-client uses; no @solana/web3.js.
 */
import {
  ESCROW_PROGRAM_ADDRESS,
  EscrowInstruction,
  findConfigPda,
  findOrderPda,
  identifyEscrowInstruction,
  parseFundMilestoneInstruction,
} from '@bazaar/escrow-client';
// Kit's granular packages (what @solana/kit re-exports), not the umbrella: an app's bundle and typecheck
// get these and not Kit's RPC transport
import { address, getAddressEncoder, getProgramDerivedAddress, type Address } from '@solana/addresses';
import { getBase64Encoder } from '@solana/codecs-strings';
import { AccountRole, type Instruction } from '@solana/instructions';
import { decompileTransactionMessage, getCompiledTransactionMessageDecoder } from '@solana/transaction-messages';
import { getTransactionDecoder } from '@solana/transactions';
import type { Order } from '@bazaar/contract';

/** Programs the fund transaction may name besides the escrow program (mainnet addresses, same on every cluster). */
export const TOKEN_PROGRAM_ADDRESS = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const TOKEN_2022_PROGRAM_ADDRESS = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
export const ASSOCIATED_TOKEN_PROGRAM_ADDRESS = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');
export const SYSTEM_PROGRAM_ADDRESS = address('11111111111111111111111111111111');
/** Wrapped SOL: a listing priced in SOL is paid in this mint; the transaction wraps the buyer's lamports first. */
export const NATIVE_MINT_ADDRESS = address('So11111111111111111111111111111111111111112');

/** What was wrong, as a stable code (first mismatch found; checks run in the order of the module comment). */
export type FundMismatchCode =
  | 'malformed'
  | 'address-lookup-table'
  | 'lifetime'
  | 'fee-payer'
  | 'signer'
  | 'instruction-count'
  | 'unexpected-instruction'
  | 'program-id'
  | 'wrap'
  | 'escrow-id'
  | 'order-id'
  | 'milestone'
  | 'amount'
  | 'mint'
  | 'seller'
  | 'buyer'
  | 'buyer-token-account'
  | 'escrow'
  | 'vault'
  | 'config'
  | 'token-program'
  | 'associated-token-program'
  | 'system-program'
  | 'delivery-deadline'
  | 'review-window'
  | 'revisions'
  | 'expiry'
  | 'rent-payer';

/**
 * The fund transaction does not commit to the order the API returned: do not sign it. `code` names the
 * first mismatch; `instruction` is the index of the instruction it was found in (null: the transaction as
 * a whole); `expected` / `actual` are the values as text (addresses base58, amounts in base units, times in
 * unix seconds).
 */
export class FundTransactionMismatchError extends Error {
  override readonly name = 'FundTransactionMismatchError';
  constructor(
    readonly code: FundMismatchCode,
    readonly expected: string,
    readonly actual: string,
    readonly instruction: number | null = null,
  ) {
    super(`fund transaction refused: ${code}${instruction === null ? '' : ` (instruction ${instruction})`}: expected ${expected}, got ${actual}`);
  }
}

/** The order fields the check reads (an Order or OrderWithPayment as the API returns it). */
export type VerifiableOrder = Pick<
  Order,
  'order_id' | 'buyer_wallet' | 'seller_wallet' | 'payment_mint' | 'review_window_seconds' | 'payment_expires_at'
> & {
  milestones: ReadonlyArray<
    Pick<
      Order['milestones'][number],
      'index' | 'milestone_id' | 'status' | 'amount_base_units' | 'delivery_deadline' | 'payment_expires_at' | 'escrow_account_address' | 'vault_address' | 'revisions_included'
    >
  >;
};

/**
 * The payment object (`payment` of createOrder / getOrder, createOrderPayment's answer, or the answer of
 * POST /orders/{id}/milestones/fund). `fee_payer` / `sponsored` come with fee sponsorship (absent: the buyer
 * pays); `milestones` lists the milestones a milestone payment funds; `payment_expires_at` its window.
 */
export type VerifiablePayment = {
  /** The fund transaction, base64 (wire format), as the API returns it. */
  transaction: string;
  fee_payer?: string | null;
  sponsored?: boolean;
  milestones?: readonly number[];
  payment_expires_at?: string;
};

export interface VerifyFundTransactionOptions {
  /** The escrow program the buyer trusts (default: the generated client's ESCROW_PROGRAM_ADDRESS, the IDL's). */
  programAddress?: string;
  /**
   * The cluster's clock now, unix seconds (e.g. `getBlockTime(await getSlot())`). The terms' `expires_at` is
   * on the chain clock: it may be at most `chainTime` + the seconds left in the payment window
   * (+ maxClockSkewSeconds). Default: the local clock (a real cluster's clock is within seconds of it; a
   * localnet's may be moved, pass it there).
   */
  chainTime?: number;
  /** Slack on the expiry check, seconds (default 120). */
  maxClockSkewSeconds?: number;
  /** The local clock, ms (tests). */
  now?: number;
}

/** One escrow the transaction funds, as checked. */
export interface VerifiedEscrow {
  milestone: number;
  escrowAddress: string;
  vaultAddress: string;
  amountBaseUnits: bigint;
  expiresAt: number;
}

/** What a verified transaction commits to. */
export interface VerifiedFundTransaction {
  feePayer: string;
  rentPayer: string;
  sponsored: boolean;
  platformAuthority: string;
  tokenProgram: string;
  totalBaseUnits: bigint;
  escrows: VerifiedEscrow[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The 16 bytes of a UUID (its on-chain order / escrow id). */
function uuidBytes(uuid: string): Uint8Array {
  if (!UUID.test(uuid)) throw new TypeError(`not a UUID: ${uuid}`);
  const hex = uuid.replace(/-/g, '');
  return Uint8Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16));
}

const hex = (b: ArrayLike<number>) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** Associated token account of (owner, mint) under `tokenProgram` (the ATA program's PDA). */
async function associatedTokenAddress(owner: Address, mint: Address, tokenProgram: Address): Promise<Address> {
  const enc = getAddressEncoder();
  const [ata] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
    seeds: [enc.encode(owner), enc.encode(tokenProgram), enc.encode(mint)],
  });
  return ata;
}

function expect(code: FundMismatchCode, expected: unknown, actual: unknown, instruction: number | null = null): void {
  if (String(expected) !== String(actual)) throw new FundTransactionMismatchError(code, String(expected), String(actual), instruction);
}

/** The milestones the payment funds: its `milestones`, else the order's milestones awaiting payment, else milestone 1. */
function paidMilestones(order: VerifiableOrder, payment: VerifiablePayment): VerifiableOrder['milestones'][number][] {
  const indexes = payment.milestones?.length
    ? [...payment.milestones]
    : order.milestones.filter((m) => m.status === 'awaiting_payment').map((m) => m.index);
  const wanted = indexes.length ? indexes : [1];
  return wanted.map((i) => {
    const m = order.milestones.find((x) => x.index === i);
    if (!m) throw new TypeError(`the order has no milestone ${i}`);
    return m;
  });
}

/**
 * Check `payment.transaction` against `order` (see the module comment for every check). Resolves with what
 * the transaction commits to; throws FundTransactionMismatchError (the first mismatch) when it commits to
 * anything else, and TypeError when `order` itself is not an order (no such milestone, not a UUID).
 */
export async function verifyFundTransaction(
  order: VerifiableOrder,
  payment: VerifiablePayment,
  options: VerifyFundTransactionOptions = {},
): Promise<VerifiedFundTransaction> {
  const programAddress = address(options.programAddress ?? ESCROW_PROGRAM_ADDRESS);
  const buyer = address(order.buyer_wallet);
  const seller = address(order.seller_wallet);
  const mint = address(order.payment_mint);
  const sponsored = payment.sponsored === true;
  if (sponsored && !payment.fee_payer) throw new TypeError('payment.sponsored without payment.fee_payer');
  const feePayerExpected = sponsored ? address(payment.fee_payer!) : buyer;
  const milestones = paidMilestones(order, payment);

  // ---- the envelope ----
  let message: ReturnType<typeof decompileTransactionMessage>;
  let numSigners: number;
  let staticAccounts: readonly Address[];
  try {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(payment.transaction));
    const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    const lookups = 'addressTableLookups' in compiled ? (compiled.addressTableLookups ?? []) : [];
    if (lookups.length) throw new FundTransactionMismatchError('address-lookup-table', 'none', `${lookups.length} table(s)`);
    numSigners = compiled.header.numSignerAccounts;
    staticAccounts = compiled.staticAccounts;
    message = decompileTransactionMessage(compiled);
  } catch (err) {
    if (err instanceof FundTransactionMismatchError) throw err;
    throw new FundTransactionMismatchError('malformed', 'a serialized Solana transaction', (err as Error).message);
  }
  if ('nonce' in message.lifetimeConstraint) throw new FundTransactionMismatchError('lifetime', 'a recent blockhash', 'a durable nonce');
  const feePayer = message.feePayer.address;
  expect('fee-payer', feePayerExpected, feePayer);

  // ---- the instructions ----
  const instructions = message.instructions as readonly Instruction[];
  let i = 0;
  const native = mint === NATIVE_MINT_ADDRESS;
  const total = milestones.reduce((sum, m) => sum + BigInt(m.amount_base_units), 0n);
  let tokenProgram: Address | null = null;
  const payers = new Set<string>([buyer, feePayerExpected]);
  if (native) {
    // [ATA create_idempotent(payer, buyer wSOL ATA, buyer, native mint), system transfer(buyer -> ATA, total), sync_native(ATA)]
    const [create, transfer, sync] = [instructions[0], instructions[1], instructions[2]];
    if (!create || !transfer || !sync) throw new FundTransactionMismatchError('wrap', 'create wSOL account, transfer, sync', `${instructions.length} instruction(s)`);
    expect('wrap', ASSOCIATED_TOKEN_PROGRAM_ADDRESS, create.programAddress, 0);
    const ca = (create.accounts ?? []).map((a) => a.address);
    expect('wrap', 'create_idempotent (1)', hex(create.data ?? []) === '01' ? 'create_idempotent (1)' : `data ${hex(create.data ?? [])}`, 0);
    if (!payers.has(ca[0]!)) throw new FundTransactionMismatchError('wrap', `payer ${[...payers].join(' or ')}`, `payer ${ca[0]}`, 0);
    expect('wrap', `owner ${buyer}, mint ${mint}`, `owner ${ca[2]}, mint ${ca[3]}`, 0);
    tokenProgram = ca[5] ? address(ca[5]) : null;
    if (tokenProgram !== TOKEN_PROGRAM_ADDRESS && tokenProgram !== TOKEN_2022_PROGRAM_ADDRESS) {
      throw new FundTransactionMismatchError('token-program', `${TOKEN_PROGRAM_ADDRESS} or ${TOKEN_2022_PROGRAM_ADDRESS}`, String(ca[5]), 0);
    }
    const wsol = await associatedTokenAddress(buyer, mint, tokenProgram);
    expect('wrap', `account ${wsol}, system program ${SYSTEM_PROGRAM_ADDRESS}`, `account ${ca[1]}, system program ${ca[4]}`, 0);
    expect('wrap', SYSTEM_PROGRAM_ADDRESS, transfer.programAddress, 1);
    const td = transfer.data ?? new Uint8Array();
    const ta = (transfer.accounts ?? []).map((a) => a.address);
    const lamports = td.length === 12 && hex(Array.from(td).slice(0, 4)) === '02000000' ? new DataView(Uint8Array.from(td).buffer).getBigUint64(4, true) : null;
    expect('wrap', `transfer ${total} lamports ${buyer} -> ${wsol}`, lamports === null ? `system instruction ${hex(td)}` : `transfer ${lamports} lamports ${ta[0]} -> ${ta[1]}`, 1);
    expect('wrap', tokenProgram, sync.programAddress, 2);
    expect('wrap', `sync_native (17) of ${wsol}`, `${hex(sync.data ?? []) === '11' ? 'sync_native (17)' : `data ${hex(sync.data ?? [])}`} of ${sync.accounts?.[0]?.address}`, 2);
    i = 3;
  }

  if (instructions.length !== i + milestones.length) {
    // an instruction too many (a transfer to someone, another program) or too few
    const foreign = instructions.findIndex((ix, at) => at >= i && ix.programAddress !== programAddress);
    if (foreign >= 0) {
      throw new FundTransactionMismatchError('unexpected-instruction', 'only fund_milestone of the escrow program', `an instruction of program ${instructions[foreign]!.programAddress}`, foreign);
    }
    throw new FundTransactionMismatchError('instruction-count', `${milestones.length} fund_milestone`, String(instructions.length - i));
  }

  const configAddress = (await findConfigPda({ programAddress }))[0];
  let platformAuthority: string | null = null;
  let rentPayer: string | null = null;
  const escrows: VerifiedEscrow[] = [];
  for (const [k, m] of milestones.entries()) {
    const at = i + k;
    const ix = instructions[at]!;
    expect('program-id', programAddress, ix.programAddress, at);
    let parsed: ReturnType<typeof parseFundMilestoneInstruction>;
    try {
      const data = ix.data ?? new Uint8Array();
      if (identifyEscrowInstruction(data) !== EscrowInstruction.FundMilestone) throw new Error('not fund_milestone');
      parsed = parseFundMilestoneInstruction({ programAddress: ix.programAddress, accounts: ix.accounts ?? [], data });
    } catch (err) {
      throw new FundTransactionMismatchError('unexpected-instruction', 'fund_milestone', `an escrow instruction that is not a valid fund_milestone (${(err as Error).message})`, at);
    }
    // by NAME: a regenerated client with more accounts (rent_payer) keeps these and adds its own
    const acc = parsed.accounts as unknown as Record<string, { address: Address } | undefined>;
    const d = parsed.data;
    const escrowId = uuidBytes(m.milestone_id);
    expect('escrow-id', hex(escrowId), hex(d.escrowId), at);
    expect('order-id', hex(uuidBytes(order.order_id)), hex(d.parentOrderId), at);
    expect('milestone', m.index, d.milestoneIndex, at);
    expect('amount', BigInt(m.amount_base_units), d.amount, at);
    expect('mint', mint, acc.mint?.address, at);
    expect('seller', seller, acc.seller?.address, at);
    expect('buyer', buyer, acc.buyer?.address, at);
    const tp = acc.tokenProgram?.address;
    if (tp !== TOKEN_PROGRAM_ADDRESS && tp !== TOKEN_2022_PROGRAM_ADDRESS) {
      throw new FundTransactionMismatchError('token-program', `${TOKEN_PROGRAM_ADDRESS} or ${TOKEN_2022_PROGRAM_ADDRESS}`, String(tp), at);
    }
    if (tokenProgram) expect('token-program', tokenProgram, tp, at);
    tokenProgram = tp;
    expect('buyer-token-account', await associatedTokenAddress(buyer, mint, tp), acc.buyerTokenAccount?.address, at);
    const [escrowPda] = await findOrderPda({ orderId: escrowId }, { programAddress });
    expect('escrow', m.escrow_account_address, escrowPda, at);
    expect('escrow', escrowPda, acc.order?.address, at);
    expect('vault', m.vault_address, await associatedTokenAddress(escrowPda, mint, tp), at);
    expect('vault', m.vault_address, acc.vault?.address, at);
    expect('config', configAddress, acc.config?.address, at);
    expect('associated-token-program', ASSOCIATED_TOKEN_PROGRAM_ADDRESS, acc.associatedTokenProgram?.address, at);
    expect('system-program', SYSTEM_PROGRAM_ADDRESS, acc.systemProgram?.address, at);
    if (m.delivery_deadline === null) throw new FundTransactionMismatchError('delivery-deadline', 'a funded milestone\'s deadline', `milestone ${m.index} is scheduled (no deadline)`, at);
    expect('delivery-deadline', seconds(m.delivery_deadline), d.deliveryDeadline, at);
    expect('review-window', order.review_window_seconds, d.reviewWindow, at);
    expect('revisions', m.revisions_included, d.revisionsIncluded, at);
    const windowEnd = seconds(payment.payment_expires_at ?? m.payment_expires_at ?? order.payment_expires_at);
    const now = (options.now ?? Date.now()) / 1000;
    const chainNow = options.chainTime ?? now;
    const latest = Math.ceil(chainNow + (windowEnd - now) + (options.maxClockSkewSeconds ?? 120));
    if (Number(d.expiresAt) > latest) throw new FundTransactionMismatchError('expiry', `at most ${latest}`, String(d.expiresAt), at);
    const authority = acc.platformAuthority?.address;
    if (platformAuthority !== null) expect('signer', `platform authority ${platformAuthority}`, `platform authority ${authority}`, at);
    platformAuthority = authority ?? null;
    // rent_payer (issue 26, fee sponsorship): absent from an older program, where the buyer pays the rent
    const rp = acc.rentPayer?.address ?? acc.buyer?.address;
    if (rp !== buyer && rp !== feePayerExpected) throw new FundTransactionMismatchError('rent-payer', sponsored ? `${buyer} or ${feePayerExpected}` : buyer, String(rp), at);
    if (rentPayer !== null) expect('rent-payer', rentPayer, rp, at);
    rentPayer = rp ?? null;
    escrows.push({ milestone: m.index, escrowAddress: escrowPda, vaultAddress: m.vault_address, amountBaseUnits: d.amount, expiresAt: Number(d.expiresAt) });
  }
  // ---- who signs: the buyer, the fee payer, the platform authority; nobody else ----
  const allowed = new Set<string>([buyer, feePayer, platformAuthority!]);
  for (const signer of staticAccounts.slice(0, numSigners)) {
    if (!allowed.has(signer)) throw new FundTransactionMismatchError('signer', [...allowed].join(', '), signer);
  }
  const roles = instructions.flatMap((ix) => ix.accounts ?? []);
  const platformRole = roles.find((a) => a.address === platformAuthority)?.role;
  if (platformRole !== AccountRole.READONLY_SIGNER && platformRole !== AccountRole.WRITABLE_SIGNER) {
    throw new FundTransactionMismatchError('signer', `platform authority ${platformAuthority} signs`, 'it does not');
  }

  return {
    feePayer,
    rentPayer: rentPayer!,
    sponsored,
    platformAuthority: platformAuthority!,
    tokenProgram: tokenProgram!,
    totalBaseUnits: total,
    escrows,
  };
}
