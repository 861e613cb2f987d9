/**
 * Custody module records and the ports it uses. Amounts are u64 base units (`bigint`); times are
 * `Date`s (service clock) unless named `*Seconds`; addresses are base58 strings.
 */

/** A custody currency: a configured payment currency plus its custody limits (base units). */
export interface CustodyCurrency {
  code: string;
  mint: string;
  decimals: number;
  tokenProgram?: string;
  /** deposits below this are recorded (status below_minimum) but not credited */
  minDeposit: bigint;
  /** smallest withdrawal amount (the fee comes on top) */
  minWithdrawal: bigint;
  /** flat fee per withdrawal, debited on top of the amount, kept by the service */
  withdrawalFee: bigint;
}

/** The user's deposit address (custody_deposit_addresses). */
export interface DepositAddressRecord {
  userId: string;
  /** SLIP-0010 index: the address is m/44'/501'/{index}'/0' of the custody seed */
  index: number;
  address: string;
  createdAt: Date;
}

export type DepositStatus = 'credited' | 'below_minimum';

/** A detected incoming token transfer (custody_deposits). */
export interface DepositRecord {
  id: string;
  userId: string;
  address: string;
  tokenAccount: string;
  mint: string;
  currency: string;
  amount: bigint;
  signature: string;
  slot: number;
  status: DepositStatus;
  createdAt: Date;
}

export type TransferKind = 'withdrawal' | 'sweep' | 'order_fund';
/**
 * pending: recorded (and for withdrawals / order funding: held), not signed yet;
 * submitted: signed, the signature stored before the first send (outcome read from the chain);
 * confirmed: landed and booked; failed: rejected or expired, the hold released.
 */
export type TransferStatus = 'pending' | 'submitted' | 'confirmed' | 'failed';

/** An on-chain transfer the custody service makes (custody_transfers). */
export interface TransferRecord {
  id: string;
  kind: TransferKind;
  userId: string;
  currency: string;
  mint: string;
  /** base units moved on chain */
  amount: bigint;
  /** withdrawal fee (base units), 0 for other kinds */
  fee: bigint;
  /** withdrawal: the destination wallet; sweep: the hot wallet; order_fund: the order's escrow PDA */
  destination: string;
  destinationTokenAccount: string;
  orderId: string | null;
  status: TransferStatus;
  signature: string | null;
  slot: number | null;
  lastValidBlockHeight: number | null;
  attempt: number;
  leaseUntil: Date | null;
  error: string | null;
  closedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  settledAt: Date | null;
}

/** What the custody module needs to know about an order (a port over the orders module). */
export interface OrderView {
  id: string;
  buyerId: string;
  sellerWallet: string;
  currency: string;
  mint: string;
  amount: bigint;
  /** unix seconds (chain clock), written into the escrow by `fund` */
  deliveryDeadline: number;
  /** unix seconds (chain clock): `fund` refuses the order's terms afterwards */
  fundExpiresAt: number;
  /** seconds */
  reviewWindow: number;
  status: string;
  /** resolve_dispute split, basis points returned to the buyer; null unless resolved */
  buyerBps: number | null;
  /**
   * What left the escrow vault when the order closed, as the chain recorded it for this order (base
   * units; `buyerTokenAccount` = where the buyer's share went). null while open, and on orders closed
   * before payouts were recorded.
   */
  payout?: { buyer: bigint; buyerTokenAccount: string | null } | null;
}

/** The module's logger: the shared shape and silent default (server/src/lib/log.ts). */
export { type Log, silentLog } from '../../lib/log.js';
