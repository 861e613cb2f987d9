/**
 * EscrowClient: the service's side of the Anchor escrow program (programs/escrow, IDL
 * `@bazaar/escrow-idl`). Instructions are built with Anchor's methods builder and sent with
 * ./tx.ts (polling confirmation, no websockets).
 *
 * Roles: the service keypair is the platform authority (co-signs `fund` and `fund_milestone`, signs
 * mark_delivered, release, claim, open_dispute, refund, request_revision, extend_deadline and the
 * settlement instructions for a party), the arbiter in dev (resolve_dispute) unless an arbiter keypair
 * is given, and the fee payer of everything except funding (the buyer pays that). A party signing with
 * her own wallet gets an unsigned transaction (`buildPartyTransaction`, `buildFundMilestonesTransaction`).
 *
 * Units: `amount` u64 base units (bigint); deadlines unix seconds; windows seconds; bps 0..10000.
 * Errors: DomainError('chain-unavailable') when the RPC is unreachable or a confirmation times out;
 * DomainError('chain-transaction-failed', detail, { program_error: '<AnchorErrorName>', ... })
 * when the program rejects (an error of its IDL, e.g. OrderNotFunded, ReviewWindowNotElapsed, MintNotAllowed).
 */
import { createRequire } from 'node:module';
import bs58 from 'bs58';
import { AnchorProvider, type BN as AnchorBN, type BorshCoder, Program, type Idl } from '@coral-xyz/anchor';
import {
  type Commitment,
  type Connection,
  type Keypair,
  PublicKey,
  SYSVAR_CLOCK_PUBKEY,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  ASSOCIATED_TOKEN_PROGRAM_ID,
  ExtensionType,
  NATIVE_MINT,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createSyncNativeInstruction,
  getAccountLen,
  getAccountTypeOfMintType,
  getExtensionTypes,
  getMint,
} from '@solana/spl-token';
import { DomainError } from '../errors.js';
import { associatedTokenAddress, bytesToUuid, configPda, orderIdBytes, orderPda, programDataAddress, vaultAddress } from './pda.js';
import { blockhashExpired, transactionOutcome, type RecordedAttempt, type TxOutcome } from './recorded-send.js';
import { rpc, sendAndConfirm, sendRawAndConfirm, type ConfirmOptions } from './tx.js';
import { partialSignTransaction } from './sign.js';
import type { CurrencyInfo, TxResult } from './types.js';
import type { TranslateContext } from './errors.js';
import { type EscrowProgramContext, type EscrowSettlement, settlementFromTransaction } from './settlement.js';
import { ProgramSubscription, type ProgramSubscriptionOptions } from './pubsub.js';
import type { Escrow } from '@bazaar/escrow-idl/types';

// Anchor's CJS entry (what Node's ESM loader sees under tsx) does not expose BN as a named export.
const BN: typeof AnchorBN = createRequire(import.meta.url)('@coral-xyz/anchor').BN;
type BN = AnchorBN;

export type OrderId = string | Uint8Array | number[];
export type EscrowState = 'funded' | 'delivered' | 'disputed';

/** The decoded order account (addresses base58, amounts bigint, times unix seconds). */
export interface EscrowOrder {
  address: string;
  orderId: string;
  buyer: string;
  seller: string;
  mint: string;
  amount: bigint;
  feeBps: number;
  treasury: string;
  state: EscrowState;
  fundedAt: number;
  deliveryDeadline: number;
  /** null while not delivered */
  deliveredAt: number | null;
  /** null while not disputed */
  disputedAt: number | null;
  reviewWindow: number;
  rentPayer: string;
  bump: number;
  /** layout version (the program's ORDER_VERSION, 2) */
  version: number;
  /** the order this escrow is a milestone of (UUID; equal to `orderId` for milestone 1 and one-milestone orders) */
  parentOrderId: string;
  /** 1..10 */
  milestoneIndex: number;
  /** revisions the buyer may request (request_revision), co-signed at funding */
  revisionsIncluded: number;
  revisionsUsed: number;
  /** the pending settlement by agreement, null when none (an expired one stays until replaced, withdrawn or closed) */
  settlement: SettlementProposal | null;
}

/** A settlement by agreement pending on an escrow (order account version 2). */
export interface SettlementProposal {
  proposedBy: 'buyer' | 'seller';
  /** basis points of the amount to the buyer, 0..10000 (10000 = cancel) */
  buyerBps: number;
  /** unix seconds (chain clock); acceptable while now < expiresAt */
  expiresAt: number;
}

/** A party an escrow payout pays to (its associated token account of the order's mint). */
export interface Payee {
  role: 'buyer' | 'seller' | 'treasury';
  owner: PublicKey;
}

/**
 * Decides whether the service may create a payee's missing associated token account (paying its rent)
 * before a payout; resolves to allow, throws to refuse (nothing is signed then). modules/budget
 * `sponsorPayeeAccount` is the service's policy (docs/threat-model.md#who-pays-for-what-on-chain).
 */
export type PayeeAccountPolicy = (p: {
  role: Payee['role'];
  owner: string;
  mint: string;
  tokenAccount: string;
  orderId: string;
  /** the payout instruction about to be sent */
  instruction: OrderInstructionName;
}) => Promise<void>;

export interface EscrowConfig {
  address: string;
  admin: string;
  platformAuthority: string;
  arbiter: string;
  treasury: string;
  feeBps: number;
  /** seconds */
  defaultReviewWindow: number;
  /** seconds: longest review window `fund` accepts */
  maxReviewWindow: number;
  /** seconds: `fund` refuses a delivery deadline further than this from the chain's now */
  maxDeliveryWindow: number;
  allowedMints: string[];
  bump: number;
  /**
   * layout version (the program's CONFIG_VERSION, 1); 0: a first-release config read through the current
   * layout, which every instruction refuses until `migrateConfig` (its windows then read 0)
   */
  version: number;
}

export interface FundTerms {
  orderId: OrderId;
  buyer: string;
  seller: string;
  mint: string;
  /** base units */
  amount: bigint;
  /** unix seconds */
  deliveryDeadline: number;
  /** seconds; 0 = the config's default review window (program rule); at most config.maxReviewWindow */
  reviewWindow: number;
  /**
   * unix seconds on the chain clock: the program refuses the co-signed terms after this
   * (FundTermsExpired) and more than one day ahead (FundTermsLifetimeTooLong)
   */
  expiresAt: number;
  /**
   * Milestones (issue 24): with `parentOrderId` the escrow is funded by `fund_milestone`, which also
   * records the order it belongs to (= orderId for milestone 1), its index (1..10) and the revisions the
   * buyer may request (the program refuses `request_revision` beyond them). Without it: plain `fund`
   * (milestone 1 of 1, no revisions; what custodial funding and older callers send).
   */
  parentOrderId?: OrderId;
  milestoneIndex?: number;
  revisionsIncluded?: number;
}

/**
 * Milliseconds per block assumed when a blockhash lifetime (blocks) is turned into a time: below the
 * 400 ms slot target and every observed cluster average, and skipped slots only make blocks slower,
 * so the time computed is never later than the real expiry.
 */
export const CONSERVATIVE_MS_PER_BLOCK = 350;
/** kept off the end of a fund transaction's validity for the buyer's signing and sending round trip */
export const FUND_VALIDITY_MARGIN_MS = 2_000;
/**
 * Why a recent blockhash may serve several fund transactions (`EscrowClientOptions.blockhashReuseMs`, the
 * server's SOLANA_BLOCKHASH_REUSE_MS, 1 s by default there): a blockhash stays valid for 150 blocks (about
 * 60 s); reusing one for a second costs at most a second of that lifetime, which validUntil accounts for (it
 * counts from when the blockhash was ASKED), and saves two RPC round trips per order under load. Two fund
 * transactions of one order on one blockhash are the same transaction (same signature): paid once.
 * Off (0) where the cluster's clock jumps (the localnet's warps in tests) or by configuration.
 */
export const DEFAULT_BLOCKHASH_REUSE_MS = 0;

/** A recent blockhash, the block height it was read at, and when it was asked for (ms since the epoch). */
export interface RecentBlockhash {
  blockhash: string;
  lastValidBlockHeight: number;
  /** blocks left before `lastValidBlockHeight` when it was read */
  blocksLeft: number;
  /** Date.now() when the RPC was asked (validUntil counts from here) */
  askedAt: number;
}

/** Options of a fund transaction (`buildFundTransaction`, `fundingNeeds`). */
export interface FundOptions {
  /**
   * The fee sponsor's address (must be the client's `sponsor` key): it becomes the fee payer and the
   * `rent_payer` of every `fund_milestone`, and the client signs as it. Absent: the buyer pays both.
   * Only `fund_milestone` (terms with `parentOrderId`) and SPL/Token-2022 mints other than wrapped SOL
   * can be sponsored (TypeError otherwise: a wrapped-SOL buyer holds SOL by definition).
   */
  sponsor?: PublicKey;
}

export interface FundTransaction {
  /**
   * base64 wire transaction: fee payer = buyer (or the sponsor), recent blockhash set, signed by the
   * platform authority (and the sponsor); the buyer's signature is the one missing
   */
  transaction: string;
  blockhash: string;
  lastValidBlockHeight: number;
  /**
   * Last moment the transaction can land: (lastValidBlockHeight - current block height) blocks at
   * CONSERVATIVE_MS_PER_BLOCK each, minus FUND_VALIDITY_MARGIN_MS, from the service clock.
   */
  validUntil: Date;
  /** the order PDA */
  escrowAddress: string;
  vaultAddress: string;
}

/** What a fund transaction takes from the buyer wallet and what it holds (see `EscrowClient.fundingNeeds`). */
export interface FundingNeeds {
  /** lamports: network fee + rent of the escrow accounts and vaults created (+ wrap rent and amount for wrapped SOL) */
  lamports: bigint;
  /**
   * Sponsored (`{ sponsor }`): the fee + rent the sponsor pays (then `lamports` is 0: the buyer's wallet
   * needs no SOL). Absent when not sponsored.
   */
  sponsorLamports?: bigint;
  /** lamports of `lamports` that are the wrapped amount itself (0 unless wrapped SOL) */
  amountInLamports: bigint;
  lamportsBalance: bigint;
  /** base units in the buyer's associated token account (0 when missing); null for wrapped SOL */
  tokenBalance: bigint | null;
}

export interface InitializeConfigArgs {
  /** signs initialize_config (and pays); must be the program's upgrade authority; becomes config.admin */
  admin: Keypair;
  platformAuthority: string;
  arbiter: string;
  treasury: string;
  feeBps: number;
  /** seconds */
  defaultReviewWindow: number;
  /** seconds, >= defaultReviewWindow and <= 365 days */
  maxReviewWindow: number;
  /** seconds, 1 ..= 3 * 365 days */
  maxDeliveryWindow: number;
  allowedMints: string[];
}

export interface EscrowClientOptions {
  connection: Connection;
  idl: Idl;
  /** overrides the IDL's address (own deployments) */
  programId?: string;
  /** platform authority, fee payer */
  service: Keypair;
  /** resolve_dispute signer; defaults to the service keypair (dev) */
  arbiter?: Keypair;
  /**
   * Fee sponsor (issue 26 item 5): a dedicated key, not the service keypair, that pays the network fee
   * and the rent of the escrow accounts of the fund transactions built with `{ sponsor }` (it is their
   * fee payer and `fund_milestone`'s `rent_payer`, and gets the rent back when each escrow closes).
   * Absent: no transaction can be sponsored.
   */
  sponsor?: Keypair;
  currencies?: CurrencyInfo[];
  commitment?: Commitment;
  confirm?: ConfirmOptions;
  /** PubSub websocket endpoint (`watchOrders`); absent: no subscriptions */
  wsUrl?: ProgramSubscriptionOptions['wsUrl'];
  /** ms one recent blockhash serves the fund transactions built after it (default DEFAULT_BLOCKHASH_REUSE_MS, 0: a fresh one per transaction) */
  blockhashReuseMs?: number;
}

/** What `EscrowClient.watchOrders` reports (see there). */
export interface OrderWatchHandlers {
  /** an order account was written (funded, or changed state) at `slot`: the order's UUID and the account as written (null when undecodable) */
  onOrder: (orderId: string, slot: number, order: EscrowOrder | null) => void;
  /** the subscription is (again) live; writes while it was not were not reported */
  onSubscribed?: () => void;
  /** a live subscription was lost; it is being retried */
  onDown?: (reason: string) => void;
}

/**
 * Allocated sizes (bytes, discriminator included) of accounts written by earlier versions of the escrow
 * program, which carry no version byte (programs/escrow/src/state/legacy.rs): the first release's config
 * (407) and the unreleased one with the windows in the middle (423); the first release's order (236).
 */
export const LEGACY_CONFIG_SIZES: readonly number[] = [407, 423];
/** the first release's order (236 bytes) and version 1 (237: the version byte appended, until issue 24) */
export const LEGACY_ORDER_SIZES: readonly number[] = [236, 237];

/** The escrow instructions on an existing order account (the IDL's names), see `orderInstruction`. */
export type OrderInstructionName =
  | 'mark_delivered'
  | 'release'
  | 'claim'
  | 'open_dispute'
  | 'resolve_dispute'
  | 'refund'
  | 'request_revision'
  | 'extend_deadline'
  | 'propose_settlement'
  | 'accept_settlement'
  | 'withdraw_settlement';

/**
 * Arguments of the instructions on an existing order that take some (units: bps 0..10000, unix seconds):
 * resolve_dispute / accept_settlement `buyerBps`; extend_deadline `newDeadline`; propose_settlement
 * `buyerBps`, `expiresAt` (now < expiresAt <= now + 7 days) and `proposedBy` (the party proposing; required
 * when the platform signs for her, else the signer's own role).
 */
export interface OrderInstructionArgs {
  buyerBps?: number;
  newDeadline?: number;
  expiresAt?: number;
  proposedBy?: 'buyer' | 'seller';
}

/** snake_case -> camelCase at the type level (the IDL type names instructions in camelCase). */
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
/** Every instruction of the escrow IDL (camelCase), from programs/escrow/idl/escrow.ts. */
type IdlInstruction = Escrow['instructions'][number]['name'];
/** The instructions this client sends: on an order (`OrderInstructionName`), funding, config and migration. */
type ClientInstruction = OrderInstructionName | 'fund' | 'fund_milestone' | 'initialize_config' | 'migrate_config' | 'migrate_order';
/**
 * Compile-time check both ways: every instruction this client names exists in the IDL, and every IDL
 * instruction is one this client knows (`update_config` is the admin's, sent by the operator's tools),
 * so a program instruction added, renamed or removed without the client is a type error here.
 */
const idlInstructionsCovered: [Camel<ClientInstruction>] extends [IdlInstruction]
  ? [IdlInstruction] extends [Camel<ClientInstruction> | 'updateConfig']
    ? true
    : never
  : never = true;
void idlInstructionsCovered;

/** `proposed_by` on chain: 1 buyer, 2 seller (programs/escrow state/order.rs PARTY_*). */
const PARTY_CODE = { buyer: 1, seller: 2 } as const;

/** Terms of one milestone escrow (`fund_milestone`): FundTerms' units; `escrowId` is the PDA seed. */
export interface MilestoneFundTerms {
  /** the milestone's own UUID (for milestone 1: the order's id) */
  escrowId: OrderId;
  /** base units */
  amount: bigint;
  /** unix seconds */
  deliveryDeadline: number;
  /** seconds; 0 = the config's default */
  reviewWindow: number;
  /** 1..10; 1 exactly when escrowId is the order's id (the program's InvalidMilestone) */
  milestoneIndex: number;
  /** 0..255 */
  revisionsIncluded: number;
}

/**
 * The buyer's one transaction funding several milestone escrows of one order: one `fund_milestone`
 * instruction per milestone, one buyer and one platform signature. `expiresAt` as FundTerms (one
 * value for every milestone of the transaction).
 */
export interface FundMilestonesTerms {
  /** the order's id = its first milestone's escrow id */
  parentOrderId: OrderId;
  buyer: string;
  seller: string;
  mint: string;
  /** unix seconds on the chain clock (FundTermsExpired / FundTermsLifetimeTooLong) */
  expiresAt: number;
  milestones: MilestoneFundTerms[];
  /**
   * base58: who pays (and gets back) the rent of the escrow accounts, `fund_milestone`'s `rent_payer`
   * (a signer): the fee sponsor; absent = the buyer
   */
  rentPayer?: string;
}

/** An unsigned transaction for a party's own wallet (base64 wire bytes; fee payer = that party). */
export interface PartyTransaction {
  transaction: string;
  blockhash: string;
  lastValidBlockHeight: number;
}

function toNumber(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (BN.isBN(v)) return (v as BN).toNumber();
  return Number(v);
}

function optTime(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  const n = toNumber(v);
  return n === 0 ? null : n;
}

function settlementOf(v: { proposedBy: number; buyerBps: number; expiresAt: unknown }): SettlementProposal | null {
  const by = toNumber(v.proposedBy);
  if (by !== PARTY_CODE.buyer && by !== PARTY_CODE.seller) return null;
  return { proposedBy: by === PARTY_CODE.buyer ? 'buyer' : 'seller', buyerBps: toNumber(v.buyerBps), expiresAt: toNumber(v.expiresAt) };
}

function stateName(v: unknown): EscrowState {
  const key = typeof v === 'object' && v ? Object.keys(v)[0] : String(v);
  return key.toLowerCase() as EscrowState;
}

export class EscrowClient {
  readonly connection: Connection;
  /** typed from the IDL (programs/escrow/idl/escrow.ts): a renamed account or argument is a compile error */
  readonly program: Program<Escrow>;
  readonly programId: PublicKey;
  readonly service: Keypair;
  readonly arbiter: Keypair;
  /** fee sponsor (EscrowClientOptions.sponsor) */
  private readonly sponsor?: Keypair;
  readonly commitment: Commitment;
  /** PubSub endpoint (undefined: `watchOrders` is unavailable) */
  readonly wsUrl?: ProgramSubscriptionOptions['wsUrl'];
  private readonly tokenPrograms = new Map<string, PublicKey>();
  /** rent-exempt minimum per account size, lamports (read from the RPC once per size) */
  private readonly rents = new Map<number, bigint>();
  private readonly blockhashReuseMs: number;
  private blockhashInFlight: Promise<RecentBlockhash> | null = null;
  private blockhashCached: RecentBlockhash | null = null;
  private readonly errorNames: Map<number, string>;
  private readonly confirmDefaults: ConfirmOptions;

  constructor(opts: EscrowClientOptions) {
    this.connection = opts.connection;
    this.service = opts.service;
    this.arbiter = opts.arbiter ?? opts.service;
    this.sponsor = opts.sponsor;
    this.commitment = opts.commitment ?? 'confirmed';
    this.confirmDefaults = opts.confirm ?? {};
    this.wsUrl = opts.wsUrl;
    this.blockhashReuseMs = opts.blockhashReuseMs ?? DEFAULT_BLOCKHASH_REUSE_MS;
    const idl = { ...opts.idl, address: opts.programId ?? (opts.idl as { address: string }).address } as Idl;
    this.programId = new PublicKey(idl.address);
    const kp = opts.service;
    const wallet = {
      publicKey: kp.publicKey,
      payer: kp,
      signTransaction: async <T extends Transaction | VersionedTransaction>(tx: T): Promise<T> => {
        if (tx instanceof VersionedTransaction) tx.sign([kp]);
        else partialSignTransaction(tx, kp);
        return tx;
      },
      signAllTransactions: async <T extends Transaction | VersionedTransaction>(txs: T[]): Promise<T[]> => {
        for (const tx of txs) {
          if (tx instanceof VersionedTransaction) tx.sign([kp]);
          else partialSignTransaction(tx, kp);
        }
        return txs;
      },
    };
    const provider = new AnchorProvider(opts.connection, wallet, { commitment: this.commitment, preflightCommitment: this.commitment });
    this.program = new Program<Escrow>(idl as unknown as Escrow, provider);
    this.errorNames = new Map((idl.errors ?? []).map((e) => [e.code, e.name]));
    for (const c of opts.currencies ?? []) {
      this.tokenPrograms.set(c.mint, new PublicKey(c.tokenProgram ?? TOKEN_PROGRAM_ID));
    }
  }

  /** Error-translation context for this program. */
  errorContext(action?: string): TranslateContext {
    return { programId: this.programId.toBase58(), programErrors: this.errorNames, action };
  }

  // ---------------------------------------------------------------- addresses

  configAddress(): PublicKey {
    return configPda(this.programId);
  }

  orderAddress(orderId: OrderId): PublicKey {
    return orderPda(this.programId, orderId);
  }

  /** Escrow (order PDA) and vault addresses of an order, without RPC. */
  addresses(orderId: OrderId, mint: string, tokenProgram?: string): { escrow: string; vault: string } {
    const order = this.orderAddress(orderId);
    const tp = tokenProgram ? new PublicKey(tokenProgram) : (this.tokenPrograms.get(mint) ?? TOKEN_PROGRAM_ID);
    return { escrow: order.toBase58(), vault: vaultAddress(order, mint, tp).toBase58() };
  }

  /** Token program owning `mint` (configured currencies first, else read from chain and cached). */
  async tokenProgramOf(mint: string): Promise<PublicKey> {
    const known = this.tokenPrograms.get(mint);
    if (known) return known;
    const info = await rpc(() => this.connection.getAccountInfo(new PublicKey(mint), this.commitment), this.errorContext('reading the mint'));
    if (!info) throw new DomainError('chain-transaction-failed', `mint ${mint} does not exist`, { program_error: 'MintNotFound' });
    this.tokenPrograms.set(mint, info.owner);
    return info.owner;
  }

  // ---------------------------------------------------------------- reads

  /** The decoded order account, or null when it does not exist (never funded, or closed). */
  async fetchOrder(orderId: OrderId): Promise<EscrowOrder | null> {
    const address = this.orderAddress(orderId);
    const acc = await rpc(
      () => this.program.account.order.fetchNullable(address, this.commitment),
      this.errorContext('reading the escrow order'),
    );
    return acc ? this.toEscrowOrder(address, acc) : null;
  }

  /**
   * Several order accounts in as few reads as the RPC allows (getMultipleAccounts takes at most 100 keys):
   * each id to its decoded account, null when it does not exist (never funded, or closed) or does not
   * decode as an order.
   */
  async fetchOrders(orderIds: readonly string[]): Promise<Map<string, EscrowOrder | null>> {
    const out = new Map<string, EscrowOrder | null>();
    for (let i = 0; i < orderIds.length; i += 100) {
      const ids = orderIds.slice(i, i + 100);
      const addresses = ids.map((id) => this.orderAddress(id));
      const infos = await rpc(() => this.connection.getMultipleAccountsInfo(addresses, this.commitment), this.errorContext('reading the escrow orders'));
      ids.forEach((id, k) => {
        const info = infos[k];
        let order: EscrowOrder | null = null;
        if (info && info.owner.equals(this.programId)) {
          try {
            order = this.decodeOrder(addresses[k]!, info.data);
          } catch {
            order = null;
          }
        }
        out.set(id, order);
      });
    }
    return out;
  }

  /** An order account's data (discriminator included) decoded; throws on data of another account. */
  decodeOrder(address: PublicKey, data: Buffer): EscrowOrder {
    return this.toEscrowOrder(address, this.program.coder.accounts.decode('order', data));
  }

  private toEscrowOrder(address: PublicKey, a: Awaited<ReturnType<EscrowClient['program']['account']['order']['fetch']>>): EscrowOrder {
    return {
      address: address.toBase58(),
      orderId: bytesToUuid(a.orderId),
      buyer: a.buyer.toBase58(),
      seller: a.seller.toBase58(),
      mint: a.mint.toBase58(),
      amount: BigInt(a.amount.toString()),
      feeBps: toNumber(a.feeBps),
      treasury: a.treasury.toBase58(),
      state: stateName(a.state),
      fundedAt: toNumber(a.fundedAt),
      deliveryDeadline: toNumber(a.deliveryDeadline),
      deliveredAt: optTime(a.deliveredAt),
      disputedAt: optTime(a.disputedAt),
      reviewWindow: toNumber(a.reviewWindow),
      rentPayer: a.rentPayer.toBase58(),
      bump: toNumber(a.bump),
      version: toNumber(a.version),
      parentOrderId: bytesToUuid(a.parentOrderId),
      milestoneIndex: toNumber(a.milestoneIndex),
      revisionsIncluded: toNumber(a.revisionsIncluded),
      revisionsUsed: toNumber(a.revisionsUsed),
      settlement: settlementOf(a.settlement),
    };
  }

  /**
   * Watch every order account of the program over the PubSub websocket: one `programSubscribe` on
   * the escrow program, filtered (memcmp at offset 0) to the `Order` account discriminator, whatever
   * the number of orders. `onOrder` gets the order id (bytes 8..24 of the account, the UUID) of each
   * order account written: funded (created), delivered, disputed. Closed accounts are not reported
   * (they no longer belong to the program). The caller starts and stops the returned subscription;
   * it reconnects with back-off on its own (chain/pubsub.ts). Null without `wsUrl`.
   */
  watchOrders(handlers: OrderWatchHandlers, opts: Pick<ProgramSubscriptionOptions, 'backoff' | 'heartbeatMs' | 'log'> = {}): ProgramSubscription | null {
    if (!this.wsUrl) return null;
    const accounts = (this.program.idl.accounts ?? []) as Array<{ name: string; discriminator: number[] }>;
    const discriminator = accounts.find((a) => a.name.toLowerCase() === 'order')?.discriminator;
    if (!discriminator) throw new Error('the escrow IDL has no Order account');
    return new ProgramSubscription({
      ...opts,
      wsUrl: this.wsUrl,
      programId: this.programId.toBase58(),
      commitment: this.commitment,
      filters: [{ memcmp: { offset: 0, bytes: bs58.encode(Uint8Array.from(discriminator)) } }],
      onChange: (c) => {
        if (c.data.length < 24) return;
        let order: EscrowOrder | null = null;
        try {
          order = this.decodeOrder(new PublicKey(c.pubkey), c.data);
        } catch {
          // an account layout this client does not know: the order is read back instead
        }
        handlers.onOrder(bytesToUuid(c.data.subarray(8, 24)), c.slot, order);
      },
      onSubscribed: handlers.onSubscribed,
      onDown: handlers.onDown,
    });
  }

  /** The decoded config account, or null before initialize_config. */
  async fetchConfig(): Promise<EscrowConfig | null> {
    const address = this.configAddress();
    const acc = await rpc(
      () => this.program.account.config.fetchNullable(address, this.commitment),
      this.errorContext('reading the escrow config'),
    );
    if (!acc) return null;
    const a = acc;
    return {
      address: address.toBase58(),
      admin: a.admin.toBase58(),
      platformAuthority: a.platformAuthority.toBase58(),
      arbiter: a.arbiter.toBase58(),
      treasury: a.treasury.toBase58(),
      feeBps: toNumber(a.feeBps),
      defaultReviewWindow: toNumber(a.defaultReviewWindow),
      maxReviewWindow: toNumber(a.maxReviewWindow),
      maxDeliveryWindow: toNumber(a.maxDeliveryWindow),
      allowedMints: a.allowedMints.map((m) => m.toBase58()),
      bump: toNumber(a.bump),
      version: toNumber(a.version),
    };
  }

  /**
   * A recent blockhash for a transaction built now: the last one read when it was asked for less than
   * `blockhashReuseMs` ago, else one getLatestBlockhash + getBlockHeight (concurrent callers share the
   * read in flight). `fresh`: never the kept one (a read started after this call). Throws chain-unavailable
   * (`action` names what was being done) when the RPC fails; a failed read is not kept.
   */
  async recentBlockhash(action: string, opts: { fresh?: boolean } = {}): Promise<RecentBlockhash> {
    const cached = this.blockhashCached;
    if (!opts.fresh && cached && Date.now() - cached.askedAt < this.blockhashReuseMs) return cached;
    if (opts.fresh && this.blockhashInFlight) await this.blockhashInFlight.catch(() => undefined);
    this.blockhashInFlight ??= (async () => {
      const askedAt = Date.now();
      try {
        const [latest, height] = await rpc(
          () => Promise.all([this.connection.getLatestBlockhash(this.commitment), this.connection.getBlockHeight(this.commitment)]),
          this.errorContext(action),
        );
        const fresh = { blockhash: latest.blockhash, lastValidBlockHeight: latest.lastValidBlockHeight, blocksLeft: Math.max(0, latest.lastValidBlockHeight - height), askedAt };
        if (this.blockhashReuseMs > 0) this.blockhashCached = fresh;
        return fresh;
      } finally {
        this.blockhashInFlight = null;
      }
    })();
    return this.blockhashInFlight;
  }

  /** Cluster unix time (seconds) from the Clock sysvar, i.e. what the program sees. */
  async chainNow(): Promise<number> {
    const info = await rpc(() => this.connection.getAccountInfo(SYSVAR_CLOCK_PUBKEY, this.commitment), this.errorContext('reading the clock'));
    if (!info) throw new DomainError('chain-unavailable', 'the Clock sysvar is missing');
    // Clock: slot u64, epoch_start_timestamp i64, epoch u64, leader_schedule_epoch u64, unix_timestamp i64
    return Number(info.data.readBigInt64LE(32));
  }

  /** 'confirmed' | 'failed' | 'unknown' (no record of the signature yet) for reconciliation. */
  async signatureStatus(signature: string): Promise<'confirmed' | 'failed' | 'unknown'> {
    const st = await rpc(
      () => this.connection.getSignatureStatuses([signature], { searchTransactionHistory: true }),
      this.errorContext('reading a signature status'),
    );
    const s = st.value[0];
    if (!s) return 'unknown';
    if (s.err) return 'failed';
    if (s.confirmationStatus === 'processed') return 'unknown';
    return 'confirmed';
  }

  /** The program id, IDL and coder: what decoding escrow instructions in a transaction needs (./settlement.ts `escrowInstructions`). */
  programContext(): EscrowProgramContext {
    return { programId: this.programId, idl: this.program.idl, coder: this.program.coder as BorshCoder };
  }

  /**
   * How an order's escrow was settled, from the chain's record of THAT order (see ./settlement.ts):
   * the terminal instruction acting on its PDA, the program event for it and the tokens that left
   * its vault per payee (base units). With `signature`, only that transaction is read; otherwise the
   * newest successful transactions touching the PDA (up to `limit`, default 20), newest first.
   * null when none of them closed the order. Throws chain-unavailable when the RPC is unreachable.
   */
  async findSettlement(orderId: OrderId, mint: string, opts: { signature?: string; limit?: number } = {}): Promise<EscrowSettlement | null> {
    const order = this.orderAddress(orderId);
    const tokenProgram = await this.tokenProgramOf(mint);
    const ctx = {
      ...this.programContext(),
      order,
      vault: vaultAddress(order, mint, tokenProgram),
    };
    const read = async (signature: string) => {
      const tx = await rpc(
        () => this.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }),
        this.errorContext('reading a settlement transaction'),
      );
      return tx ? settlementFromTransaction(tx, signature, ctx) : null;
    };
    if (opts.signature) return read(opts.signature);
    const sigs = await rpc(
      () => this.connection.getSignaturesForAddress(order, { limit: opts.limit ?? 20 }, 'confirmed'),
      this.errorContext('reading the escrow history'),
    );
    for (const s of sigs) {
      if (s.err) continue;
      const found = await read(s.signature);
      if (found) return found;
    }
    return null;
  }

  // ---------------------------------------------------------------- instruction building

  /**
   * The accounts of an existing order's instructions, from its account on chain: the order PDA and
   * vault, the config PDA, the mint and its token program, the parties' associated token accounts and
   * the rent payer recorded by `fund`. Throws chain-transaction-failed when the order account does not exist.
   */
  private async orderAccounts(orderId: OrderId) {
    const o = await this.orderOrThrow(orderId);
    const order = this.orderAddress(orderId);
    const mint = new PublicKey(o.mint);
    const tokenProgram = await this.tokenProgramOf(o.mint);
    const ata = (owner: string) => associatedTokenAddress(owner, mint, tokenProgram);
    return {
      owners: { buyer: new PublicKey(o.buyer), seller: new PublicKey(o.seller), treasury: new PublicKey(o.treasury) },
      config: this.configAddress(),
      order,
      mint,
      vault: vaultAddress(order, mint, tokenProgram),
      buyerTokenAccount: ata(o.buyer),
      sellerTokenAccount: ata(o.seller),
      treasuryTokenAccount: ata(o.treasury),
      rentPayer: new PublicKey(o.rentPayer),
      tokenProgram,
    };
  }

  /**
   * One instruction on an existing order, its accounts from the order account (typed by the IDL), and
   * the owners whose associated token accounts it pays out to. `signer` takes the signing role
   * (authority, payer, arbiter); the service (the arbiter for resolve_dispute) by default.
   */
  private async buildOrderInstruction(
    name: OrderInstructionName,
    orderId: OrderId,
    opts: OrderInstructionArgs & { signer?: PublicKey } = {},
  ): Promise<{ ix: TransactionInstruction; payees: Payee[]; mint: PublicKey; tokenProgram: PublicKey }> {
    const a = await this.orderAccounts(orderId);
    const signer = opts.signer ?? (name === 'resolve_dispute' ? this.arbiter.publicKey : this.service.publicKey);
    const { config, order, mint, vault, buyerTokenAccount, sellerTokenAccount, treasuryTokenAccount, rentPayer, tokenProgram } = a;
    const { buyer, seller, treasury } = a.owners;
    const m = this.program.methods;
    const built = { mint, tokenProgram };
    switch (name) {
      case 'mark_delivered':
        return { ...built, payees: [], ix: await m.markDelivered().accountsPartial({ authority: signer, config, order }).instruction() };
      case 'open_dispute':
        return { ...built, payees: [], ix: await m.openDispute().accountsPartial({ authority: signer, config, order }).instruction() };
      case 'release': {
        const accounts = { authority: signer, config, order, mint, vault, sellerTokenAccount, treasuryTokenAccount, rentPayer, tokenProgram };
        return { ...built, payees: [{ role: 'seller', owner: seller }, { role: 'treasury', owner: treasury }], ix: await m.release().accountsPartial(accounts).instruction() };
      }
      case 'claim': {
        const accounts = { payer: signer, config, order, mint, vault, sellerTokenAccount, treasuryTokenAccount, rentPayer, tokenProgram };
        return { ...built, payees: [{ role: 'seller', owner: seller }, { role: 'treasury', owner: treasury }], ix: await m.claim().accountsPartial(accounts).instruction() };
      }
      case 'refund': {
        const accounts = { authority: signer, config, order, mint, vault, buyerTokenAccount, rentPayer, tokenProgram };
        return { ...built, payees: [{ role: 'buyer', owner: buyer }], ix: await m.refund().accountsPartial(accounts).instruction() };
      }
      case 'resolve_dispute': {
        const accounts = { arbiter: signer, config, order, mint, vault, buyerTokenAccount, sellerTokenAccount, treasuryTokenAccount, rentPayer, tokenProgram };
        return { ...built, payees: [{ role: 'buyer', owner: buyer }, { role: 'seller', owner: seller }, { role: 'treasury', owner: treasury }], ix: await m.resolveDispute(opts.buyerBps ?? 0).accountsPartial(accounts).instruction() };
      }
      case 'request_revision':
        return { ...built, payees: [], ix: await m.requestRevision().accountsPartial({ authority: signer, config, order }).instruction() };
      case 'extend_deadline': {
        if (opts.newDeadline === undefined) throw new TypeError('extend_deadline needs newDeadline (unix seconds)');
        return { ...built, payees: [], ix: await m.extendDeadline(new BN(opts.newDeadline)).accountsPartial({ authority: signer, config, order }).instruction() };
      }
      case 'propose_settlement': {
        if (opts.buyerBps === undefined || opts.expiresAt === undefined) throw new TypeError('propose_settlement needs buyerBps and expiresAt');
        const role = opts.proposedBy ?? (signer.equals(buyer) ? 'buyer' : signer.equals(seller) ? 'seller' : undefined);
        if (!role) throw new TypeError('propose_settlement signed by the platform needs proposedBy');
        const ix = await m.proposeSettlement(opts.buyerBps, new BN(opts.expiresAt), PARTY_CODE[role]).accountsPartial({ authority: signer, config, order }).instruction();
        return { ...built, payees: [], ix };
      }
      case 'accept_settlement': {
        if (opts.buyerBps === undefined) throw new TypeError('accept_settlement needs buyerBps (the proposal\'s)');
        const accounts = { authority: signer, config, order, mint, vault, buyerTokenAccount, sellerTokenAccount, treasuryTokenAccount, rentPayer, tokenProgram };
        return { ...built, payees: [{ role: 'buyer', owner: buyer }, { role: 'seller', owner: seller }, { role: 'treasury', owner: treasury }], ix: await m.acceptSettlement(opts.buyerBps).accountsPartial(accounts).instruction() };
      }
      case 'withdraw_settlement':
        return { ...built, payees: [], ix: await m.withdrawSettlement().accountsPartial({ authority: signer, config, order }).instruction() };
    }
  }

  /** Instruction creating `owner`'s associated token account for `mint` if missing (payer = service). */
  ensureAtaInstruction(owner: PublicKey, mint: PublicKey, tokenProgram: PublicKey): TransactionInstruction {
    return createAssociatedTokenAccountIdempotentInstruction(
      this.service.publicKey,
      associatedTokenAddress(owner, mint, tokenProgram),
      owner,
      mint,
      tokenProgram,
    );
  }

  /** Create `owner`'s associated token account for `mint` when missing (service pays). Returns its address. */
  async ensureAta(owner: string, mint: string, tokenProgram?: string): Promise<{ address: string; created: boolean; signature?: string }> {
    const tp = tokenProgram ? new PublicKey(tokenProgram) : await this.tokenProgramOf(mint);
    const ownerKey = new PublicKey(owner);
    const mintKey = new PublicKey(mint);
    const address = associatedTokenAddress(ownerKey, mintKey, tp);
    const existing = await rpc(() => this.connection.getAccountInfo(address, this.commitment), this.errorContext('reading a token account'));
    if (existing) return { address: address.toBase58(), created: false };
    const res = await this.send([this.ensureAtaInstruction(ownerKey, mintKey, tp)], 'creating a token account');
    return { address: address.toBase58(), created: true, signature: res.signature };
  }

  private async send(ixs: TransactionInstruction[], action: string, extra: ConfirmOptions = {}, signers: Keypair[] = []): Promise<TxResult> {
    const tx = new Transaction().add(...ixs);
    tx.feePayer = this.service.publicKey;
    const all = [this.service, ...signers.filter((s) => !s.publicKey.equals(this.service.publicKey))];
    return sendAndConfirm(this.connection, tx, all, {
      commitment: this.commitment,
      ...this.confirmDefaults,
      ...extra,
      errors: this.errorContext(action),
    });
  }

  // ---------------------------------------------------------------- instructions

  /**
   * initialize_config (once per deployment). `admin` signs and pays; it must be the program's
   * upgrade authority (recorded in its ProgramData account), else chain-transaction-failed
   * NotUpgradeAuthority. Throws chain-transaction-failed when the config exists already (use fetchConfig first).
   */
  async initializeConfig(args: InitializeConfigArgs, o: ConfirmOptions = {}): Promise<TxResult> {
    const params = {
      platformAuthority: new PublicKey(args.platformAuthority),
      arbiter: new PublicKey(args.arbiter),
      treasury: new PublicKey(args.treasury),
      feeBps: args.feeBps,
      defaultReviewWindow: new BN(args.defaultReviewWindow),
      maxReviewWindow: new BN(args.maxReviewWindow),
      maxDeliveryWindow: new BN(args.maxDeliveryWindow),
      allowedMints: args.allowedMints.map((m) => new PublicKey(m)),
    };
    const ix = await this.program.methods
      .initializeConfig(params)
      .accountsPartial({
        admin: args.admin.publicKey,
        config: this.configAddress(),
        // derived from this client's program id (the IDL's seed is the IDL address)
        programData: programDataAddress(this.programId),
        systemProgram: SystemProgram.programId,
      })
      .instruction();
    const tx = new Transaction().add(ix);
    tx.feePayer = args.admin.publicKey;
    return sendAndConfirm(this.connection, tx, [args.admin], {
      commitment: this.commitment,
      ...this.confirmDefaults,
      ...o,
      errors: this.errorContext('initializing the escrow config'),
    });
  }

  /**
   * Accounts of this program that an earlier version wrote and the current one refuses until they are
   * migrated (programs/escrow README, "Account versions"): the config when its size is one of
   * LEGACY_CONFIG_SIZES (null otherwise, or when there is none), and every order account of one of
   * LEGACY_ORDER_SIZES (getProgramAccounts per size: dataSize + the Order discriminator). Addresses base58.
   */
  async legacyAccounts(): Promise<{ config: string | null; orders: string[] }> {
    const ctx = this.errorContext('looking for accounts of an earlier program version');
    const configInfo = await rpc(() => this.connection.getAccountInfo(this.configAddress(), this.commitment), ctx);
    const config = configInfo && LEGACY_CONFIG_SIZES.includes(configInfo.data.length) ? this.configAddress().toBase58() : null;
    const discriminator = this.discriminatorOf('order');
    const orders = (
      await Promise.all(
        LEGACY_ORDER_SIZES.map((dataSize) =>
          rpc(
            () =>
              this.connection.getProgramAccounts(this.programId, {
                commitment: this.commitment,
                dataSlice: { offset: 0, length: 0 },
                filters: [{ dataSize }, { memcmp: { offset: 0, bytes: bs58.encode(discriminator) } }],
              }),
            ctx,
          ),
        ),
      )
    ).flat();
    return { config, orders: orders.map((o) => o.pubkey.toBase58()).sort() };
  }

  /**
   * migrate_config: rewrites a config of an earlier layout into the current one. `authority` must be the
   * program's upgrade authority (NotUpgradeAuthority) and pays the rent of the added bytes. Windows in
   * seconds: required for a first-release config, which has none (MigrationValueMissing); otherwise
   * omitted keeps the old value. Errors: AccountAlreadyCurrent, UnknownAccountLayout, the config invariants.
   */
  async migrateConfig(
    authority: Keypair,
    windows: { maxReviewWindow?: number; maxDeliveryWindow?: number } = {},
    o: ConfirmOptions = {},
  ): Promise<TxResult> {
    const ix = await this.program.methods
      .migrateConfig({
        maxReviewWindow: windows.maxReviewWindow === undefined ? null : new BN(windows.maxReviewWindow),
        maxDeliveryWindow: windows.maxDeliveryWindow === undefined ? null : new BN(windows.maxDeliveryWindow),
      })
      .accountsPartial({
        authority: authority.publicKey,
        config: this.configAddress(),
        programData: programDataAddress(this.programId),
        systemProgram: SystemProgram.programId,
      })
      .instruction();
    return this.sendAs(authority, ix, o, 'migrating the escrow config');
  }

  /**
   * migrate_order: rewrites one open order (address base58) of an earlier layout into the current one,
   * every field kept. Same authority and errors as `migrateConfig` (ConstraintSeeds for an account that
   * is not its order id's PDA).
   */
  async migrateOrder(authority: Keypair, order: string, o: ConfirmOptions = {}): Promise<TxResult> {
    const ix = await this.program.methods
      .migrateOrder()
      .accountsPartial({
        authority: authority.publicKey,
        order: new PublicKey(order),
        programData: programDataAddress(this.programId),
        systemProgram: SystemProgram.programId,
      })
      .instruction();
    return this.sendAs(authority, ix, o, 'migrating an escrow order');
  }

  /**
   * After an in-place upgrade: migrates the config first, then every open order found by
   * `legacyAccounts`, one transaction each. `windows` (seconds) fill a first-release config, which has
   * none (required then); a config of the unreleased issue-8 layout keeps its own. Returns what it
   * migrated; an order that closed meanwhile is skipped. Throws on the first other failure.
   */
  async migrateLegacyAccounts(
    authority: Keypair,
    windows: { maxReviewWindow?: number; maxDeliveryWindow?: number } = {},
  ): Promise<{ config: boolean; orders: string[] }> {
    const found = await this.legacyAccounts();
    if (found.config) {
      const info = await rpc(() => this.connection.getAccountInfo(this.configAddress(), this.commitment), this.errorContext('reading the escrow config'));
      await this.migrateConfig(authority, info?.data.length === LEGACY_CONFIG_SIZES[0] ? windows : {});
    }
    const orders: string[] = [];
    for (const order of found.orders) {
      const still = await rpc(() => this.connection.getAccountInfo(new PublicKey(order), this.commitment), this.errorContext('reading an escrow order'));
      if (!still || !still.owner.equals(this.programId)) continue;
      await this.migrateOrder(authority, order);
      orders.push(order);
    }
    return { config: found.config !== null, orders };
  }

  private discriminatorOf(account: 'order' | 'config'): Uint8Array {
    const accounts = (this.program.idl.accounts ?? []) as Array<{ name: string; discriminator: number[] }>;
    const discriminator = accounts.find((a) => a.name.toLowerCase() === account)?.discriminator;
    if (!discriminator) throw new Error(`the escrow IDL has no ${account} account`);
    return Uint8Array.from(discriminator);
  }

  private sendAs(signer: Keypair, ix: TransactionInstruction, o: ConfirmOptions, action: string): Promise<TxResult> {
    const tx = new Transaction().add(ix);
    tx.feePayer = signer.publicKey;
    return sendAndConfirm(this.connection, tx, [signer], { commitment: this.commitment, ...this.confirmDefaults, ...o, errors: this.errorContext(action) });
  }

  /**
   * The fund transaction for the buyer's wallet to sign: [ATA/wrap instructions for wrapped SOL] + fund.
   * Fee payer = buyer; the platform authority (service) has signed already; the buyer adds the last
   * signature and submits (or the service submits it with `submitSignedTransaction`).
   *
   * Precondition: for SPL mints (USDC) the buyer's associated token account must exist and hold
   * `amount` (else the program/Token program fails with InsufficientFunds / AccountNotInitialized).
   * For wrapped SOL (native mint) the transaction itself creates the buyer's wSOL ATA (idempotent),
   * moves `amount` lamports into it and syncs it, so the buyer only needs native SOL.
   * Valid until `lastValidBlockHeight` (about 60-90 s on a real cluster) and, whatever the
   * blockhash, only until `terms.expiresAt` on the chain clock (the program checks it).
   */
  async buildFundTransaction(terms: FundTerms | readonly FundTerms[], opts: FundOptions = {}): Promise<FundTransaction> {
    const list = Array.isArray(terms) ? (terms as readonly FundTerms[]) : [terms as FundTerms];
    const sponsor = this.sponsorKey(list, opts);
    const buyer = new PublicKey(list[0]!.buyer);
    const { instructions, escrowAddress, vaultAddress } = await this.fundTransactionInstructions(list, sponsor?.publicKey);
    const tx = new Transaction().add(...instructions);
    const latest = await this.recentBlockhash('building the fund transaction');
    const validUntil = new Date(latest.askedAt + Math.max(0, latest.blocksLeft * CONSERVATIVE_MS_PER_BLOCK - FUND_VALIDITY_MARGIN_MS));
    tx.feePayer = sponsor?.publicKey ?? buyer;
    tx.recentBlockhash = latest.blockhash;
    tx.lastValidBlockHeight = latest.lastValidBlockHeight;
    // one compile of the message for both signatures
    partialSignTransaction(tx, this.service, ...(sponsor ? [sponsor] : []));
    return {
      transaction: tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64'),
      blockhash: latest.blockhash,
      lastValidBlockHeight: latest.lastValidBlockHeight,
      validUntil,
      escrowAddress,
      vaultAddress,
    };
  }

  /**
   * The instructions of the buyer's fund transaction (see buildFundTransaction): [wrap for wrapped SOL] +
   * one `fund` per terms (several milestones of one order funded with one signature, issue 24: each its
   * own escrow, escrow id = the milestone's id; same buyer and mint). The escrow and vault returned are the
   * first terms'. Terms with `parentOrderId` (every order the orders module funds) use `fund_milestone`.
   */
  private async fundTransactionInstructions(
    terms: FundTerms | readonly FundTerms[],
    rentPayer?: PublicKey,
  ): Promise<{ instructions: TransactionInstruction[]; escrowAddress: string; vaultAddress: string }> {
    const list = Array.isArray(terms) ? (terms as readonly FundTerms[]) : [terms as FundTerms];
    const head = list[0]!;
    const buyer = new PublicKey(head.buyer);
    const mint = new PublicKey(head.mint);
    const tokenProgram = await this.tokenProgramOf(head.mint);
    const funds = await Promise.all(list.map((t) => this.fundInstruction(t, rentPayer)));
    const instructions: TransactionInstruction[] = [];
    if (mint.equals(NATIVE_MINT)) {
      const buyerAta = associatedTokenAddress(buyer, mint, tokenProgram);
      const lamports = list.reduce((sum, t) => sum + t.amount, 0n);
      instructions.push(
        createAssociatedTokenAccountIdempotentInstruction(buyer, buyerAta, buyer, mint, tokenProgram),
        SystemProgram.transfer({ fromPubkey: buyer, toPubkey: buyerAta, lamports }),
        createSyncNativeInstruction(buyerAta, tokenProgram),
      );
    }
    instructions.push(...funds.map((f) => f.instruction));
    return { instructions, escrowAddress: funds[0]!.escrowAddress, vaultAddress: funds[0]!.vaultAddress };
  }

  /**
   * The sponsor keypair a fund transaction of `terms` is built with: null without `opts.sponsor`; the
   * client's `sponsor` key when `opts.sponsor` names it. TypeError when the client has no sponsor key or
   * another one is named, for plain `fund` terms (no `rent_payer` account) and for wrapped SOL.
   */
  private sponsorKey(terms: readonly FundTerms[], opts: FundOptions): Keypair | null {
    if (!opts.sponsor) return null;
    if (!this.sponsor || !this.sponsor.publicKey.equals(opts.sponsor)) throw new TypeError(`${opts.sponsor.toBase58()} is not this client's fee sponsor key`);
    if (terms.some((t) => t.parentOrderId === undefined)) throw new TypeError('only fund_milestone terms (parentOrderId) can be sponsored');
    if (terms.some((t) => new PublicKey(t.mint).equals(NATIVE_MINT))) throw new TypeError('a wrapped-SOL fund transaction cannot be sponsored');
    return this.sponsor;
  }

  /** The fee sponsor's address (`EscrowClientOptions.sponsor`), or null when the client has none. */
  get sponsorAddress(): PublicKey | null {
    return this.sponsor?.publicKey ?? null;
  }

  /** Lamports of an account (the sponsor's balance for /metrics and the start banner). Throws chain-unavailable. */
  async lamportsOf(address: PublicKey): Promise<bigint> {
    return BigInt(await rpc(() => this.connection.getBalance(address, this.commitment), this.errorContext('reading a balance')));
  }

  /** Rent-exempt minimum of an account of `bytes` bytes, lamports: read from the RPC, cached per size. */
  private async rentFor(bytes: number): Promise<bigint> {
    let v = this.rents.get(bytes);
    if (v === undefined) {
      v = BigInt(await rpc(() => this.connection.getMinimumBalanceForRentExemption(bytes, this.commitment), this.errorContext('reading rent')));
      this.rents.set(bytes, v);
    }
    return v;
  }

  /**
   * Size of a token account of `mint` as the associated token program creates it: 165 bytes under the
   * Token program; under Token-2022 with the account extensions the mint requires plus ImmutableOwner.
   */
  private async tokenAccountSize(mint: PublicKey, tokenProgram: PublicKey): Promise<number> {
    if (tokenProgram.equals(TOKEN_PROGRAM_ID)) return ACCOUNT_SIZE;
    const info = await rpc(() => getMint(this.connection, mint, this.commitment, tokenProgram), this.errorContext('reading the mint'));
    const extensions = getExtensionTypes(info.tlvData).map(getAccountTypeOfMintType);
    return getAccountLen([...extensions, ExtensionType.ImmutableOwner]);
  }

  /**
   * What the buyer's fund transaction for `terms` takes from the buyer wallet, and what the wallet holds,
   * read from the RPC (nothing hard-coded): `lamports` = the network fee of that very message
   * (getFeeForMessage: signatures and any priority fee) + the rent-exempt minimum of the accounts `fund`
   * creates and the buyer pays (order PDA, vault); for wrapped SOL also the buyer's wSOL account's rent
   * when it does not exist yet and the amount (the transaction wraps it: `amountInLamports`).
   * `tokenBalance`: the buyer's associated token account balance of the mint (0 when it does not exist),
   * null for wrapped SOL. Throws chain-unavailable (RPC down, or no fee for the latest blockhash).
   */
  async fundingNeeds(terms: FundTerms, opts: FundOptions = {}): Promise<FundingNeeds> {
    const sponsor = this.sponsorKey([terms], opts);
    const { instructions } = await this.fundTransactionInstructions(terms, sponsor?.publicKey);
    return this.needsOf(new PublicKey(terms.buyer), new PublicKey(terms.mint), instructions, 1, terms.amount, sponsor?.publicKey);
  }

  /**
   * Like `fundingNeeds`, for the buyer's transaction funding several milestones at once
   * (`buildFundMilestonesTransaction`): the network fee of that message + for each milestone the rent of
   * its escrow account and vault (+ the wrap for wrapped SOL: the milestones' total).
   */
  async fundMilestonesNeeds(terms: FundMilestonesTerms): Promise<FundingNeeds> {
    const { instructions } = await this.fundMilestonesInstructions(terms);
    const total = terms.milestones.reduce((sum, m) => sum + m.amount, 0n);
    return this.needsOf(new PublicKey(terms.buyer), new PublicKey(terms.mint), instructions, terms.milestones.length, total, terms.rentPayer ? new PublicKey(terms.rentPayer) : undefined);
  }

  /**
   * `sponsor`: the fee payer and rent payer instead of the buyer; `lamports` is then what the SPONSOR
   * pays (fee + rent) and `buyerLamports` 0 (see FundingNeeds).
   */
  private async needsOf(buyer: PublicKey, mint: PublicKey, instructions: TransactionInstruction[], escrows: number, amount: bigint, sponsor?: PublicKey): Promise<FundingNeeds> {
    const tokenProgram = await this.tokenProgramOf(mint.toBase58());
    const native = mint.equals(NATIVE_MINT);
    const buyerAta = associatedTokenAddress(buyer, mint, tokenProgram);
    const context = this.errorContext('reading the buyer wallet\'s balances');
    const [latest, lamportsBalance, ata, tokenAccountSize] = await Promise.all([
      this.recentBlockhash('reading the buyer wallet\'s balances'),
      rpc(() => this.connection.getBalance(buyer, this.commitment), context),
      rpc(() => this.connection.getAccountInfo(buyerAta, this.commitment), context),
      this.tokenAccountSize(mint, tokenProgram),
    ]);
    const quote = async (blockhash: RecentBlockhash) => {
      const message = new Transaction({ feePayer: sponsor ?? buyer, blockhash: blockhash.blockhash, lastValidBlockHeight: blockhash.lastValidBlockHeight })
        .add(...instructions)
        .compileMessage();
      return rpc(() => this.connection.getFeeForMessage(message, this.commitment), context).then((r) => r.value);
    };
    const [quoted, orderRent, vaultRent] = await Promise.all([quote(latest), this.rentFor(this.orderAccountSize()), this.rentFor(tokenAccountSize)]);
    // null: the node answering did not know that blockhash (one behind the node that gave it, as around an RPC
    // provider switch, or a blockhash kept past its lifetime): quote once more on a blockhash read now
    const fee = quoted ?? (await quote(await this.recentBlockhash('reading the buyer wallet\'s balances', { fresh: true })));
    if (fee === null) throw new DomainError('chain-unavailable', 'The cluster quoted no fee for the fund transaction (its blockhash was not usable); retry.');
    // SPL token account layout: amount u64 LE at offset 64
    const tokenBalance = ata && ata.data.length >= 72 ? ata.data.readBigUInt64LE(64) : 0n;
    const wrapRent = native && !ata ? await this.rentFor(tokenAccountSize) : 0n;
    const amountInLamports = native ? amount : 0n;
    const lamports = BigInt(fee) + BigInt(escrows) * (orderRent + vaultRent) + wrapRent + amountInLamports;
    return {
      lamports: sponsor ? 0n : lamports,
      ...(sponsor ? { sponsorLamports: lamports } : {}),
      amountInLamports,
      lamportsBalance: BigInt(lamportsBalance),
      tokenBalance: native ? null : tokenBalance,
    };
  }

  /**
   * Whether a transaction built on `blockhash` can no longer land: the block height (confirmed) is
   * past `lastValidBlockHeight`, or the cluster no longer knows the blockhash as valid. Throws
   * chain-unavailable when the RPC is unreachable (never guesses).
   */
  blockhashExpired(lifetime: { blockhash: string; lastValidBlockHeight: number }): Promise<boolean> {
    return blockhashExpired(this.connection, lifetime, this.commitment);
  }

  /** What became of a recorded attempt of ours (./recorded-send.ts). Throws chain-unavailable. */
  transactionOutcome(attempt: RecordedAttempt): Promise<TxOutcome> {
    return transactionOutcome(this.connection, attempt, this.commitment);
  }

  /** Token balance (base units) of a token account; 0n when the account does not exist. */
  async tokenBalance(tokenAccount: string): Promise<bigint> {
    const info = await rpc(() => this.connection.getAccountInfo(new PublicKey(tokenAccount), this.commitment), this.errorContext('reading a token account'));
    // SPL token account layout (Token and Token-2022): mint 32, owner 32, amount u64 LE at 64
    if (!info || info.data.length < 72) return 0n;
    return info.data.readBigUInt64LE(64);
  }

  /**
   * The bare `fund` instruction for `terms`: signers buyer (pays the rent of the order PDA and the
   * vault, and the tokens from its associated token account) and the platform authority (service).
   * Used by buildFundTransaction and by custodial funding (buyer = a deposit key the service holds).
   */
  async fundInstruction(terms: FundTerms, rentPayer?: PublicKey): Promise<{ instruction: TransactionInstruction; escrowAddress: string; vaultAddress: string }> {
    if (terms.parentOrderId !== undefined) {
      return this.fundMilestoneInstruction({
        rentPayer: rentPayer?.toBase58(),
        parentOrderId: terms.parentOrderId,
        buyer: terms.buyer,
        seller: terms.seller,
        mint: terms.mint,
        expiresAt: terms.expiresAt,
        milestone: {
          escrowId: terms.orderId,
          amount: terms.amount,
          deliveryDeadline: terms.deliveryDeadline,
          reviewWindow: terms.reviewWindow,
          milestoneIndex: terms.milestoneIndex ?? 1,
          revisionsIncluded: terms.revisionsIncluded ?? 0,
        },
      });
    }
    const buyer = new PublicKey(terms.buyer);
    const seller = new PublicKey(terms.seller);
    const mint = new PublicKey(terms.mint);
    const tokenProgram = await this.tokenProgramOf(terms.mint);
    const order = this.orderAddress(terms.orderId);
    const vault = vaultAddress(order, mint, tokenProgram);
    const instruction = await this.program.methods
      .fund(
        Array.from(orderIdBytes(terms.orderId)),
        new BN(terms.amount.toString()),
        new BN(terms.deliveryDeadline),
        new BN(terms.reviewWindow),
        new BN(terms.expiresAt),
      )
      .accountsPartial({
        buyer,
        platformAuthority: this.service.publicKey,
        seller,
        config: this.configAddress(),
        order,
        mint,
        buyerTokenAccount: associatedTokenAddress(buyer, mint, tokenProgram),
        vault,
        tokenProgram,
        associatedTokenProgram: ASSOCIATED_TOKEN_PROGRAM_ID,
        systemProgram: SystemProgram.programId,
      })
      .instruction();
    return { instruction, escrowAddress: order.toBase58(), vaultAddress: vault.toBase58() };
  }

  /** Space of the escrow order account (bytes incl. the discriminator), for rent estimates. */
  orderAccountSize(): number {
    return this.program.account.order.size;
  }

  /**
   * Send a fully signed transaction (base64 wire bytes, e.g. the buyer-signed fund transaction) and
   * wait for confirmation. Rejects transactions missing a signature with chain-transaction-failed
   * (program_error 'MissingSignature') before sending.
   */
  async submitSignedTransaction(signedBase64: string, o: ConfirmOptions & { lastValidBlockHeight?: number } = {}): Promise<TxResult> {
    const raw = Buffer.from(signedBase64, 'base64');
    let tx: Transaction;
    try {
      tx = Transaction.from(raw);
    } catch {
      throw new DomainError('validation-error', 'signed_transaction is not a serialized Solana transaction', {
        errors: [{ path: 'body.signed_transaction', message: 'not a serialized transaction', code: 'invalid_transaction' }],
      });
    }
    if (tx.signatures.some((s) => !s.signature)) {
      throw new DomainError('chain-transaction-failed', 'the transaction is missing a signature', {
        program_error: 'MissingSignature',
        missing: tx.signatures.filter((s) => !s.signature).map((s) => s.publicKey.toBase58()),
      });
    }
    if (!tx.verifySignatures()) {
      throw new DomainError('chain-transaction-failed', 'a transaction signature is invalid', { program_error: 'InvalidSignature' });
    }
    return sendRawAndConfirm(this.connection, raw, {
      commitment: this.commitment,
      ...this.confirmDefaults,
      ...o,
      programIds: tx.instructions.map((i) => i.programId.toBase58()),
      errors: this.errorContext('submitting the transaction'),
    });
  }

  private async orderOrThrow(orderId: OrderId): Promise<EscrowOrder> {
    const o = await this.fetchOrder(orderId);
    if (!o) {
      throw new DomainError('chain-transaction-failed', 'the escrow order account does not exist (not funded, or already closed)', {
        program_error: 'AccountNotInitialized',
      });
    }
    return o;
  }

  /**
   * One escrow instruction on an existing order (mark_delivered, release, claim, open_dispute,
   * resolve_dispute with `args` [buyer_bps], refund), its accounts resolved from the order account. The
   * signing role is the service unless `signer` is given: a party acting with its own wallet (tests,
   * tools). Throws chain-transaction-failed when the order account does not exist.
   */
  async instructionFor(
    name: OrderInstructionName,
    orderId: OrderId,
    opts: { args?: [number]; signer?: PublicKey } & OrderInstructionArgs = {},
  ): Promise<TransactionInstruction> {
    const { args, signer, ...rest } = opts;
    return (await this.buildOrderInstruction(name, orderId, { buyerBps: args?.[0], ...rest, signer })).ix;
  }

  /**
   * An unsigned transaction of one instruction on an existing order for a party's OWN wallet to sign
   * and send (fee payer = `signer`): request_revision / extend_deadline (the buyer), propose_settlement
   * (either party; her role from her key), accept_settlement (the party who did not propose, with the
   * proposal's `buyerBps`), withdraw_settlement (the proposer), or any other order instruction a party
   * may sign. Payee token accounts are not created here (accept_settlement needs the buyer's, seller's
   * and treasury's to exist: the program fails otherwise). Throws chain-transaction-failed when the
   * order account does not exist, chain-unavailable when the RPC is unreachable.
   */
  async buildPartyTransaction(name: OrderInstructionName, orderId: OrderId, signer: string, args: OrderInstructionArgs = {}): Promise<PartyTransaction> {
    const payer = new PublicKey(signer);
    const { ix } = await this.buildOrderInstruction(name, orderId, { ...args, signer: payer });
    // a fresh blockhash, never the reused one: a party who signs the same instruction twice (two revision
    // requests) must get two transactions, and the same instruction on the same blockhash is the same one
    const latest = await rpc(() => this.connection.getLatestBlockhash(this.commitment), this.errorContext('building the transaction'));
    const tx = new Transaction({ feePayer: payer, blockhash: latest.blockhash, lastValidBlockHeight: latest.lastValidBlockHeight }).add(ix);
    return {
      transaction: tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64'),
      blockhash: latest.blockhash,
      lastValidBlockHeight: latest.lastValidBlockHeight,
    };
  }

  /**
   * One instruction on an existing order escrow, signed by the platform authority (resolve_dispute:
   * the arbiter, with `buyerBps` 0..10000 to the buyer): mark_delivered (Funded -> Delivered), release
   * (seller gets amount - fee, treasury the fee; closes vault + order, rent to the rent payer), claim
   * (like release, once the review window after delivery has passed: the program checks the clock),
   * open_dispute (Funded|Delivered -> Disputed), resolve_dispute (the split), refund (the full amount
   * back to the buyer; closes). Payees' associated token accounts are created first when missing, the
   * service paying their rent: without `o.payeeAccounts`, all of them (idempotent creates; operator tools);
   * with it (the orders module, docs/threat-model.md#who-pays-for-what-on-chain), only those the policy allows: it is called for each
   * missing one before anything is signed and throws (e.g. 409 token-account-required) to refuse.
   * Throws chain-transaction-failed when the program refuses it.
   */
  async orderInstruction(
    name: OrderInstructionName,
    orderId: OrderId,
    o: ConfirmOptions & OrderInstructionArgs & { payeeAccounts?: PayeeAccountPolicy } = {},
  ): Promise<TxResult> {
    const { buyerBps, newDeadline, expiresAt, proposedBy, payeeAccounts, ...confirm } = o;
    const { ix, payees, mint, tokenProgram } = await this.buildOrderInstruction(name, orderId, { buyerBps, newDeadline, expiresAt, proposedBy });
    const unique = [...new Map(payees.map((p) => [p.owner.toBase58(), p])).values()];
    let missing = unique;
    if (payeeAccounts && unique.length) {
      const atas = unique.map((p) => associatedTokenAddress(p.owner, mint, tokenProgram));
      const infos = await rpc(() => this.connection.getMultipleAccountsInfo(atas, this.commitment), this.errorContext('reading the payee token accounts'));
      missing = unique.filter((_, i) => !infos[i]);
      for (const p of missing) {
        const tokenAccount = associatedTokenAddress(p.owner, mint, tokenProgram).toBase58();
        await payeeAccounts({ role: p.role, owner: p.owner.toBase58(), mint: mint.toBase58(), tokenAccount, orderId: bytesToUuid(orderIdBytes(orderId)), instruction: name });
      }
    }
    const pre = missing.map((p) => this.ensureAtaInstruction(p.owner, mint, tokenProgram));
    return this.send([...pre, ix], ORDER_IX_LABEL[name], confirm, name === 'resolve_dispute' ? [this.arbiter] : []);
  }

  /** mark_delivered: Funded -> Delivered (platform authority signs on the seller's behalf). */
  markDelivered(orderId: OrderId, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('mark_delivered', orderId, o);
  }

  /** release: pays seller (amount - fee) and treasury (fee), closes vault + order. */
  release(orderId: OrderId, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('release', orderId, o);
  }

  /** claim: like release, allowed once the review window after delivery has passed (program checks the clock). */
  claim(orderId: OrderId, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('claim', orderId, o);
  }

  /** open_dispute: Funded|Delivered -> Disputed. */
  openDispute(orderId: OrderId, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('open_dispute', orderId, o);
  }

  /** resolve_dispute(buyer_bps 0..10000): buyer gets buyer_bps of amount, the rest goes to seller/treasury per program rules. */
  resolveDispute(orderId: OrderId, buyerBps: number, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('resolve_dispute', orderId, { ...o, buyerBps });
  }

  /** refund: full amount back to the buyer, closes vault + order. */
  refund(orderId: OrderId, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('refund', orderId, o);
  }

  /**
   * request_revision (platform for the buyer): Delivered -> Funded before auto-release, the auto-release
   * timer stops and the delivery deadline moves (the seller gets back the time left at delivery, at least
   * a day). Program errors: OrderNotDelivered, ReviewWindowElapsed, RevisionLimitReached.
   */
  requestRevision(orderId: OrderId, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('request_revision', orderId, o);
  }

  /**
   * extend_deadline (platform for the buyer, who accepted the seller's proposal): a Funded escrow's
   * delivery deadline moves to `newDeadline` (unix seconds; later than the current one, in the future,
   * within config.maxDeliveryWindow of now). Errors: OrderNotFunded, DeadlineNotLater,
   * DeliveryDeadlineInPast, DeliveryDeadlineTooFar.
   */
  extendDeadline(orderId: OrderId, newDeadline: number, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('extend_deadline', orderId, { ...o, newDeadline });
  }

  /**
   * propose_settlement (platform for `proposedBy`): `buyerBps` (0..10000) of the amount to the buyer, the
   * rest to the seller minus the fee, acceptable until `expiresAt` (unix seconds, at most 7 days ahead);
   * replaces a pending proposal. Errors: BuyerBpsTooHigh, SettlementExpiresInPast, SettlementLifetimeTooLong.
   */
  proposeSettlement(orderId: OrderId, p: { buyerBps: number; expiresAt: number; proposedBy: 'buyer' | 'seller' }, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('propose_settlement', orderId, { ...o, ...p });
  }

  /**
   * accept_settlement (platform for the party who did not propose): pays the pending proposal's split
   * (`buyerBps` must repeat it) and closes the escrow, like resolve_dispute. Payee token accounts as
   * `orderInstruction`. Errors: NoSettlementProposal, SettlementTermsMismatch, SettlementProposalExpired.
   */
  acceptSettlement(orderId: OrderId, buyerBps: number, o: ConfirmOptions & { payeeAccounts?: PayeeAccountPolicy } = {}): Promise<TxResult> {
    return this.orderInstruction('accept_settlement', orderId, { ...o, buyerBps });
  }

  /** withdraw_settlement (platform for the proposer): clears the pending proposal. Error: NoSettlementProposal. */
  withdrawSettlement(orderId: OrderId, o: ConfirmOptions = {}): Promise<TxResult> {
    return this.orderInstruction('withdraw_settlement', orderId, o);
  }

  /**
   * The bare `fund_milestone` instruction of one milestone (signers: the buyer, who pays the deposit and
   * the rent of the escrow account and vault, and the platform authority). See buildFundMilestonesTransaction.
   */
  async fundMilestoneInstruction(
    terms: Omit<FundMilestonesTerms, 'milestones'> & { milestone: MilestoneFundTerms },
  ): Promise<{ instruction: TransactionInstruction; escrowAddress: string; vaultAddress: string }> {
    const buyer = new PublicKey(terms.buyer);
    const rentPayer = terms.rentPayer ? new PublicKey(terms.rentPayer) : buyer;
    const mint = new PublicKey(terms.mint);
    const tokenProgram = await this.tokenProgramOf(terms.mint);
    const m = terms.milestone;
    const order = this.orderAddress(m.escrowId);
    const vault = vaultAddress(order, mint, tokenProgram);
    const instruction = await this.program.methods
      .fundMilestone({
        escrowId: Array.from(orderIdBytes(m.escrowId)),
        parentOrderId: Array.from(orderIdBytes(terms.parentOrderId)),
        milestoneIndex: m.milestoneIndex,
        amount: new BN(m.amount.toString()),
        deliveryDeadline: new BN(m.deliveryDeadline),
        reviewWindow: new BN(m.reviewWindow),
        expiresAt: new BN(terms.expiresAt),
        revisionsIncluded: m.revisionsIncluded,
      })
      .accountsPartial({
        buyer,
        platformAuthority: this.service.publicKey,
        rentPayer,
        seller: new PublicKey(terms.seller),
        config: this.configAddress(),
        order,
        mint,
        buyerTokenAccount: associatedTokenAddress(buyer, mint, tokenProgram),
        vault,
        tokenProgram,
        associatedTokenProgram: ASSOCIATED_TOKEN_PROGRAM_ID,
        systemProgram: SystemProgram.programId,
      })
      .instruction();
    return { instruction, escrowAddress: order.toBase58(), vaultAddress: vault.toBase58() };
  }

  /** The instructions of the buyer's milestone fund transaction: [wrap the total for wrapped SOL] + one fund_milestone per milestone. */
  private async fundMilestonesInstructions(
    terms: FundMilestonesTerms,
  ): Promise<{ instructions: TransactionInstruction[]; escrows: Array<{ escrowAddress: string; vaultAddress: string }> }> {
    const buyer = new PublicKey(terms.buyer);
    const mint = new PublicKey(terms.mint);
    const tokenProgram = await this.tokenProgramOf(terms.mint);
    const instructions: TransactionInstruction[] = [];
    if (mint.equals(NATIVE_MINT)) {
      const total = terms.milestones.reduce((sum, m) => sum + m.amount, 0n);
      const buyerAta = associatedTokenAddress(buyer, mint, tokenProgram);
      instructions.push(
        createAssociatedTokenAccountIdempotentInstruction(buyer, buyerAta, buyer, mint, tokenProgram),
        SystemProgram.transfer({ fromPubkey: buyer, toPubkey: buyerAta, lamports: total }),
        createSyncNativeInstruction(buyerAta, tokenProgram),
      );
    }
    const escrows: Array<{ escrowAddress: string; vaultAddress: string }> = [];
    for (const milestone of terms.milestones) {
      const built = await this.fundMilestoneInstruction({ ...terms, milestone });
      instructions.push(built.instruction);
      escrows.push({ escrowAddress: built.escrowAddress, vaultAddress: built.vaultAddress });
    }
    return { instructions, escrows };
  }

  /**
   * The buyer's transaction funding one or more milestone escrows of an order at once: [wrap the total
   * for wrapped SOL] + one `fund_milestone` per milestone, fee payer = buyer, signed by the platform
   * authority; the buyer adds the one remaining signature. Same validity rules and preconditions as
   * buildFundTransaction. A legacy transaction holds at most MAX_MILESTONES_PER_FUND_TRANSACTION
   * milestones (1232-byte packet; programs/escrow README): more throw a TypeError (split them).
   */
  async buildFundMilestonesTransaction(
    terms: FundMilestonesTerms,
    opts: FundOptions = {},
  ): Promise<Omit<FundTransaction, 'escrowAddress' | 'vaultAddress'> & { escrows: Array<{ escrowAddress: string; vaultAddress: string }> }> {
    if (terms.milestones.length === 0 || terms.milestones.length > MAX_MILESTONES_PER_FUND_TRANSACTION) {
      throw new TypeError(`a fund transaction holds 1..${MAX_MILESTONES_PER_FUND_TRANSACTION} milestones, got ${terms.milestones.length}`);
    }
    const sponsor = this.sponsorKey([{ ...terms, orderId: terms.parentOrderId, amount: 0n, deliveryDeadline: 0, reviewWindow: 0 }], opts);
    const buyer = new PublicKey(terms.buyer);
    const { instructions, escrows } = await this.fundMilestonesInstructions(sponsor ? { ...terms, rentPayer: sponsor.publicKey.toBase58() } : terms);
    const tx = new Transaction().add(...instructions);
    const latest = await this.recentBlockhash('building the fund transaction');
    tx.feePayer = sponsor?.publicKey ?? buyer;
    tx.recentBlockhash = latest.blockhash;
    tx.lastValidBlockHeight = latest.lastValidBlockHeight;
    // one compile of the message for both signatures
    partialSignTransaction(tx, this.service, ...(sponsor ? [sponsor] : []));
    return {
      transaction: tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64'),
      blockhash: latest.blockhash,
      lastValidBlockHeight: latest.lastValidBlockHeight,
      validUntil: new Date(latest.askedAt + Math.max(0, latest.blocksLeft * CONSERVATIVE_MS_PER_BLOCK - FUND_VALIDITY_MARGIN_MS)),
      escrows,
    };
  }
}

/**
 * Most `fund_milestone` instructions one legacy transaction holds (1232-byte packet): each adds its
 * escrow and vault addresses (64 bytes) and 87 bytes of instruction; measured in
 * tests/localnet.escrow-milestones.test.ts and written down in programs/escrow/README.md.
 */
export const MAX_MILESTONES_PER_FUND_TRANSACTION = 4;

/** What the service is doing with each instruction on an existing order account (error details). */
const ORDER_IX_LABEL: Record<OrderInstructionName, string> = {
  mark_delivered: 'marking the order delivered',
  release: 'releasing the escrow',
  claim: 'claiming the escrow',
  open_dispute: 'opening a dispute',
  resolve_dispute: 'resolving the dispute',
  refund: 'refunding the escrow',
  request_revision: 'requesting a revision',
  extend_deadline: 'extending the delivery deadline',
  propose_settlement: 'proposing a settlement',
  accept_settlement: 'accepting the settlement',
  withdraw_settlement: 'withdrawing the settlement proposal',
};
