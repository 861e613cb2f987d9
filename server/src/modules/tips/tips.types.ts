/**
 * Tips module types and the ports it needs (the orders it tips, the chain). Amounts are u64 base units
 * (bigint); addresses base58.
 */
import type { PaymentSource, TipStatus } from '@bazaar/contract';

export type { TipStatus };

/** One tip row (table `tips`). */
export interface TipRecord {
  id: string;
  /** the order the buyer knows (its first milestone's id) */
  orderId: string;
  buyerId: string;
  sellerId: string;
  /** the paying wallet: the order's buyer wallet */
  buyerWallet: string;
  /** the payee: the order's seller wallet */
  sellerWallet: string;
  currency: string;
  mint: string;
  decimals: number;
  amount: bigint;
  /** the buyer's associated token account of the mint */
  sourceTokenAccount: string;
  /** the seller's associated token account of the mint: where the transfer must land */
  destinationTokenAccount: string;
  status: TipStatus;
  /** base64 message of the issued transaction (the submit route accepts exactly it, signed) */
  message: string;
  blockhash: string;
  lastValidBlockHeight: number;
  /** until about then the issued transaction can land */
  validUntil: Date;
  signature: string | null;
  slot: number | null;
  confirmedAt: Date | null;
  createdAt: Date;
}

export type NewTip = Omit<TipRecord, 'status' | 'signature' | 'slot' | 'confirmedAt' | 'createdAt'>;

/** One escrow unit of an order (a milestone; an order without milestones has one) as eligibility reads it. */
export interface TipMilestone {
  /** the row status (orders contract ORDER_STATUSES) */
  status: string;
  /** base units the seller received when it settled (null: not settled, or not read back) */
  sellerPayout: bigint | null;
  /** the buyer's share of a resolution, basis points (null: none) */
  buyerBps: number | null;
}

/** What the tips module reads of an order (the orders module's read port, adapted in composition.ts). */
export interface TipOrder {
  id: string;
  buyerId: string;
  sellerId: string;
  buyerWallet: string;
  sellerWallet: string;
  paymentSource: PaymentSource;
  currency: string;
  mint: string;
  decimals: number;
  /** the order's price, base units (sum of its milestones) */
  amount: bigint;
  /** its escrow units, at least one */
  milestones: TipMilestone[];
}

export interface TipOrdersPort {
  /** the order with this id (the id the buyer knows), or null */
  get(orderId: string): Promise<TipOrder | null>;
}

/** The transaction issued for a tip (see tips.chain.ts `buildTipTransaction`). */
export interface IssuedTipTransaction {
  /** base64 wire bytes, unsigned; fee payer = the buyer */
  transaction: string;
  /** base64 of the serialized message (what the buyer signs) */
  message: string;
  blockhash: string;
  lastValidBlockHeight: number;
  validUntil: Date;
  sourceTokenAccount: string;
  destinationTokenAccount: string;
}

/** A signature touching an account (newest first), as getSignaturesForAddress reports it. */
export interface SignatureInfo {
  signature: string;
  failed: boolean;
  slot: number;
  /** the memos as the node reports them (`[len] text; ...`), null when it reports none (or does not report memos) */
  memo: string | null;
}

export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
