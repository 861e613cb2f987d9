/**
 * Use case "create an order" (POST /orders), as steps:
 *   1. resume: an order this buyer created with the same Idempotency-Key is returned instead (a retry
 *      after a crash), with a fresh fund transaction while it awaits payment;
 *   2. check: listing, buyer wallet, currency, the custodial balance or the buyer wallet's balances on
 *      chain (holds are tied to a buyer who can pay);
 *   3. hold: the order row inserted with its listing hold, under the per-buyer / per-network / cool-down
 *      rules (`repo.createHeld`, one transaction);
 *   4. pay: a wallet order gets its fund transaction (compensation: the order row is discarded, so a
 *      503 holds nothing); a custodial order is funded by the custody module (compensation inside
 *      `payCustodially`: the order expires when nothing is held any more).
 * A crash after 3 leaves an order row the retry with the same key finds (step 1).
 *
 * Milestones (issue 24): the order's frozen terms (`terms`, from a trusted caller: the listing's or
 * package's terms, an accepted offer; never the request body; default one milestone of the listing's
 * price and duration) may have 1..10 milestones. Step 3 then inserts one row per milestone in the same
 * transaction: milestone 1 awaiting_payment with the listing hold (its id is the order's id), the others
 * `scheduled` (no hold, no window, no escrow yet). Only milestone 1 is paid in step 4; the buyer funds the
 * others later (use-cases/milestones). A multi-milestone order cannot be custodial (409
 * custodial-milestones-unsupported: the custodial balance funds one-milestone orders only).
 */
import { randomUUID } from 'node:crypto';
import { DomainError } from '../../../../errors.js';
import { compensated } from '../../../../lib/steps.js';
import { orderErrors } from '../../orders.errors.js';
import { MAX_MILESTONES } from '@bazaar/contract';
import type { FundTerms, HoldGuard, HoldPressure, NewOrder, OrderRecord, OrderTermsInput, PaymentSource } from '../../orders.types.js';
import { orderTermsOf, type OrderTerms } from '../../../listings/order-terms.js';
import { type OrdersContext, type PrincipalLike, assertWalletCanFund } from '../context.js';
import { sponsorable } from '../../sponsorship.js';
import type { PaymentInstructions, PayOrder } from './pay.js';

export interface CreateOrderInput {
  listingId: string;
  /** API keys only: the paying wallet */
  buyerWallet?: string | null;
  /** default wallet */
  paymentSource?: PaymentSource;
  /** the request's Idempotency-Key: stored on the order, so a retry after a crash finds it */
  idempotencyKey?: string | null;
  /**
   * the client network of the request (`lib/client-network.ts`: IPv4 address or IPv6 /64), counted by
   * the per-network hold limit; null/absent: not counted (API keys, calls from inside the service)
   */
  network?: string | null;
  /** POST /orders `package`: the listing package to buy (required when the listing has packages; 400 otherwise) */
  packageKey?: string | null;
  /**
   * The order's frozen terms, from a TRUSTED caller only (never a request body); absent: the terms of the
   * listing or of the package bought (`orderTermsOf`: one milestone of the listing's price and duration
   * when it has neither packages nor milestones).
   */
  terms?: OrderTermsInput;
}

/** 400 validation-error unless the terms are 1..10 milestones of positive amounts summing to the price, each >= 1 day. */
export function assertTerms(t: OrderTermsInput): void {
  const bad = (message: string) =>
    new DomainError('validation-error', `Invalid order terms: ${message}.`, { errors: [{ path: 'terms.milestones', message, code: 'invalid_terms' }] });
  if (t.milestones.length < 1 || t.milestones.length > MAX_MILESTONES) throw bad(`1..${MAX_MILESTONES} milestones`);
  if (t.milestones.some((m) => m.amountBaseUnits <= 0n || !Number.isInteger(m.deliveryDays) || m.deliveryDays < 1)) throw bad('each milestone needs an amount > 0 and delivery days >= 1');
  if (t.milestones.reduce((s, m) => s + m.amountBaseUnits, 0n) !== t.priceBaseUnits) throw bad('the milestone amounts must sum to the price');
  if (!Number.isInteger(t.revisionsIncluded) || t.revisionsIncluded < 0) throw bad('revisions must be >= 0');
}

/**
 * Terms a trusted caller fixes for the order (`OrdersService.createOrder(caller, input, { terms, offerId })`),
 * never read from a request body: a custom offer's frozen terms (modules/offers), one row per milestone.
 */
export interface TrustedOrderTerms {
  terms: OrderTerms;
  /**
   * the custom offer accepted into this order (stored as orders.offer_id). Its order's idempotency key is
   * `offer:<offerId>` whatever the request's Idempotency-Key: one order per offer and buyer, by the unique
   * (buyer_id, idempotency_key) index; a second accept resumes that order (step 1).
   */
  offerId: string | null;
  /** runs in the order's insert transaction (HoldGuard.onCreated): the offer is claimed with the order */
  onCreated?: HoldGuard['onCreated'];
}

export type CreatedOrder = { order: OrderRecord; payment: PaymentInstructions | null };

export function createOrder(c: OrdersContext, deps: { pay: Pick<PayOrder, 'paymentFor' | 'payCustodially'> }) {
  const NATIVE_MINT = 'So11111111111111111111111111111111111111112';

  /**
   * The payment window of a new order, seconds: `contestedPaymentTtlSeconds` when the listing is
   * contested (an unpaid wallet order for it lapsed within the cool-down) or the order's network already
   * holds at least half of `maxUnpaidOrdersPerIp`; else `paymentTtlSeconds`. Never longer than the latter.
   */
  function paymentWindowSeconds(p: HoldPressure): number {
    const s = c.settings;
    const pressed = p.contested || p.networkHolds >= Math.ceil(s.maxUnpaidOrdersPerIp / 2);
    return pressed ? Math.min(s.contestedPaymentTtlSeconds, s.paymentTtlSeconds) : s.paymentTtlSeconds;
  }


  /** Step 1: an order found by its Idempotency-Key, as it is now, with a fresh fund transaction while payable. */
  async function resume(order: OrderRecord): Promise<CreatedOrder> {
    if (order.paymentSource === 'custodial') {
      // finish a custodial funding the first attempt may not have reached (idempotent per order)
      const current = order.status === 'awaiting_payment' ? await deps.pay.payCustodially(order) : order;
      return { order: current, payment: null };
    }
    const payable = order.status === 'awaiting_payment' && order.paymentExpiresAt > c.now();
    return { order, payment: payable ? await deps.pay.paymentFor(order) : null };
  }

  /**
   * POST /orders. `paymentSource` wallet (default): the order waits for the buyer's fund transaction
   * (returned as `payment`). custodial: the custody module holds the price from the buyer's custodial
   * balance and funds the escrow (buyer = the user's deposit address); `payment` is null and the order
   * comes back in_progress (awaiting_payment while the funding is unconfirmed).
   *
   * The listing is held for the order from creation (one open order per unit of the listing's capacity,
   * each counting against its stock: a buyer after the last unit gets 409 listing-unavailable before paying,
   * until an open order expires unpaid or is refunded; sold out: 409 listing-unavailable, status sold), and a buyer may
   * hold at most `maxUnpaidOrdersPerBuyer` unpaid orders (409 too-many-unpaid-orders). Against holds by
   * buyers who never pay (README "Holds"): a wallet order needs the buyer wallet's balances on chain to
   * cover it (`assertWalletCanFund`, 409 insufficient-funds); a network holds at most
   * `maxUnpaidOrdersPerIp` unpaid orders (429 too-many-holds); a buyer whose wallet order for the listing
   * expired unpaid within `holdCooldownSeconds` is refused (409 hold-cooldown); a contested listing or a
   * network holding half its limit gets the `contestedPaymentTtlSeconds` payment window. With an
   * `idempotencyKey`, an order this buyer already created with it is returned instead (a retry after a
   * crash), with a fresh fund transaction while it awaits payment. A principal with `unverifiedWallet` (a
   * Solana Action's POST named the wallet: auth `principalForWallet`) creates a `viaAction` order: the unpaid
   * limit and the balance check count the wallet's orders of that kind only, and its lapse cools down only its
   * network (issue 26 audit; README "Share a listing as a blink").
   *
   * Errors besides the listing ones: 404 custody-disabled, 400 validation-error (buyer_wallet with
   * custodial), 409 insufficient-funds, 502 chain-transaction-failed (funding rejected: order expired,
   * hold released), 503 chain-unavailable (nothing kept: the order row is discarded).
   */
  async function create(p: PrincipalLike, input: CreateOrderInput, trusted?: TrustedOrderTerms): Promise<CreatedOrder> {
    if (!p.userId) throw orderErrors.forbidden('Creating an order needs a user credential.');
    // issue 25: a suspended or banned account cannot order (checked on every request: at once, whatever the
    // credential), nor buy from a suspended or banned seller. With a standing port that reads both parties at
    // once (issue 28), the listing is read first and both are checked in one statement; the refusals keep their
    // order (the buyer's standing, the resumed order, then the listing's checks)
    const oneRead = c.standing?.assertMayOrderFrom?.bind(c.standing);
    let listing = oneRead ? await c.listings.get(input.listingId) : null;
    let sellerRestricted: boolean | undefined;
    if (oneRead) sellerRestricted = (await oneRead(p.userId, listing?.sellerId ?? null)).sellerRestricted;
    else await c.standing?.assertMayTrade(p.userId);
    const idempotencyKey = trusted?.offerId ? `offer:${trusted.offerId}` : (input.idempotencyKey ?? null);
    if (idempotencyKey) {
      const existing = await c.repo.findByIdempotencyKey(p.userId, idempotencyKey);
      if (existing) return resume(existing);
    }
    // step 2: check
    if (!oneRead) listing = await c.listings.get(input.listingId);
    if (!listing) throw orderErrors.listingNotFound(input.listingId);
    // issue 24 (helper "packages"): the terms bought, frozen into the order from this one read of the listing
    // (400 validation-error for a package the listing does not offer)
    const terms: OrderTermsInput =
      trusted?.terms ??
      input.terms ??
      orderTermsOf(
        { priceBaseUnits: listing.priceBaseUnits, durationDays: listing.durationDays, packages: listing.packages ?? [], milestones: listing.milestones ?? null },
        input.packageKey ?? null,
      );
    if (listing.sellerId === p.userId) throw orderErrors.ownListing();
    if (listing.takenDown) throw orderErrors.listingTakenDown(listing.id);
    // issue 25: a suspended or banned seller takes no new order (her open ones settle)
    if (sellerRestricted ?? (await c.standing?.isRestricted(listing.sellerId))) throw orderErrors.listingUnavailable('its seller\'s account is suspended');
    if (listing.status !== 'available') throw orderErrors.listingUnavailable(listing.status);

    const custodial = input.paymentSource === 'custodial';
    const custody = c.custody;
    if (custodial && !custody) {
      throw new DomainError('custody-disabled', 'Custodial accounts are disabled on this service: pay with your wallet (payment_source wallet).');
    }
    if (custodial && input.buyerWallet) {
      throw new DomainError('validation-error', 'buyer_wallet cannot be combined with payment_source custodial.', {
        errors: [{ path: 'body.buyer_wallet', message: 'not allowed with payment_source custodial', code: 'not_allowed' }],
      });
    }
    let buyerWallet = custodial ? await custody!.buyerAddressFor(p.userId) : p.wallet;
    if (!custodial && input.buyerWallet && input.buyerWallet !== p.wallet) {
      // only an API key acting for a user may name another paying wallet
      if (p.kind !== 'api_key') throw orderErrors.forbidden('buyer_wallet must be the wallet of the authenticated user.');
      buyerWallet = input.buyerWallet;
    }
    if (!buyerWallet) throw orderErrors.forbidden('No buyer wallet: the credential has no linked wallet and none was given.');
    if (buyerWallet === listing.sellerWallet) throw orderErrors.ownListing();

    const currency = c.currency(listing.currency);
    if (!currency) throw orderErrors.listingUnavailable(`currency ${listing.currency} is not accepted`);
    assertTerms(terms);
    const count = terms.milestones.length;
    const first = terms.milestones[0]!;
    if (custodial && count > 1) {
      throw new DomainError('custodial-milestones-unsupported', `This order has ${count} milestones: pay it with your wallet (payment_source wallet); the custodial balance funds one-milestone orders only.`);
    }
    if (custodial) await custody!.assertAvailable(p.userId, currency.mint, first.amountBaseUnits);

    const id = randomUUID();
    const [chainNow, feeBps] = await Promise.all([c.escrow.chainNow(), c.escrow.feeBps()]);
    const { escrow, vault } = c.escrow.addresses(id, currency.mint, currency.tokenProgram);
    const deliveryDeadline = chainNow + first.deliveryDays * 86_400;
    const reviewWindow = c.settings.reviewWindowSeconds;
    // issue 26 item 5: the fee sponsor pays the fee and rent of a signed-in buyer's own wallet order (sponsorship.ts);
    // charged when the fund transaction is issued (step 4), which falls back to unsponsored when refused
    // issue 26 audit: a principal built from a wallet a Solana Action named (nobody proved holding it) creates an
    // order marked via_action: its own unpaid limit per wallet, its lapse cools down its network only (createHeld)
    const viaAction = p.unverifiedWallet === true;
    const feeSponsor = c.sponsorship && sponsorable(p, { custodial, buyerWallet, nativeMint: currency.mint === NATIVE_MINT, milestoneIndex: 1 }) ? c.sponsorship.address : null;
    // (a listing another order holds is refused by createHeld below: no balance read for that)
    if (!custodial && !listing.heldUntil) {
      await assertWalletCanFund(
        c,
        {
          orderId: id,
          buyer: buyerWallet,
          seller: listing.sellerWallet,
          mint: currency.mint,
          amount: first.amountBaseUnits,
          deliveryDeadline,
          reviewWindow,
          expiresAt: chainNow + c.settings.paymentTtlSeconds,
          parentOrderId: id,
          milestoneIndex: 1,
          revisionsIncluded: terms.revisionsIncluded,
        },
        currency,
        false,
        feeSponsor ? { sponsor: feeSponsor } : {},
        viaAction,
      );
    }
    // step 3: hold
    const createdAt = c.now();
    const network = input.network ?? null;
    const cooldown = c.settings.holdCooldownSeconds;
    const milestone = {
      orderId: id,
      milestoneCount: count,
      revisionsIncluded: terms.revisionsIncluded,
      packageName: terms.packageName,
    };
    const held = await c.repo.createHeld(
      {
        ...milestone,
        milestoneIndex: 1,
        milestoneTitle: count > 1 ? first.title : null,
        deliveryDays: first.deliveryDays,
        id,
        createdAt,
        listingId: listing.id,
        buyerId: p.userId,
        sellerId: listing.sellerId,
        buyerWallet,
        sellerWallet: listing.sellerWallet,
        paymentSource: custodial ? 'custodial' : 'wallet',
        currency: currency.code,
        mint: currency.mint,
        decimals: currency.decimals,
        amount: first.amountBaseUnits,
        // the package bought, frozen (package_name and revisions_included come with `milestone`)
        packageKey: terms.packageKey,
        packageDeliveryDays: terms.packageKey ? terms.milestones.reduce((d, m) => d + m.deliveryDays, 0) : null,
        status: 'awaiting_payment',
        tokenMint: listing.tokenMint ?? null,
        feeBps,
        escrowAddress: escrow,
        vaultAddress: vault,
        // set by the hold guard's `window` below
        paymentExpiresAt: createdAt,
        // contract: delivery_deadline = created_at + listing duration days (chain clock)
        deliveryDeadline,
        reviewWindow,
        idempotencyKey,
        offerId: trusted?.offerId ?? null,
        holdNetwork: network,
        viaAction,
        fundedAt: null,
        deliveredAt: null,
        autoReleaseAt: null,
        disputedAt: null,
        completedAt: null,
        disputeReason: null,
        disputedBy: null,
        buyerBps: null,
        fundSignature: null,
        lastSignature: null,
        feeSponsor,
      },
      {
        maxUnpaidPerBuyer: c.settings.maxUnpaidOrdersPerBuyer,
        maxUnpaidPerNetwork: c.settings.maxUnpaidOrdersPerIp,
        recentSince: cooldown > 0 ? new Date(createdAt.getTime() - cooldown * 1000) : null,
        window: (pressure) => {
          const ttl = paymentWindowSeconds(pressure);
          // the program refuses the funding after fundExpiresAt (chain clock): a closed order cannot be re-funded later
          return { paymentExpiresAt: new Date(createdAt.getTime() + ttl * 1000), fundExpiresAt: chainNow + ttl };
        },
        onCreated: trusted?.onCreated,
      },
      terms.milestones.slice(1).map((m, i): NewOrder => {
        const rowId = randomUUID();
        const a = c.escrow.addresses(rowId, currency.mint, currency.tokenProgram);
        return {
          ...milestone,
          id: rowId,
          milestoneIndex: i + 2,
          milestoneTitle: m.title,
          deliveryDays: m.deliveryDays,
          createdAt,
          listingId: listing.id,
          buyerId: p.userId!,
          sellerId: listing.sellerId,
          buyerWallet,
          sellerWallet: listing.sellerWallet,
          paymentSource: 'wallet',
          currency: currency.code,
          mint: currency.mint,
          decimals: currency.decimals,
          amount: m.amountBaseUnits,
          // scheduled: no hold, no payment window, no escrow; window and deadline are set when it is funded
          status: 'scheduled',
          tokenMint: listing.tokenMint ?? null,
          feeBps,
          escrowAddress: a.escrow,
          vaultAddress: a.vault,
          paymentExpiresAt: createdAt,
          deliveryDeadline: chainNow + m.deliveryDays * 86_400,
          reviewWindow,
          idempotencyKey: null,
          holdNetwork: null,
          fundedAt: null,
          deliveredAt: null,
          autoReleaseAt: null,
          disputedAt: null,
          completedAt: null,
          disputeReason: null,
          disputedBy: null,
          buyerBps: null,
          fundSignature: null,
          lastSignature: null,
        };
      }),
    );
    if ('duplicate' in held) return resume(held.duplicate);
    if ('soldOut' in held) throw orderErrors.listingUnavailable('sold');
    if ('takenDown' in held) throw orderErrors.listingTakenDown(listing.id);
    if ('listingHeld' in held) throw orderErrors.listingHeld(held.listingHeld.status, held.listingHeld.paymentExpiresAt, c.settings.paymentGraceSeconds, createdAt);
    if ('cooldown' in held) throw orderErrors.holdCooldown(new Date(held.cooldown.lapsedAt.getTime() + cooldown * 1000), createdAt);
    if ('buyerLimit' in held) throw orderErrors.tooManyUnpaid(held.buyerLimit.unpaid, c.settings.maxUnpaidOrdersPerBuyer);
    if ('networkLimit' in held) {
      const lapses = held.networkLimit.earliestExpiresAt.getTime() + c.settings.paymentGraceSeconds * 1000;
      throw orderErrors.tooManyHolds(held.networkLimit.holds, c.settings.maxUnpaidOrdersPerIp, (lapses - createdAt.getTime()) / 1000);
    }
    const order = held.created;
    // step 4: pay
    if (custodial) return { order: await deps.pay.payCustodially(order), payment: null };
    // an offer's order is kept when its payment cannot be built: its offer is accepted with it (the same
    // transaction), and accepting again resumes it with a fresh payment (step 1)
    const firstIssue = { first: true, ip: network };
    if (trusted?.offerId) return { order, payment: await deps.pay.paymentFor(order, firstIssue) };
    const payment = await compensated(
      () => deps.pay.paymentFor(order, firstIssue),
      // nobody saw this order and nothing is on chain: drop it, so the listing is not held by it
      () => c.repo.discardUnpaid(order.id),
      (e) => c.log.warn({ err: e, order_id: order.id }, 'unpaid order not discarded'),
    );
    return { order, payment };
  }

  return { create, paymentWindowSeconds };
}

export type CreateOrder = ReturnType<typeof createOrder>;
