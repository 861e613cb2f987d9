/**
 * Use case "pay an order": the fund transaction the buyer signs (POST /orders/{id}/payment, Solana
 * Pay), its submission (POST /orders/{id}/transaction), the custodial funding, and payment detection
 * (the watcher's `checkPayment`: funded -> in_progress, past expiry -> expired). `markFunded` is the
 * one place an order becomes funded; when its listing was taken meanwhile, the order is refunded at
 * once through the record-before-send pipeline.
 *
 * Milestones (issue 24): each row is paid on its own (its own escrow, id = the milestone's id). Milestone 1
 * is paid as any order; later milestones after POST /orders/{id}/milestones/fund (use-cases/milestones)
 * with ONE transaction for the rows awaiting payment, which submitTransaction and the Solana Pay POST
 * accept for the order (the same instructions as the one issued, nothing else). An unpaid later milestone
 * goes back to `scheduled` when its window closes (the table's `lapse` row), not to expired.
 */
import { isLackOfFunds } from '../../wallet-funds.js';
import { ChainActionLandedError, DomainError } from '../../../../errors.js';
import { formatUiAmount } from '../../../../lib/money.js';
import { compareFundTransaction, normalizeTransaction } from '../../fund-tx.js';
import { type OrderStatus, listingEventAfter, needsChainClock, refusal, targetStatus } from '../../order-state.js';
import { orderErrors } from '../../orders.errors.js';
import type { EscrowOrderView, IssuedFundTransaction, OrderRecord, TxResult } from '../../orders.types.js';
import type { PerformLocked } from '../act-on-chain/record-before-send.js';
import { type OrdersContext, type PrincipalLike, applyListingEffect, assertWalletCanFund, refusedForFunds, clocks, fundOpts, fundTerms, roleOf, termsMatch } from '../context.js';
import { SPONSORED_FUND_FEE, isSponsorshipRefusal, sponsorBalanceLow } from '../../sponsorship.js';
import type { ReadAndPresent } from '../read-and-present.js';

/** contract OrderPayment */
export interface PaymentInstructions {
  transaction: string;
  solana_pay_url: string;
  /** who pays the fee and the escrow rent (base58): the buyer wallet or the fee sponsor */
  fee_payer: string;
  /** true when the fee sponsor pays them */
  sponsored: boolean;
  /** last moment `transaction` can land: min(its blockhash's validity, payment_expires_at) */
  expires_at: Date;
}

/** The legacy SPL Token program: the Solana Pay 1.2 draft's default `token-program`. */
const LEGACY_TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

/**
 * contract SolanaPayTransaction: the Solana Pay transaction-request POST answer, with the 1.2 draft's
 * `tokenProgram` (the payment mint's token program, Token-2022 or legacy) and `feePayer` (only when someone else than
 * the paying account pays the fee: a sponsored fund transaction, issue 26 item 5).
 */
export interface SolanaPayAnswer {
  transaction: string;
  message: string;
  tokenProgram: string;
  feePayer?: string;
}

/** Why a fund transaction is issued: `first` = the order's first (at creation); `ip` = the client network. */
export interface IssueContext {
  /**
   * the order's first fund transaction, issued by the request that created it: the record passed is the row
   * as that request's transaction committed it, so it is not read again (issue 28: statements per buyer)
   */
  first?: boolean;
  ip?: string | null;
  /** the order passed along was read by this request just now: checked, not read again (issue 28) */
  fresh?: boolean;
}

/**
 * A sponsored fund transaction is handed out again (not rebuilt, not charged) while at least this long is left
 * before it can no longer land (its `validUntil`), ms: the time a wallet needs to sign and send it.
 */
export const SPONSORED_TX_REUSE_MIN_MS = 20_000;

export function payOrder(c: OrdersContext, deps: { read: Pick<ReadAndPresent, 'get'>; perform: PerformLocked }) {
  /**
   * The order, while the table lets its buyer `pay` it now (awaiting payment, from a wallet, in the window); 409 otherwise.
   * `known`: the row as this request just read or wrote it (checked, not read again).
   */
  async function requireAwaitingPayment(orderId: string, known?: OrderRecord): Promise<OrderRecord> {
    const order = known ?? (await c.repo.get(orderId));
    if (!order) throw orderErrors.notFound(orderId);
    const refused = refusal(order, 'buyer', 'pay', await clocks(c, needsChainClock(order.status, 'buyer', 'pay')));
    if (refused) throw refused;
    return order;
  }

  /**
   * The rows one fund transaction of order `orderId` pays now: milestone 1 while it awaits payment (a
   * one-milestone order: the order), else the later milestones awaiting payment (the buyer asked to fund
   * them), each while the table lets its buyer `pay` it; 409 invalid-state-transition when none.
   */
  async function payableRows(orderId: string): Promise<OrderRecord[]> {
    const first = await c.repo.get(orderId);
    if (!first) throw orderErrors.notFound(orderId);
    // the row just read is the one checked (issue 28: no read the previous statement returned)
    if (first.milestoneCount === 1 || first.status === 'awaiting_payment') return [await requireAwaitingPayment(orderId, first)];
    const rows = ((await c.repo.milestonesOf([orderId])).get(orderId) ?? []).filter((r) => r.status === 'awaiting_payment');
    if (rows.length === 0) throw orderErrors.invalidTransition(orderId, first.status, 'pay');
    const at = await clocks(c, false);
    for (const r of rows) {
      const refused = refusal(r, 'buyer', 'pay', at);
      if (refused) throw refused;
    }
    return rows;
  }

  /**
   * The one place fund transactions are built for buyers: only for an order that is still
   * awaiting_payment, paid from a wallet, inside its payment window (409 otherwise). The transaction
   * carries the order's fund expiry, so once the program checks it a closed order can never be
   * funded again; until then the stray-escrow refund returns such an escrow (../recover-and-reconcile).
   */
  async function issueFundTransaction(order: OrderRecord, issue: IssueContext = {}): Promise<IssuedFundTransaction & { feeSponsor: string | null }> {
    let current = await requireAwaitingPayment(order.id, issue.first || issue.fresh ? order : undefined);
    if (current.feeSponsor && !issue.first) {
      // issue 26 audit: a sponsored transaction costs the sponsor a fee only if it lands, and it lands at most once;
      // so while the last one issued can still land (with time left to sign and send it), every re-issue (payment
      // refresh, the anonymous Solana Pay POST) hands out those same bytes and charges nothing
      const last = current.sponsoredFundTx;
      if (last && c.sponsorship?.address === current.feeSponsor && last.validUntil.getTime() - c.now().getTime() >= SPONSORED_TX_REUSE_MIN_MS) {
        return { ...last, feeSponsor: current.feeSponsor };
      }
    }
    if (current.feeSponsor) current = await chargeSponsorship(current, issue);
    const issued = await c.escrow.buildFundTransaction(fundTerms(current), fundOpts(current));
    // until about then it may land, even after the order closed (the stray-escrow refund looks at these)
    await c.repo.noteFundIssued(order.id, issued.validUntil, current.feeSponsor ? { transaction: issued.transaction, validUntil: issued.validUntil } : undefined);
    return { ...issued, feeSponsor: current.feeSponsor ?? null };
  }

  /**
   * Fee sponsorship (../../sponsorship.ts): charge the sponsored fund transaction about to be handed out.
   * The order's first one (`issue.first`): the sponsor's balance must cover its fee and rent, then it is
   * counted against the buyer's account and network and its fee + rent against the sponsor's day; refused,
   * the order falls back to unsponsored when the buyer wallet can pay the fee and rent itself (decided
   * once: no fund transaction was issued yet), else the refusal is thrown with `required_lamports`. A
   * re-issue that mints a new transaction (the last one can no longer land: `issueFundTransaction` hands that one
   * out again while it can) adds its fee to the sponsor's day (refused: the refusal, the order keeps its shape).
   * Returns the row as it will be built.
   */
  async function chargeSponsorship(order: OrderRecord, issue: IssueContext): Promise<OrderRecord> {
    const s = c.sponsorship;
    try {
      if (!s || s.address !== order.feeSponsor) {
        throw new DomainError('sponsorship-budget-exhausted', 'Fee sponsorship is turned off on this service (or its sponsor key changed) since this order was created.', { reason: 'sponsorship_off' });
      }
      if (!issue.first) {
        await s.charge({ userId: order.buyerId, ip: issue.ip ?? null, lamports: BigInt(SPONSORED_FUND_FEE), counted: false });
        return order;
      }
      const needs = await c.escrow.fundingNeeds?.(fundTerms(order), fundOpts(order));
      const lamports = needs?.sponsorLamports ?? BigInt(SPONSORED_FUND_FEE);
      const balance = await s.balance();
      if (balance < lamports) throw sponsorBalanceLow(balance, lamports);
      await s.charge({ userId: order.buyerId, ip: issue.ip ?? null, lamports, counted: true });
      return order;
    } catch (err) {
      if (!issue.first || !isSponsorshipRefusal(err)) throw err;
      // the buyer pays himself when his wallet holds the SOL (the same check as an unsponsored order's)
      const unsponsored = { ...order, feeSponsor: null };
      const needs = await c.escrow.fundingNeeds?.(fundTerms(unsponsored)).catch(() => null);
      if (needs && needs.lamportsBalance >= needs.lamports && (await c.repo.setFeeSponsor?.(order.id, null))) {
        c.log.info({ order_id: order.id, refused: err.slug }, 'fee sponsorship refused; the buyer pays the fee and rent');
        return unsponsored;
      }
      if (needs) {
        err.extensions.required_lamports = Number(needs.lamports);
        err.extensions.wallet_lamports = Number(needs.lamportsBalance);
      }
      throw err;
    }
  }

  /**
   * The Solana Pay transaction-request link of an order: `solana:<link>` where link is the https URL
   * of the order's solana-pay endpoint. Per the Solana Pay spec the link is URL-encoded only when it
   * has query parameters (ours has none), which keeps the URL and its QR code short. `currency`: the order's; when its
   * mint is not a legacy SPL mint (Token-2022, as configured), the Solana Pay 1.2 protocol parameter
   * `token-program=<program>` follows the link (the draft's name; wallets ignore parameters they do not know, and a
   * legacy mint needs none: the draft's default).
   */
  function solanaPayUrl(orderId: string, currency?: string): string {
    const link = `${c.settings.publicBaseUrl.replace(/\/+$/, '')}/api/v1/orders/${orderId}/solana-pay`;
    const program = currency ? c.currency(currency)?.tokenProgram : undefined;
    const params = program && program !== LEGACY_TOKEN_PROGRAM ? `?token-program=${program}` : '';
    return `solana:${new URL(link).search ? encodeURIComponent(link) : link}${params}`;
  }

  /**
   * A fresh fund transaction for an awaiting_payment wallet order (never for any other order). `issue`:
   * `first` when the order is being created (its first fund transaction), `ip` the client network.
   */
  async function paymentFor(order: OrderRecord, issue: IssueContext = {}): Promise<PaymentInstructions> {
    const issued = await issueFundTransaction(order, issue);
    return {
      transaction: issued.transaction,
      solana_pay_url: solanaPayUrl(order.id, order.currency),
      fee_payer: issued.feeSponsor ?? order.buyerWallet,
      sponsored: issued.feeSponsor !== null,
      expires_at: new Date(Math.min(order.paymentExpiresAt.getTime(), issued.validUntil.getTime())),
    };
  }

  /**
   * awaiting_payment -> in_progress (escrow funded), listing reserved (milestone 1: the order's listing effect). Idempotent.
   * ONE transaction (issue 28; `OrdersRepo.fundIf`): the row, the fund transaction's record, the listing's move,
   * and their events (order.funded, then the listing's), so a crash leaves either all of it or none (the chain
   * still shows the escrow, and the watcher's next pass funds it). The listing taken meanwhile by another paid
   * order: the order is funded, then refunded at once (listing-taken). Another refusal of the listing (not
   * found, invalid transition) is logged and the funding stands, as before; a database error rolls it all back.
   * `known`: the row as just read (the watcher's batch), so it is not read again.
   */
  async function markFunded(orderId: string, view: EscrowOrderView, signature: string | null, slot: number | null = null, known?: OrderRecord): Promise<OrderRecord> {
    return c.mutex.run(orderId, async () => {
      const patch = {
        status: targetStatus('pay'),
        transition: 'pay' as const,
        fundedAt: new Date(view.fundedAt * 1000),
        // the program snapshots the fee when funded: that one applies to the payout
        ...(view.feeBps !== undefined ? { feeBps: view.feeBps } : {}),
        fundSignature: signature,
        ...(signature ? { lastSignature: signature } : {}),
      };
      const funded = await c.repo.fundIf(
        orderId,
        patch,
        { signature, slot },
        async (scope, order): Promise<'reserved' | 'taken' | 'kept'> => {
          // a later milestone: the listing is reserved by the order since milestone 1
          if (order.milestoneIndex > 1) return 'kept';
          try {
            await c.listings.applyOrderEvent(order.listingId, listingEventAfter(order)!, scope);
            return 'reserved';
          } catch (err) {
            if (!(err instanceof DomainError)) throw err; // the database: the whole funding rolls back
            if (err.slug === 'listing-unavailable') return 'taken';
            c.log.error({ err, order_id: orderId }, 'listing could not be reserved');
            return 'kept';
          }
        },
        known,
      );
      if (!funded) return (await c.repo.get(orderId))!;
      c.log.info({ order_id: orderId, signature }, 'order funded');
      if (funded.within !== 'taken') return funded.order;
      // another order of the same listing was funded first: give this buyer the money back
      c.log.warn({ order_id: orderId }, 'listing already taken; refunding the order');
      return deps.perform(orderId, 'system', 'refund', { reason: 'listing-taken' });
    });
  }

  /** Fund a new custodial order through the custody module (see createOrder). */
  async function payCustodially(order: OrderRecord): Promise<OrderRecord> {
    let outcome;
    try {
      outcome = await c.custody!.payOrder(order);
    } catch (err) {
      if (err instanceof DomainError && (err.slug === 'insufficient-funds' || err.slug === 'chain-transaction-failed')) {
        // compensation: nothing is held any more, the order can never be paid
        await c.repo.updateIf(order.id, 'awaiting_payment', { status: targetStatus('expire'), transition: 'expire' });
      }
      throw err;
    }
    if (outcome.status === 'funded') {
      const view = await c.escrow.fetchOrder(order.id).catch(() => null);
      if (view && termsMatch(order, view)) return markFunded(order.id, view, outcome.signature, outcome.slot);
    }
    // not confirmed yet: the custody reconciler finishes the funding, the payment watcher sees the escrow
    return (await c.repo.get(order.id))!;
  }

  /**
   * One fund transaction for later milestones awaiting payment (one `fund` per row, escrow id = the row's
   * id), noted on each row (the stray-escrow refund looks at them once closed).
   */
  async function issueMilestonesTransaction(rows: readonly OrderRecord[]): Promise<IssuedFundTransaction> {
    const issued = await c.escrow.buildFundTransaction(rows.map(fundTerms));
    for (const r of rows) await c.repo.noteFundIssued(r.id, issued.validUntil);
    return issued;
  }

  /**
   * POST /orders/{id}/transaction for later milestones: the signed transaction must be exactly the one
   * issued for the rows awaiting payment (their fund instructions, in index order; only the blockhash may
   * differ); sent once, then each row is marked funded from its own escrow account.
   */
  async function submitMilestones(orderId: string, signedBase64: string, signed: ReturnType<typeof normalizeTransaction>): Promise<OrderRecord> {
    // a repeat of the submission that funded these milestones: answer with the order, send nothing
    const all = (await c.repo.milestonesOf([orderId])).get(orderId) ?? [];
    if (signed.signature && all.some((r) => r.status !== 'awaiting_payment' && r.fundSignature === signed.signature)) return (await c.repo.get(orderId))!;
    const rows = await payableRows(orderId);
    const expected = normalizeTransaction((await c.escrow.buildFundTransaction(rows.map(fundTerms))).transaction);
    const diff = compareFundTransaction(signed, expected);
    if (diff) throw orderErrors.fundMismatch(diff);
    let tx: TxResult | null = null;
    try {
      tx = await c.escrow.submitSignedTransaction(signedBase64);
    } catch (err) {
      // sent already (wallet + API)? the escrows say
      const views = await Promise.all(rows.map((r) => c.escrow.fetchOrder(r.id).catch(() => null)));
      if (!views.every((v, i) => v && termsMatch(rows[i]!, v))) throw isLackOfFunds(err) ? await refusedForFunds(c, rows[0]!, err) : err;
    }
    for (const r of rows) {
      const view = await c.escrow.fetchOrder(r.id);
      if (!view || !termsMatch(r, view)) throw orderErrors.notFundedOnChain(r.id);
      const signature = tx?.signature ?? signed.signature;
      await markFunded(r.id, view, signature, tx?.slot ?? null).catch((err) => {
        throw err instanceof DomainError ? err : new ChainActionLandedError(err, { action: 'fund', order_id: r.id, signature: signature ?? 'unknown' });
      });
    }
    return (await c.repo.get(orderId))!;
  }

  return {
    issueMilestonesTransaction,
    paymentFor,
    payCustodially,
    markFunded,
    solanaPayUrl,

    /**
     * POST /orders/{id}/payment: the buyer gets a fresh fund transaction (the previous one's blockhash
     * expired, or is about to). 404 for strangers, 403 for the seller or an admin, 409 unless the order
     * is a wallet order awaiting payment inside its payment window.
     */
    async refreshPayment(p: PrincipalLike, orderId: string): Promise<{ order: OrderRecord; payment: PaymentInstructions }> {
      const order = await deps.read.get(p, orderId);
      if (roleOf(order, p) !== 'buyer') throw orderErrors.forbidden('Only the buyer of an order gets its fund transaction.');
      // a wallet that can no longer pay gets 409 insufficient-funds now, not a transaction the cluster refuses
      if (order.status === 'awaiting_payment' && order.paymentSource === 'wallet') await assertWalletCanFund(c, fundTerms(order), { code: order.currency, decimals: order.decimals }, true, fundOpts(order));
      if (order.milestoneCount > 1 && order.status !== 'awaiting_payment') {
        // later milestones awaiting payment (POST .../milestones/fund issued their first transaction): a fresh one for
        // all of them; `order` is then the first of those rows (its window is theirs)
        const rows = await payableRows(orderId);
        const issued = await issueMilestonesTransaction(rows);
        const until = Math.min(...rows.map((r) => r.paymentExpiresAt.getTime()), issued.validUntil.getTime());
        return {
          order: rows[0]!,
          payment: { transaction: issued.transaction, solana_pay_url: solanaPayUrl(orderId, rows[0]!.currency), fee_payer: rows[0]!.buyerWallet, sponsored: false, expires_at: new Date(until) },
        };
      }
      // the order as read above: issuing changes none of what the answer shows (order_id, payment_expires_at)
      const payment = await paymentFor(order, { fresh: true });
      return { order, payment };
    },

    /**
     * Solana Pay POST: a fresh fund transaction for the order's buyer (403 for any other account), the same one
     * POST /orders/{id}/payment issues (issueFundTransaction: the order's fee sponsorship, once decided, shapes every
     * rebuild). Solana Pay 1.2 draft: `tokenProgram` names the payment mint's token program; `feePayer` is the
     * transaction's fee payer when it is not `account` (a sponsored order: read from the transaction itself, so it is
     * reported whatever decided the sponsorship).
     */
    async solanaPayTransaction(orderId: string, account: string): Promise<SolanaPayAnswer> {
      const rows = await payableRows(orderId);
      const order = rows[0]!;
      if (account !== order.buyerWallet) throw orderErrors.forbidden('Only the buyer wallet quoted for this order may pay it.');
      // `order` was read and checked by payableRows just now: not read again
      const { transaction } = rows.length === 1 && order.milestoneIndex === 1 ? await issueFundTransaction(order, { fresh: true }) : await issueMilestonesTransaction(rows);
      const ui = formatUiAmount(rows.reduce((s, r) => s + r.amount, 0n), order.decimals);
      const what = order.milestoneCount > 1 ? ` (milestone ${rows.map((r) => r.milestoneIndex).join(', ')})` : '';
      const tokenProgram = c.escrow.tokenProgramOf ? await c.escrow.tokenProgramOf(order.mint) : (c.currency(order.currency)?.tokenProgram ?? LEGACY_TOKEN_PROGRAM);
      const feePayer = normalizeTransaction(transaction).feePayer;
      return {
        transaction,
        message: `Pay ${ui} ${order.currency} into escrow for order ${order.orderId.slice(0, 8)}${what}`,
        tokenProgram,
        ...(feePayer && feePayer !== account ? { feePayer } : {}),
      };
    },

    /** POST /orders/{id}/transaction: verify, submit, confirm, then mark funded. */
    async submitTransaction(p: PrincipalLike, orderId: string, signedBase64: string): Promise<OrderRecord> {
      const visible = await deps.read.get(p, orderId);
      if (roleOf(visible, p) !== 'buyer') throw orderErrors.forbidden('Only the buyer submits the fund transaction.');
      let signed;
      try {
        signed = normalizeTransaction(signedBase64);
      } catch {
        throw orderErrors.fundMismatch('not a serialized Solana transaction');
      }
      // a repeat of the submission that funded the order: answer with the order, send nothing
      if (visible.status !== 'awaiting_payment' && signed.signature && signed.signature === visible.fundSignature) return visible;
      if (visible.milestoneCount > 1 && visible.status !== 'awaiting_payment') return submitMilestones(orderId, signedBase64, signed);
      const order = await requireAwaitingPayment(orderId);
      // the same instructions as the transaction issued for this order (only the blockhash may differ)
      // sponsored: the same fee payer and rent payer (the order's fee_sponsor, decided once)
      const expected = normalizeTransaction((await c.escrow.buildFundTransaction(fundTerms(order), fundOpts(order))).transaction);
      const diff = compareFundTransaction(signed, expected);
      if (diff) throw orderErrors.fundMismatch(diff);

      let tx: TxResult;
      try {
        // the wallet's balances first: a payer short of tokens or SOL gets 409 insufficient-funds, not a 502
        await assertWalletCanFund(c, fundTerms(order), { code: order.currency, decimals: order.decimals }, true, fundOpts(order));
        tx = await c.escrow.submitSignedTransaction(signedBase64);
      } catch (err) {
        // the buyer may have sent it already (wallet + API): if the escrow exists, it is funded anyway
        const view = await c.escrow.fetchOrder(order.id).catch(() => null);
        if (view && termsMatch(order, view)) return markFunded(order.id, view, signed.signature);
        throw isLackOfFunds(err) ? await refusedForFunds(c, order, err) : err;
      }
      const view = await c.escrow.fetchOrder(order.id);
      if (!view || !termsMatch(order, view)) throw orderErrors.notFundedOnChain(order.id);
      return markFunded(order.id, view, tx.signature, tx.slot).catch((err) => {
        // funded on chain; the payment watcher records it once the database answers again
        throw err instanceof DomainError ? err : new ChainActionLandedError(err, { action: 'fund', order_id: order.id, signature: tx.signature });
      });
    },

    /**
     * Watcher step for one awaiting_payment order: funded on chain -> in_progress; past expiry -> expired.
     * `known`: the escrow account as a subscription notification carried it, or as the watcher's batch read
     * it (getMultipleAccounts; null: no such account; undefined: read here). `found`: the fund transaction as the watcher looked it up
     * (null: not found; undefined: looked up here). `order` is the row as just read: funding does not read it again.
     */
    async checkPayment(order: OrderRecord, known?: EscrowOrderView | null, found?: { signature: string; slot: number } | null): Promise<OrderStatus> {
      // an unpaid later milestone lapses back to scheduled (the buyer may fund it again); milestone 1 expires
      const lapse = order.milestoneIndex > 1 ? ('lapse' as const) : ('expire' as const);
      if (order.status !== 'awaiting_payment') return order.status;
      // known: null = read already, no account
      const view = known !== undefined ? known : await c.escrow.fetchOrder(order.id);
      if (view) {
        if (termsMatch(order, view)) {
          // paid by a wallet directly (Solana Pay): look the fund transaction up for the record
          const fund = found !== undefined ? found : await c.escrow.findFundSignature?.(order.id).catch(() => null);
          return (await markFunded(order.id, view, fund?.signature ?? null, fund?.slot ?? null, order)).status;
        }
        c.log.error({ order_id: order.id }, 'escrow account does not match the quoted terms');
        return order.status;
      }
      const at = await clocks(c, needsChainClock(order.status, 'system', lapse));
      if (!refusal(order, 'system', lapse, at, c.settings.paymentGraceSeconds)) {
        const expired = await c.mutex.run(order.id, () => c.repo.updateIf(order.id, 'awaiting_payment', { status: targetStatus(lapse), transition: lapse }));
        if (expired) {
          c.log.info({ order_id: order.id, milestone: order.milestoneIndex }, lapse === 'lapse' ? 'milestone payment lapsed' : 'order expired unpaid');
          const after = await c.repo.get(order.id);
          if (after) await applyListingEffect(c, after);
          return after?.status ?? 'expired';
        }
      }
      return order.status;
    },
  };
}

export type PayOrder = ReturnType<typeof payOrder>;
