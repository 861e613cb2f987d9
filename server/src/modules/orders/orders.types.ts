/**
 * Orders module types and the ports it needs from other modules (listings, chain).
 * Amounts are u64 base units (bigint); chain times are unix seconds.
 */
import type { OrderView } from './order-view.js';
import type { TransitionAction } from './order-state.js';
import type { ListingOrderEvent, ListingStatus, OrderLevelStatus, PaymentSource } from '@bazaar/contract';
import type { ListingTermsSource } from '../listings/order-terms.js';

export type { PaymentSource };
import type { RecordedAttempt, TxOutcome } from '../../chain/recorded-send.js';
import type { CurrencyInfo, TxResult } from '../../chain/types.js';
import type { SubscriptionState } from '../../chain/pubsub.js';
import type { Instruction, OrderStatus, ServiceInstruction, TerminalInstruction } from './order-state.js';
import type { NewEvent } from '../events/index.js';

export interface OrderRecord {
  id: string;
  listingId: string;
  buyerId: string;
  sellerId: string;
  buyerWallet: string;
  sellerWallet: string;
  /** wallet: the buyer signs the fund transaction; custodial: the custody module funds it (buyerWallet = deposit address) */
  paymentSource: PaymentSource;
  currency: string;
  mint: string;
  decimals: number;
  amount: bigint;
  status: OrderStatus;
  /** listing token mint (Token-2022 NFT of the listing) */
  tokenMint: string | null;
  /** platform fee snapshot (escrow config at creation) */
  feeBps: number;
  escrowAddress: string;
  vaultAddress: string;
  paymentExpiresAt: Date;
  /**
   * unix seconds on the chain clock, sent in the fund instruction: the program refuses the
   * co-signed terms after it (chain time at creation + the payment window)
   */
  fundExpiresAt: number;
  /** unix seconds, sent in the fund instruction */
  deliveryDeadline: number;
  /** seconds, sent in the fund instruction */
  reviewWindow: number;
  fundedAt: Date | null;
  deliveredAt: Date | null;
  autoReleaseAt: Date | null;
  disputedAt: Date | null;
  /** when the order reached a terminal status */
  completedAt: Date | null;
  disputeReason: string | null;
  disputedBy: 'buyer' | 'seller' | null;
  buyerBps: number | null;
  fundSignature: string | null;
  lastSignature: string | null;
  /**
   * fee sponsorship (issue 26 item 5): the sponsor key (base58) that is the fee payer and rent payer of
   * this row's fund transactions; null/absent: the buyer pays. Decided once, when its first fund
   * transaction is issued (order creation for milestone 1).
   */
  feeSponsor?: string | null;
  /**
   * fee sponsorship (issue 26 audit): the last sponsored fund transaction handed out for this row (base64) and
   * until when it can land, kept so a re-issue hands out the same bytes and charges the sponsor once; null/absent:
   * none (fakes may omit it: every issue is then a new transaction, charged).
   */
  sponsoredFundTx?: IssuedFundTransaction | null;
  /**
   * created through a Solana Action (a blink's POST `{ account }`, modules/actions): nobody proved they hold the
   * buyer wallet, so it has its own unpaid-orders limit per wallet (not the signed-in one), its lapse starts a
   * hold cool-down against its client network only, and a signed-in order's balance check does not count it.
   * Absent: false.
   */
  viaAction?: boolean;
  /** Idempotency-Key of the POST /orders that created it (scoped to the buyer); `offer:<offer id>` for an order accepted from an offer */
  idempotencyKey: string | null;
  /** issue 24: the custom offer this order was accepted from (modules/offers); null/absent otherwise */
  offerId?: string | null;
  /** what left the escrow vault when it closed (from the chain's record of this order); null until then */
  payout: OrderPayout | null;
  /** the service found the escrow in a state it cannot explain: an operator must look */
  attention: OrderAttention | null;
  /** how a resolved order was split: an arbiter's ruling or the parties' agreement; null otherwise */
  settledBy: 'arbiter' | 'agreement' | null;
  /** the pending deadline extension the seller proposed (off chain), or null */
  extension: ExtensionProposalRecord | null;
  /** the pending settlement proposal (recorded on chain by propose_settlement too), or null */
  settlement: SettlementProposalRecord | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  /**
   * Milestones (issue 24): this row is one milestone's escrow unit (`id` = its escrow id); `orderId` is
   * the order the buyer knows (= the id of its first row). A one-milestone order: orderId = id, index 1, count 1.
   */
  orderId: string;
  /** 1..milestoneCount */
  milestoneIndex: number;
  /** 1..10, the same on every row of the order */
  milestoneCount: number;
  milestoneTitle: string | null;
  /** days from funding to the delivery deadline (null on rows from before milestones) */
  deliveryDays: number | null;
  revisionsIncluded: number;
  revisionsUsed: number;
  packageName: string | null;
  /** the buyer ended the order (multi-milestone orders; set on every row) */
  endedAt: Date | null;
  /** the listing package bought (`basic` | `standard` | `premium`), frozen at creation; null/absent: none */
  packageKey?: string | null;
  /** its delivery time in days (the sum of its milestones') */
  packageDeliveryDays?: number | null;
}


/** Base units that left an order's vault when it closed, per payee, as the chain recorded them. */
export interface OrderPayout {
  buyer: bigint;
  seller: bigint;
  treasury: bigint;
  /** the token account the buyer's share went to (null when the instruction pays no buyer) */
  buyerTokenAccount: string | null;
  /** the program event, the transfers out of the vault and its balance agreed */
  verified: boolean;
}

/** A pending deadline extension (issue 24): what the seller asks for and until when the buyer may accept (service clock). */
export interface ExtensionProposalRecord {
  /** unix seconds */
  newDeadline: number;
  message: string | null;
  proposedAt: Date;
  expiresAt: Date;
}

/** A pending settlement proposal (issue 24): the split and until when it may be accepted (chain clock, as the program holds it). */
export interface SettlementProposalRecord {
  proposedBy: 'buyer' | 'seller';
  buyerBps: number;
  proposedAt: Date;
  expiresAt: Date;
}

/** Why an order needs an operator (e.g. `escrow-vanished`), and since when. */
export interface OrderAttention {
  reason: string;
  /** what the service read from the chain when it flagged the order (balances etc.) */
  detail: string;
  at: Date;
}

/** The milestone fields of a new row (defaults: a one-milestone order, orderId = id). */
type MilestoneFields = 'orderId' | 'milestoneIndex' | 'milestoneCount' | 'milestoneTitle' | 'deliveryDays' | 'revisionsIncluded' | 'revisionsUsed' | 'packageName' | 'endedAt';

export type NewOrder = Omit<
  OrderRecord,
  'createdAt' | 'updatedAt' | 'version' | 'paymentSource' | 'fundExpiresAt' | 'idempotencyKey' | 'payout' | 'attention'
  | 'revisionsUsed' | 'settledBy' | 'extension' | 'settlement' | MilestoneFields
> & Partial<Pick<OrderRecord, MilestoneFields>> & {
  createdAt?: Date;
  /** default wallet */
  paymentSource?: PaymentSource;
  fundExpiresAt?: number | null;
  idempotencyKey?: string | null;
  /** the client network it was created from (`lib/client-network.ts`); null: not counted (API keys) */
  holdNetwork?: string | null;
};
export type OrderPatch = Partial<Omit<OrderRecord, 'id' | 'createdAt' | 'updatedAt' | 'version' | 'idempotencyKey' | 'orderId' | 'milestoneIndex' | 'milestoneCount' | 'endedAt'>> & {
  /**
   * The lifecycle action behind a status change (not a column): picks the row of the order lifecycle
   * table whose `emits` names the event written with the change (confirm and auto_release both lead
   * delivered -> completed but emit order.completed / order.auto_released). Omitted: the first row
   * from the old to the new status. A row that keeps the status (a proposal: `from` = `to`) emits its
   * event too when named here.
   */
  transition?: TransitionAction;
};

/** The pending proposal a conditional update expects (its proposed_at; null: none pending). */
export interface ProposalGuard {
  extensionProposedAt?: Date | null;
  settlementProposedAt?: Date | null;
}

export type IntentStatus = 'pending' | 'sent' | 'confirmed' | 'failed';

/** One on-chain action the service intends to perform; recorded BEFORE sending (crash safety). */
export interface ChainIntentRecord {
  id: string;
  orderId: string;
  /** escrow instruction (fund is recorded confirmed when the service saw the signature) */
  action: Instruction;
  status: IntentStatus;
  slot: number | null;
  signature: string | null;
  params: Record<string, unknown> | null;
  error: string | null;
  /** recent blockhash of the signed transaction (null until signed, or on old rows) */
  blockhash: string | null;
  /** its last valid block height: past it, a signature the chain has not seen can never land */
  lastValidBlockHeight: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ListOrdersQuery {
  userId: string;
  role?: 'buyer' | 'seller';
  /** the order-level status (a multi-milestone order's derived one: `order_status`) */
  status?: OrderLevelStatus;
  limit: number;
  /** keyset: (createdAt, id) of the last row of the previous page */
  after?: { createdAt: Date; id: string };
}

export interface OrdersRepo {
  create(order: NewOrder): Promise<OrderRecord>;
  get(id: string): Promise<OrderRecord | null>;
  list(q: ListOrdersQuery): Promise<OrderRecord[]>;
  /** orders in `status`, oldest first */
  listByStatus(status: OrderStatus, limit: number): Promise<OrderRecord[]>;
  /**
   * conditional update: applies only when the order is still in `expected` (and, with `guard`, still has
   * that pending proposal); false otherwise. A patch with a `transition` appends that row's event in the
   * same transaction (status-keeping rows included).
   */
  updateIf(id: string, expected: OrderStatus, patch: OrderPatch, guard?: ProposalGuard): Promise<boolean>;
  /** open orders with a pending proposal that expired by `now` (extension: service clock; settlement: `chainNow`), oldest first */
  listExpiredProposals(now: Date, chainNow: Date, limit: number): Promise<OrderRecord[]>;
  /**
   * DB guard: in one transaction, lock the order row, check it is still in `expected` with no
   * pending/sent intent, and insert a pending intent. Returns null when the guard fails.
   */
  beginIntent(orderId: string, expected: OrderStatus, action: Instruction, params: Record<string, unknown> | null): Promise<ChainIntentRecord | null>;
  /**
   * pending -> sent with the signature (and the blockhash lifetime) BEFORE the first send. false when
   * the intent is no longer pending (a reconciler settled it meanwhile): the caller must not send.
   */
  markIntentSent(intentId: string, signature: string, lifetime?: BlockhashLifetime): Promise<boolean>;
  /** one transaction: intent confirmed (+signature) and the order patched when still in `expected` */
  confirmIntent(intentId: string, signature: string | null, slot: number | null, orderId: string, expected: OrderStatus, patch: OrderPatch): Promise<boolean>;
  /** Orders by id in one read (the payment watcher's pass); ids not found are left out, in no particular order. */
  getMany(ids: readonly string[]): Promise<OrderRecord[]>;
  /**
   * The funding (issue 28: one transaction per state change): awaiting_payment -> `patch` (the lifecycle
   * row `pay`) in ONE transaction with all that goes with it: the fund transaction's record when
   * `fund.signature` is known (once per order), then `within(scope, order)` (the listing's move:
   * `ListingsPort.applyOrderEvent(..., scope)`; whatever it returns is returned), then the events of both,
   * the order's first (appended last, under one outbox lock). `known`: the row as read just before (its
   * head and wallets are not read again). null when the order was not awaiting payment (nothing written).
   * A `within` that throws rolls the whole funding back.
   */
  fundIf<T>(
    id: string,
    patch: OrderPatch,
    fund: { signature: string | null; slot: number | null },
    within: (scope: TxScope, order: OrderRecord) => Promise<T>,
    known?: OrderRecord,
  ): Promise<{ order: OrderRecord; within: T } | null>;
  /** record an already-confirmed transaction (the buyer's fund) */
  recordConfirmed(orderId: string, action: Instruction, signature: string, slot: number | null): Promise<void>;
  failIntent(intentId: string, error: string): Promise<void>;
  openIntentFor(orderId: string): Promise<ChainIntentRecord | null>;
  listOpenIntents(limit: number): Promise<ChainIntentRecord[]>;
  listIntents(orderId: string): Promise<ChainIntentRecord[]>;
  /** the read model of a page of orders in a bounded number of statements (order-view.ts); fakes may omit it */
  views?(orders: readonly OrderRecord[]): Promise<Map<string, OrderView>>;
  /** the order a buyer created with this Idempotency-Key, if any */
  findByIdempotencyKey(buyerId: string, key: string): Promise<OrderRecord | null>;
  /**
   * Insert a new order unless its listing is full (one open order per unit of its capacity: awaiting_payment,
   * in_progress, delivered or disputed, each also counting against its stock; `soldOut` once its sales reach
   * the stock) or the buyer already has `maxUnpaidPerBuyer` unpaid orders of the new order's kind (signed-in, or
   * `viaAction`: the two are counted apart); checked under the buyer's row
   * lock, the seller's listings lock and the listing's row lock, so concurrent creations serialize.
   * `duplicate`: the buyer already created an order with this idempotency key (returned).
   * Also, in that transaction (see HoldGuard): `cooldown` when the same buyer (user, wallet or
   * network; for a lapsed `viaAction` order the network only) let a wallet order for the listing expire unpaid recently; `networkLimit` when the
   * order's network holds `maxUnpaidPerNetwork` unpaid orders (counted under a per-network advisory
   * lock); and the order's payment window is `guard.window` of the pressure found. `later`: milestones
   * 2..n of the order (status scheduled, no window), inserted in the same transaction.
   */
  createHeld(order: NewOrder, guard: HoldGuard, later?: readonly NewOrder[]): Promise<CreateHeldResult>;
  /**
   * the unpaid (awaiting_payment) wallet orders whose on-chain buyer is `wallet`, of one kind (`viaAction`: created
   * through a Solana Action, else signed-in; default false): what its balances must also cover for an order of that kind
   */
  unpaidOfWallet(wallet: string, viaAction?: boolean): Promise<Array<{ id: string; mint: string; amount: bigint }>>;
  /** delete an order that is still awaiting_payment with no chain intent (creation failed before anyone saw it) */
  discardUnpaid(orderId: string): Promise<boolean>;
  /** every order, by id, after `afterId` (keyset pages: integrity checks) */
  scan(afterId: string | null, limit: number): Promise<OrderRecord[]>;
  /**
   * A fund transaction valid until `until` was issued for the order (keeps the latest `until`); `sponsored`:
   * it was a sponsored one, remembered as the order's `sponsoredFundTx` (replaces the previous one). One statement.
   */
  noteFundIssued(orderId: string, until: Date, sponsored?: IssuedFundTransaction): Promise<void>;
  /**
   * Fee sponsorship: set the row's `feeSponsor` while no fund transaction was issued for it yet
   * (`fund_issued_until` null), so the decision is taken once. Returns whether it was set.
   */
  setFeeSponsor?(orderId: string, sponsor: string | null): Promise<boolean>;
  /** terminal orders with a fund transaction issued valid until `since` or later (re-funded escrow check), by id after `afterId` (keyset pages) */
  listClosedFundableSince(since: Date, limit: number, afterId?: string | null): Promise<OrderRecord[]>;
  /**
   * Every row of the given orders (by order id; multi-milestone orders), in index order, in ONE statement
   * (a page of orders: no query per order).
   */
  milestonesOf(orderIds: readonly string[]): Promise<Map<string, OrderRecord[]>>;
  /**
   * Milestones k.. of an order scheduled -> awaiting_payment with the payment window (one transaction,
   * each row conditional on `scheduled`, milestone.payment_due each). false when any row was not scheduled
   * (nothing changed).
   */
  requestMilestonePayment(orderId: string, indexes: readonly number[], window: { paymentExpiresAt: Date; fundExpiresAt: number; deliveryDeadlines: Map<number, number> }): Promise<boolean>;
  /**
   * The buyer ends a multi-milestone order: one transaction locks its rows, checks that none is open (else
   * returns the open indexes), sets ended_at on every row and appends order.ended. `already`: ended before.
   */
  endOrder(orderId: string, at: Date): Promise<{ ended: true } | { already: true } | { open: number[] }>;
  /** flag an order for an operator; false when it is flagged already (log once) */
  flagAttention(orderId: string, attention: OrderAttention): Promise<boolean>;
  clearAttention(orderId: string): Promise<void>;
}

export type CreateHeldResult =
  | { created: OrderRecord }
  | { duplicate: OrderRecord }
  | { listingHeld: { orderId: string; status: OrderStatus; paymentExpiresAt: Date } }
  /** repeat sales: the listing's sold orders reached its stock (the listing reads sold) */
  | { soldOut: true }
  | { buyerLimit: { unpaid: number } }
  /** the network's unpaid orders; `earliestExpiresAt`: the soonest payment_expires_at among them */
  | { networkLimit: { holds: number; earliestExpiresAt: Date } }
  /** the latest payment_expires_at of the same buyer's unpaid-expired wallet orders for the listing inside the cool-down */
  | { cooldown: { lapsedAt: Date } }
  /** issue 25: a moderator took the listing down (read under the listing's row lock: a takedown and a hold serialize) */
  | { takenDown: true };

/** What weighs on a new hold (createHeld computes it under its locks; the service turns it into a payment window). */
export interface HoldPressure {
  /** a wallet order for the listing expired unpaid (payment_expires_at) after `HoldGuard.recentSince` */
  contested: boolean;
  /** unpaid orders of the new order's network before it (0 without a network) */
  networkHolds: number;
}

/** The anti-griefing rules createHeld applies (settings in OrdersSettings; see the orders README). */
export interface HoldGuard {
  /** unpaid orders a buyer may hold, of each kind apart (signed-in; created through a Solana Action: `viaAction`) */
  maxUnpaidPerBuyer: number;
  /** unpaid orders one network may hold (only when the order has a `holdNetwork`) */
  maxUnpaidPerNetwork: number;
  /**
   * expired unpaid wallet orders whose payment window closed after this count: for the cool-down (the
   * same buyer: user, buyer wallet or network) and for `contested` (anyone). null: no cool-down, nothing
   * is contested.
   */
  recentSince: Date | null;
  /** the new order's payment window (payment_expires_at, service clock; fund_expires_at, chain clock) for the pressure found */
  window(p: HoldPressure): { paymentExpiresAt: Date; fundExpiresAt: number };
  /**
   * issue 24 (offers): runs inside createHeld's transaction right after the order row is inserted; a
   * throw rolls the order back and createHeld rethrows it. The offers module claims its offer here, so
   * the order and the offer's acceptance commit together or not at all.
   */
  onCreated?: (tx: unknown, order: OrderRecord) => Promise<void>;
}

/** A signed transaction's blockhash lifetime (see ChainIntentRecord). */
export interface BlockhashLifetime {
  blockhash: string;
  lastValidBlockHeight: number;
}

/** What the orders module needs from the listings module. */
export interface ListingView {
  id: string;
  sellerId: string;
  sellerWallet: string;
  title: string;
  status: ListingStatus;
  currency: string;
  priceBaseUnits: bigint;
  durationDays: number;
  /** the listing's token mint (copied onto the order as token_mint_address) */
  tokenMint: string | null;
  /** issue 24 (helper "packages"): what `orderTermsOf` reads; absent = none */
  packages?: ListingTermsSource['packages'];
  milestones?: ListingTermsSource['milestones'];
  /** set while an unpaid order holds the listing (when that hold lapses at the latest) */
  heldUntil?: Date | null;
  /** issue 25: set while a moderator has the listing taken down (it cannot be ordered) */
  takenDown?: { at: Date } | null;
}

/**
 * issue 25 (modules/moderation `standingPort`): refuses a suspended or banned account what lists or orders
 * (403 account-suspended); everything that settles an open order never asks it.
 */
export interface StandingPort {
  assertMayTrade(userId: string): Promise<void>;
  /** whether a moderator suspended or banned the account now (a seller's listings take no new order) */
  isRestricted(userId: string): Promise<boolean>;
  /**
   * Both checks of an order's creation in one read (issue 28): throws as `assertMayTrade(buyerId)` does, else
   * says whether the seller (null: no listing, nothing to say) is restricted as `isRestricted` would.
   * Optional: without it the two calls above are made.
   */
  assertMayOrderFrom?(buyerId: string, sellerId: string | null): Promise<{ sellerRestricted: boolean }>;
}

/**
 * The frozen terms of an order (structurally `OrderTerms` of listings/order-terms.ts, the seam of the
 * issue 24 design note): 1..10 milestones whose amounts sum to the price (base units), delivery days
 * counted from each milestone's funding. Only trusted callers give them (the listing's or package's
 * terms, an accepted offer), never a request body.
 */
export interface OrderTermsInput {
  packageKey: string | null;
  packageName: string | null;
  priceBaseUnits: bigint;
  revisionsIncluded: number;
  milestones: { title: string | null; amountBaseUnits: bigint; deliveryDays: number }[];
}

/**
 * A transaction of the orders repository that another module joins (`OrdersRepo.fundIf`): `tx` is the
 * Prisma transaction client (opaque here), `events` the events to append at its end, in order.
 */
export interface TxScope {
  tx: unknown;
  events: NewEvent[];
}

export interface ListingsPort {
  get(listingId: string): Promise<ListingView | null>;
  /**
   * Move the listing along the contract's listing state table (the `listing` column of the order
   * lifecycle table). order_funded answers 409 listing-unavailable when the listing is not available.
   * `scope`: inside that transaction, the listing's event pushed to `scope.events` (not appended);
   * without it, in a transaction of its own.
   */
  applyOrderEvent(listingId: string, event: ListingOrderEvent, scope?: TxScope): Promise<void>;
}

/** A payment currency (the one currency shape: chain/types.ts CurrencyInfo). */
export type CurrencyView = CurrencyInfo;

export type { TxResult };

export interface FundTerms {
  orderId: string;
  buyer: string;
  seller: string;
  mint: string;
  amount: bigint;
  deliveryDeadline: number;
  reviewWindow: number;
  /** unix seconds (chain clock): `fund` refuses these terms afterwards (chain time at creation + the
   *  payment window) */
  expiresAt: number;
  /**
   * Milestones (issue 24), for the program's `fund_milestone` (parent order id, index, revisions): the
   * order the milestone belongs to (= orderId for milestone 1), its index and included revisions (the chain
   * client funds with `fund_milestone` whenever `parentOrderId` is set; orders.escrow.ts passes them through).
   */
  parentOrderId?: string;
  milestoneIndex?: number;
  revisionsIncluded?: number;
}

/** What one fund transaction takes from its buyer wallet, and the wallet's balances (all read on chain). */
export interface FundingNeeds {
  /**
   * lamports the transaction takes from the buyer: the network fee (getFeeForMessage) + the rent of the
   * accounts `fund` creates (order PDA, vault), and for wrapped SOL also the buyer's wSOL account's rent
   * when it does not exist yet and the amount itself (the transaction wraps it)
   */
  lamports: bigint;
  /** the part of `lamports` that is the order's amount (wrapped SOL only; else 0) */
  amountInLamports: bigint;
  /** sponsored (`{ sponsor }`): the fee + rent the sponsor pays; `lamports` is then 0 */
  sponsorLamports?: bigint;
  /** the buyer wallet's SOL balance, lamports */
  lamportsBalance: bigint;
  /** the buyer's token balance of the order's mint (its associated token account); null for wrapped SOL (paid from lamports) */
  tokenBalance: bigint | null;
}

/** A fund transaction issued to the buyer: the base64 wire bytes and until when it can land. */
/** How a fund transaction is built: `sponsor` (base58, the fee sponsor key) pays the fee and the escrow rent. */
export interface FundBuildOptions {
  sponsor?: string;
}

export interface IssuedFundTransaction {
  transaction: string;
  /** last moment it can land: its blockhash's lastValidBlockHeight converted to a time, conservatively */
  validUntil: Date;
}

export interface EscrowOrderView {
  buyer: string;
  seller: string;
  mint: string;
  amount: bigint;
  state: 'funded' | 'delivered' | 'disputed';
  /** fee snapshot taken by `fund` (absent from fakes) */
  feeBps?: number;
  fundedAt: number;
  deliveryDeadline: number;
  deliveredAt: number | null;
  disputedAt: number | null;
  reviewWindow: number;
}

/** Per-action options: `onSigned` is called with the signature after signing and before sending. */
export interface SendOptions {
  /** a throw aborts before anything is sent */
  onSigned?: (signature: string, lifetime?: BlockhashLifetime) => Promise<void>;
  /**
   * signatures of this order's transactions sent before: the new one is signed on a newer blockhash rather than
   * repeat one of them (the same instruction again on the same blockhash is the same transaction; chain/tx.ts)
   */
  distinctFrom?: ReadonlySet<string>;
}

/**
 * Arguments of the instructions that take some (programs/escrow; i24-design section 5):
 * resolve_dispute(buyer_bps), propose_settlement(buyer_bps, expires_at, proposed_by: the role the
 * platform signs for), accept_settlement(buyer_bps: must equal the stored proposal), extend_deadline(new_deadline).
 */
export interface InstructionArgs {
  /** basis points 0..10000 returned to the buyer */
  buyerBps?: number;
  /** unix seconds (chain clock): the settlement proposal lapses then */
  expiresAt?: number;
  /** who proposes, when the platform authority signs for a party */
  proposedBy?: 'buyer' | 'seller';
  /** unix seconds: the new delivery deadline */
  newDeadline?: number;
}

/** What the orders module needs from the escrow program (adapter over chain/escrow.ts EscrowClient). */
export interface EscrowPort {
  addresses(orderId: string, mint: string, tokenProgram?: string): { escrow: string; vault: string };
  /**
   * fund transaction (base64), partially signed by the platform authority, fee payer = buyer; with several
   * terms (milestones of one order, same buyer and mint) one `fund` instruction per terms in one transaction.
   * `opts.sponsor` (the fee sponsor's address, FEE_SPONSORSHIP): the sponsor is fee payer and `rent_payer`
   * and signs too (the buyer's signature is the one left)
   */
  buildFundTransaction(terms: FundTerms | readonly FundTerms[], opts?: FundBuildOptions): Promise<IssuedFundTransaction>;
  /** send a fully signed transaction (base64) and wait for confirmation */
  submitSignedTransaction(signedBase64: string): Promise<TxResult>;
  /**
   * Sign one instruction on the order's existing escrow as the platform authority (the arbiter for
   * resolve_dispute, whose split `buyerBps` is), send it and wait for confirmation.
   */
  send(ix: ServiceInstruction, orderId: string, o?: SendOptions & InstructionArgs): Promise<TxResult>;
  /** null when the order account does not exist (never funded, or closed by a terminal instruction) */
  fetchOrder(orderId: string): Promise<EscrowOrderView | null>;
  /**
   * Several order accounts in one read (chain/escrow.ts `fetchOrders`: getMultipleAccounts, 100 per call): each
   * id to its account, null when it does not exist. Absent (fakes): the payment watcher reads them one by one.
   */
  fetchOrders?(orderIds: readonly string[]): Promise<Map<string, EscrowOrderView | null>>;
  /** signature (+slot) of the transaction that funded the order (oldest one touching its PDA), if findable */
  findFundSignature?(orderId: string): Promise<{ signature: string; slot: number } | null>;
  /**
   * How the order's escrow was closed, from the chain's record of THAT order (the terminal
   * instruction acting on its PDA, the program event, the transfers out of its vault). With
   * `signature` only that transaction is read; else the newest ones touching the PDA. null when none
   * closed it (yet, or the history is gone).
   */
  findSettlement?(order: { id: string; mint: string }, signature?: string): Promise<OrderSettlement | null>;
  /** 'unknown' = the cluster has no record of the signature (yet) */
  signatureStatus(signature: string): Promise<'confirmed' | 'failed' | 'unknown'>;
  /**
   * What became of a recorded attempt of ours (chain/recorded-send.ts): landed, dead (rejected, or
   * its blockhash expired without it landing) or in flight. Throws chain-unavailable.
   */
  transactionOutcome(attempt: RecordedAttempt): Promise<TxOutcome>;
  /** token balance (base units) of a token account; 0 when it does not exist (attention reports) */
  tokenBalance?(tokenAccount: string): Promise<bigint>;
  /**
   * What the fund transaction of `terms` takes from the buyer wallet and what the wallet holds, read
   * from the RPC (chain/escrow.ts `fundingNeeds`). Absent (fakes): no balance check. Throws
   * chain-unavailable.
   */
  fundingNeeds?(terms: FundTerms, opts?: FundBuildOptions): Promise<FundingNeeds>;
  /**
   * The token program that owns `mint` (base58): Token-2022 or the legacy SPL Token program, as the fund transaction
   * uses it (chain/escrow.ts `tokenProgramOf`: the configured currency's, else the mint account's owner). Absent
   * (fakes): the configured currency's, else legacy. Throws chain-unavailable.
   */
  tokenProgramOf?(mint: string): Promise<string>;
  /** platform fee of the escrow config (bps), snapshotted on each order */
  feeBps(): Promise<number>;
  /** cluster unix time (the program's Clock), seconds */
  chainNow(): Promise<number>;
  /**
   * A subscription to the escrow's order accounts over the RPC websocket (chain/escrow.ts
   * `watchOrders`: one programSubscribe, reconnected with back-off); the caller starts and stops it.
   * Absent, or null (no websocket configured): the payment watcher polls only.
   */
  watchOrders?(handlers: OrderWatchHandlers, opts?: OrderWatchOptions): OrderWatch | null;
}

/** What an order-account subscription reports (chain/escrow.ts `watchOrders`, in the orders module's terms). */
export interface OrderWatchHandlers {
  /** an order account was written at `slot`: the order id and the account as written (null: undecodable, read it back) */
  onOrder: (orderId: string, slot: number, view: EscrowOrderView | null) => void;
  /** the subscription is (again) live; writes while it was not were not reported */
  onSubscribed?: () => void;
  /** a live subscription was lost; it is being retried */
  onDown?: (reason: string) => void;
}

/** A running order-account subscription (chain/pubsub.ts ProgramSubscription). */
export interface OrderWatch {
  readonly state: SubscriptionState;
  start(): void;
  stop(): Promise<void>;
}

/** Reconnect back-off (ms) and heartbeat (ms) of an order-account subscription. */
export interface OrderWatchOptions {
  backoff?: { initialMs: number; maxMs: number };
  heartbeatMs?: number;
}

/**
 * What the orders module needs from the custody module (present only when custody is enabled):
 * custodial payment of an order from the buyer's balance, and the escrow outcome booked back.
 */
export interface CustodialPaymentsPort {
  /** the on-chain buyer of the user's custodial orders (the user's deposit address, allocated on first use) */
  buyerAddressFor(userId: string): Promise<string>;
  /** 409 insufficient-funds unless the available balance of `mint` covers `amount` (base units); 400 for a non-custody mint */
  assertAvailable(userId: string, mint: string, amount: bigint): Promise<void>;
  /**
   * Hold the price and fund the order's escrow from the hot wallet. `funded`: confirmed on chain;
   * `pending`: outcome not known yet (finished by the custody reconciler). Throws 409
   * insufficient-funds (nothing held) or 502 chain-transaction-failed (hold released).
   */
  payOrder(order: OrderRecord): Promise<{ status: 'funded'; signature: string; slot: number | null } | { status: 'pending' }>;
  /** book the escrow outcome of a terminal custodial order (refund / split back to the balance); idempotent */
  bookOrderOutcome(order: OrderRecord): Promise<boolean>;
}

/** How an order's escrow was closed, as the chain recorded it for that order (chain/settlement.ts). */
export interface OrderSettlement {
  instruction: TerminalInstruction;
  signature: string;
  slot: number;
  /** resolve_dispute only */
  buyerBps?: number;
  /** base units that left the vault per payee, and where the buyer's share went */
  payout: OrderPayout;
}

/** The logger the orders module writes to (pino's shape: a bindings object, then the message). */
/** The module's logger: the shared shape (server/src/lib/log.ts). */
export type { Log } from '../../lib/log.js';
