/**
 * Fee sponsorship (issue 26 item 5; README "Fee sponsorship", docs/threat-model.md "Fee sponsorship"):
 * a dedicated sponsor key pays the network fee and the rent of the escrow accounts (order PDA, vault)
 * of a wallet order's fund transaction, so a buyer wallet holding USDC and 0 SOL can pay. The program
 * records the sponsor as the escrow's `rent_payer`; every closing instruction returns the rent to it.
 *
 * Who is sponsored (`sponsorable`), when FEE_SPONSORSHIP is on: a buyer signed in with SIWS (credential
 * kind `user`, not an API key or an access token) paying with his own wallet, in a token other than
 * wrapped SOL (a SOL buyer holds SOL by definition), milestone 1 of the order (later milestones are paid
 * by the buyer). Always, not only when the wallet lacks SOL: like Kora and the Solana Pay 1.2 fee payer,
 * the app pays the network costs, so the wallet shows the same transaction whatever it holds, and the
 * sponsor's marginal cost is the fee (the rent comes back).
 *
 * What it costs and what bounds it (`ChainBudget.chargeSponsorship`): the order's first sponsored
 * transaction counts against the buyer's account and client network per UTC day and adds its fee + rent
 * to the sponsor's day. A sponsored transaction costs the sponsor a fee only if it lands, once: while the last one
 * issued for the order can still land (20 s or more left, `SPONSORED_TX_REUSE_MIN_MS`), every re-issue (payment
 * refresh, the anonymous Solana Pay POST) hands out those same bytes and charges nothing; only a new one, minted
 * once the last can no longer land, adds its fee (a buyer could make each of them fail on chain). So a caller who
 * knows an order id and its buyer wallet adds at most one fee per ~30 s of that order's payment window (a
 * transaction counted valid ~50 s, handed out until 20 s are left) to the sponsor's day, whatever the number of
 * requests (issue 26 audit; README "Fee sponsorship"). Refused (429 sponsorship-limit, 503 sponsorship-budget-exhausted, or the
 * sponsor's balance too low): the order is issued unsponsored when the buyer wallet holds the SOL,
 * else the refusal is answered with `required_lamports`.
 */
import { DomainError } from '../../errors.js';
import type { PrincipalLike } from './use-cases/context.js';

/** Network fee of a sponsored fund transaction: 3 signatures (sponsor, platform, buyer), lamports. */
export const SPONSORED_FUND_FEE = 15_000;

/** What the orders module needs to sponsor fund transactions (composition wires the chain client and the budget). */
export interface FeeSponsorshipPort {
  /** the sponsor key's address (base58): the fee payer and rent payer of sponsored fund transactions */
  readonly address: string;
  /** the sponsor's balance, lamports (RPC). Throws chain-unavailable. */
  balance(): Promise<bigint>;
  /**
   * Charge one sponsored fund transaction (modules/budget `chargeSponsorship`): `counted` for the order's
   * first, `lamports` its fee (+ rent for the first). Throws sponsorship-limit / sponsorship-budget-exhausted.
   */
  charge(c: { userId: string; ip: string | null; lamports: bigint; counted: boolean }): Promise<void>;
}

/** Whether an order being created may be sponsored (see the module doc): pure. */
export function sponsorable(p: PrincipalLike, o: { custodial: boolean; buyerWallet: string; nativeMint: boolean; milestoneIndex: number }): boolean {
  return p.kind === 'user' && !p.unverifiedWallet && !o.custodial && !!p.wallet && p.wallet === o.buyerWallet && !o.nativeMint && o.milestoneIndex === 1;
}

/** The refusal when the sponsor's balance cannot cover an order (503 sponsorship-budget-exhausted, reason sponsor_balance). */
export function sponsorBalanceLow(balance: bigint, needed: bigint): DomainError {
  return new DomainError(
    'sponsorship-budget-exhausted',
    `The fee sponsor holds ${balance} lamports, less than the ${needed} this order's fee and escrow rent take; the operator must top it up.`,
    { reason: 'sponsor_balance', balance_lamports: Number(balance), needed_lamports: Number(needed) },
  );
}

/** Whether `err` is a sponsorship refusal (the buyer may then pay unsponsored). */
export function isSponsorshipRefusal(err: unknown): err is DomainError {
  return err instanceof DomainError && (err.slug === 'sponsorship-limit' || err.slug === 'sponsorship-budget-exhausted');
}
