/**
 * Orders module types and the ports it needs from other modules (listings, chain).
 * Amounts are u64 base units (bigint); chain times are unix seconds.
 */
import type { Instruction, OrderStatus } from './order-state.js';

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
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export type PaymentSource = 'wallet' | 'custodial';

export type NewOrder = Omit<OrderRecord, 'createdAt' | 'updatedAt' | 'version' | 'paymentSource'> & {
  createdAt?: Date;
  /** default wallet */
  paymentSource?: PaymentSource;
};
export type OrderPatch = Partial<Omit<OrderRecord, 'id' | 'createdAt' | 'updatedAt' | 'version'>>;

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
  createdAt: Date;
  updatedAt: Date;
}

export interface ListOrdersQuery {
  userId: string;
  role?: 'buyer' | 'seller';
  status?: OrderStatus;
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
  /** conditional update: applies only when the order is still in `expected`; false otherwise */
  updateIf(id: string, expected: OrderStatus, patch: OrderPatch): Promise<boolean>;
  /**
   * DB guard: in one transaction, lock the order row, check it is still in `expected` with no
   * pending/sent intent, and insert a pending intent. Returns null when the guard fails.
   */
  beginIntent(orderId: string, expected: OrderStatus, action: Instruction, params: Record<string, unknown> | null): Promise<ChainIntentRecord | null>;
  markIntentSent(intentId: string, signature: string): Promise<void>;
  /** one transaction: intent confirmed (+signature) and the order patched when still in `expected` */
  confirmIntent(intentId: string, signature: string | null, slot: number | null, orderId: string, expected: OrderStatus, patch: OrderPatch): Promise<boolean>;
  /** record an already-confirmed transaction (the buyer's fund) */
  recordConfirmed(orderId: string, action: Instruction, signature: string, slot: number | null): Promise<void>;
  failIntent(intentId: string, error: string): Promise<void>;
  openIntentFor(orderId: string): Promise<ChainIntentRecord | null>;
  listOpenIntents(limit: number): Promise<ChainIntentRecord[]>;
  listIntents(orderId: string): Promise<ChainIntentRecord[]>;
}

/** What the orders module needs from the listings module. */
export interface ListingView {
  id: string;
  sellerId: string;
  sellerWallet: string;
  title: string;
  status: string; // available | reserved | sold | unlisted
  currency: string;
  priceBaseUnits: bigint;
  durationDays: number;
  /** the listing's token mint (copied onto the order as token_mint_address) */
  tokenMint?: string | null;
}

export interface ListingsPort {
  get(listingId: string): Promise<ListingView | null>;
  reserve(listingId: string): Promise<void>;
  release(listingId: string): Promise<void>;
  markSold(listingId: string): Promise<void>;
}

export interface CurrencyView {
  code: string;
  mint: string;
  decimals: number;
  tokenProgram?: string;
}

export interface TxResult {
  signature: string;
  slot: number;
}

export interface FundTerms {
  orderId: string;
  buyer: string;
  seller: string;
  mint: string;
  amount: bigint;
  deliveryDeadline: number;
  reviewWindow: number;
  /** unix seconds (chain clock): `fund` refuses these terms afterwards */
  expiresAt: number;
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
  onSigned?: (signature: string) => Promise<void>;
}

/** What the orders module needs from the escrow program (adapter over chain/escrow.ts EscrowClient). */
export interface EscrowPort {
  addresses(orderId: string, mint: string, tokenProgram?: string): { escrow: string; vault: string };
  /** base64 fund transaction, partially signed by the platform authority, fee payer = buyer */
  buildFundTransaction(terms: FundTerms): Promise<string>;
  /** send a fully signed transaction (base64) and wait for confirmation */
  submitSignedTransaction(signedBase64: string): Promise<TxResult>;
  markDelivered(orderId: string, o?: SendOptions): Promise<TxResult>;
  release(orderId: string, o?: SendOptions): Promise<TxResult>;
  claim(orderId: string, o?: SendOptions): Promise<TxResult>;
  openDispute(orderId: string, o?: SendOptions): Promise<TxResult>;
  resolveDispute(orderId: string, buyerBps: number, o?: SendOptions): Promise<TxResult>;
  refund(orderId: string, o?: SendOptions): Promise<TxResult>;
  /** null when the order account does not exist (never funded, or closed by a terminal instruction) */
  fetchOrder(orderId: string): Promise<EscrowOrderView | null>;
  /** signature (+slot) of the transaction that funded the order (oldest one touching its PDA), if findable */
  findFundSignature?(orderId: string): Promise<{ signature: string; slot: number } | null>;
  /**
   * The terminal escrow instruction that closed the order account (newest successful transaction on
   * its PDA that ran release / claim / refund / resolve_dispute), when the account is gone.
   */
  findClosingInstruction?(orderId: string): Promise<ClosingInstruction | null>;
  /** 'unknown' = the cluster has no record of the signature (yet) */
  signatureStatus(signature: string): Promise<'confirmed' | 'failed' | 'unknown'>;
  /** platform fee of the escrow config (bps), snapshotted on each order */
  feeBps(): Promise<number>;
  /** cluster unix time (the program's Clock), seconds */
  chainNow(): Promise<number>;
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

export interface ClosingInstruction {
  instruction: 'release' | 'claim' | 'refund' | 'resolve_dispute';
  signature: string;
  slot: number;
  /** resolve_dispute only */
  buyerBps?: number;
}
