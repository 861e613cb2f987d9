/**
 * Order actions for the buyer (issue 26 item 1; Solana Actions spec 2.4 "Message Signing"): the card of an order,
 * the sign-message step, and the callback that performs the act the buyer's wallet signed. No Express here: the
 * HTTP layer (http/actions/orders.ts) maps the DomainErrors thrown below to the spec's `{ message }` body with the
 * problem's status.
 *
 * Who may act: the order's buyer, proven by an ed25519 signature of the buyer's wallet (the wallet the buyer signs
 * in with, `users.wallet`: for a wallet-paid order the paying wallet) over a message the service issued for that
 * order, that act and that wallet. The act then runs as the buyer through the orders service (same lifecycle table,
 * same events) with the session route's audit actor (`user` = the buyer's user id), but with no operator role:
 * the signature proves the wallet for this one act, not a session.
 *
 * What the callback checks, in order (each refusal is a DomainError; the nonce is consumed only once all hold):
 *  1. the nonce is one the service issued (else 403), for this order and act (403), to this `account` (403);
 *  2. `data` is field for field what was issued (domain, address, statement, nonce, issuedAt, chainId: an edited
 *     message is 403), and @solana/actions' verifySignMessageData agrees (address, domain, chain id);
 *  3. the signature (base58, 64 bytes) verifies over `createSignMessageText(data)` (the spec's template, from
 *     @solana/actions) with `account`'s key (@solana/wallet-standard-util verifyMessageSignature, as SIWS; 403);
 *  4. unused (403 "already used") and unexpired on the service clock (403 "expired"); then consumed atomically;
 *  5. the account is not suspended or banned (403 account-suspended, as SIWS login);
 *  6. the act through the orders service: its own refusals (409 invalid-state-transition, ...) pass through.
 */
import bs58 from 'bs58';
import { createSignMessageText, verifySignMessageData } from '@solana/actions';
import { verifyMessageSignature } from '@solana/wallet-standard-util';
import type { DisputeReasonCode, Order, OrderActionAct, OrderActionCard, OrderActionCompleted, SignMessageData, SignMessageResponse } from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import type { OrderRecord, OrdersService, PrincipalLike } from '../orders/index.js';
import { refusal } from '../orders/order-state.js';
import type { DisputesService } from '../disputes/index.js';
import { newNonce } from '../auth/siws.js';
import { type Actor, currentRequestContext } from '../../lib/request-context.js';
import type { OrderActionNonceStore } from './order-action-nonces.js';

/** How long the buyer has between the sign-message answer and the callback (seconds): "expires in minutes". */
export const ORDER_ACTION_NONCE_TTL_SECONDS = 300;

/** Button labels and what each act does, in the card and the statement. */
const ACTS: Record<OrderActionAct, { label: string; done: string }> = {
  confirm: { label: 'Confirm delivery', done: 'Delivery confirmed' },
  dispute: { label: 'Open a dispute', done: 'Dispute opened' },
};

/** What the module needs from the others (composition: http/actions/orders.ts `orderActionsDeps`). */
export interface OrderActionsDeps {
  nonces: OrderActionNonceStore;
  /** the orders service: reads as the buyer, and the acts */
  orders: Pick<OrdersService, 'get' | 'presentOne' | 'confirm' | 'dispute'>;
  /** the order's first row without a caller (to learn its buyer); null for an unknown id */
  readOrder(orderId: string): Promise<OrderRecord | null>;
  /** the user row of a user id through the auth module (id, wallet), null when gone */
  userOf(userId: string): Promise<{ id: string; wallet: string } | null>;
  /** the moderation standing: a suspended or banned wallet may not act (as it may not log in) */
  standing?: { assertMayLogIn(wallet: string): Promise<unknown> };
  /** the dispute desk: records the opening's reason kind (as POST /orders/{id}/dispute does) */
  disputes?: Pick<DisputesService, 'recordOpening'>;
  settings: {
    /** PUBLIC_BASE_URL: its host is the message's `domain`; icons and links are absolute on it */
    publicBaseUrl: string;
    /**
     * the CAIP-2 id of the cluster (`X-Blockchain-Ids`), the message's `chainId`: a provider, since a localnet's
     * comes from its genesis hash over RPC (http/actions cluster id, memoized by the caller)
     */
    chainId: () => Promise<string>;
    /** default ORDER_ACTION_NONCE_TTL_SECONDS */
    nonceTtlSeconds?: number;
  };
  now: () => Date;
}

/** The parameters of the sign-message step: the act's inputs (a dispute's reason and kind). */
export interface OrderActInput {
  reason?: string;
  reasonCode?: DisputeReasonCode;
}

/**
 * Runs `fn` as `actor` (the request context's actor: the audit log's author). The HTTP layer passes one that
 * re-enters the request's context (a body parser may have run the chain outside it); the default sets the actor
 * of the context running now, if any.
 */
export type RunAs = <T>(actor: Actor, fn: () => Promise<T>) => Promise<T>;

const enterActor: RunAs = (actor, fn) => {
  const ctx = currentRequestContext();
  if (ctx) ctx.actor = actor;
  return fn();
};

const denied = (detail: string) => new DomainError('forbidden', detail);
const notFound = (orderId: string) => new DomainError('not-found', `Order ${orderId} not found.`);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const humanStatus = (s: string) => s.replace(/_/g, ' ');

export function createOrderActions(deps: OrderActionsDeps) {
  const base = deps.settings.publicBaseUrl.replace(/\/+$/, '');
  const domain = new URL(base).host;
  const icon = `${base}/icon.svg`;
  const ttlMs = (deps.settings.nonceTtlSeconds ?? ORDER_ACTION_NONCE_TTL_SECONDS) * 1000;

  /** The order and its buyer's principal (no operator role), or 404. */
  async function buyerView(orderId: string): Promise<{ record: OrderRecord; buyer: { id: string; wallet: string }; p: PrincipalLike; order: Order }> {
    const record = await deps.readOrder(orderId);
    if (!record) throw notFound(orderId);
    const buyer = await deps.userOf(record.buyerId);
    if (!buyer) throw notFound(orderId);
    const p: PrincipalLike = { kind: 'user', userId: buyer.id, wallet: buyer.wallet, isAdmin: false, roles: [] };
    const order = await deps.orders.presentOne(p, await deps.orders.get(p, orderId));
    return { record, buyer, p, order };
  }

  /** Why the table refuses `act` to the buyer now (null: allowed), from the order's `allowed_actions`. */
  function refusedBecause(record: OrderRecord, order: Order, act: OrderActionAct): string | null {
    if ((order.allowed_actions as readonly string[]).includes(act)) return null;
    const now = deps.now().getTime();
    const why = refusal({ ...record, status: order.status as OrderRecord['status'] }, 'buyer', act, { serviceMs: now, chainSeconds: Math.floor(now / 1000) });
    return why?.detail ?? `The order is ${humanStatus(order.status)}: it cannot be ${act === 'confirm' ? 'confirmed' : 'disputed'} now.`;
  }

  function statementOf(order: Order, act: OrderActionAct, input: OrderActInput): string {
    const what = `order ${order.order_id} ("${oneLine(order.listing.title)}", ${order.amount} ${order.currency})`;
    return act === 'confirm'
      ? `Confirm delivery of ${what}: the escrowed payment is released to the seller.`
      : `Open a dispute on ${what}: an arbiter decides how the escrowed payment is split. Kind: ${input.reasonCode ?? 'other'}. Reason: ${oneLine(input.reason ?? '')}`;
  }

  return {
    /**
     * GET card: the listing title, the amount and currency, the status, and one button per act the lifecycle table
     * lets the buyer take now (Confirm delivery; Open a dispute with a `reason` text and a `reason_code` select).
     * A refused act has no button (spec 2.4 has no per-button disabled flag): its reason is in the description;
     * neither allowed: the card is `disabled` with the reasons in `error`. 404 for an unknown order.
     */
    async card(orderId: string): Promise<OrderActionCard> {
      const { record, order } = await buyerView(orderId);
      const title = oneLine(order.listing.title);
      const refused = { confirm: refusedBecause(record, order, 'confirm'), dispute: refusedBecause(record, order, 'dispute') };
      const path = `/api/actions/orders/${orderId}`;
      const actions: NonNullable<OrderActionCard['links']>['actions'] = [];
      if (!refused.confirm) actions.push({ type: 'message', label: ACTS.confirm.label, href: `${path}/confirm` });
      if (!refused.dispute) {
        actions.push({
          type: 'message',
          label: ACTS.dispute.label,
          href: `${path}/dispute?reason={reason}&reason_code={reason_code}`,
          parameters: [
            { type: 'textarea', name: 'reason', label: 'What went wrong? (10 to 2000 characters)', required: true },
            {
              type: 'select',
              name: 'reason_code',
              label: 'Kind of problem',
              required: false,
              options: [
                { label: 'Nothing was delivered', value: 'not_delivered' },
                { label: 'Not as described', value: 'not_as_described' },
                { label: 'Delivered late', value: 'late' },
                { label: 'Not usable', value: 'quality' },
                { label: 'Something else', value: 'other', selected: true },
              ],
            },
          ],
        });
      }
      const notes = (Object.keys(refused) as OrderActionAct[]).filter((a) => refused[a]).map((a) => `${ACTS[a].label}: ${refused[a]}`);
      const description = [`${order.amount} ${order.currency} · status: ${humanStatus(order.status)}.`, 'Only the buyer\'s wallet can sign these actions.', ...notes].join(' ');
      return {
        type: 'action',
        icon,
        title,
        description,
        label: actions.length ? 'Act on this order' : 'Nothing to do now',
        ...(actions.length ? { links: { actions } } : { disabled: true, error: { message: notes.join(' ') } }),
      };
    },

    /**
     * POST `{ account }`: the sign-message action for the order's buyer wallet. 403 for another wallet (and
     * account-suspended for a suspended or banned buyer), 409 when the
     * table refuses the act now, 400 for a dispute without a 10..2000 character reason, 404 unknown order.
     */
    async requestSignature(orderId: string, act: OrderActionAct, account: string, input: OrderActInput): Promise<SignMessageResponse> {
      const { record, buyer, order } = await buyerView(orderId);
      if (account !== buyer.wallet) throw denied('Only the wallet of this order\'s buyer can act on it.');
      await deps.standing?.assertMayLogIn(account);
      const why = refusedBecause(record, order, act);
      if (why) throw new DomainError('invalid-state-transition', why);
      let reason: string | null = null;
      if (act === 'dispute') {
        reason = oneLine(input.reason ?? '');
        if (reason.length < 10 || reason.length > 2000) {
          throw new DomainError('validation-error', 'A dispute needs a reason of 10 to 2000 characters (the `reason` parameter).');
        }
      }
      const chainId = await deps.settings.chainId();
      const issuedAt = deps.now();
      const data: SignMessageData = {
        domain,
        address: account,
        statement: statementOf(order, act, { reason: reason ?? undefined, reasonCode: input.reasonCode }),
        nonce: newNonce(24),
        issuedAt: issuedAt.toISOString(),
        chainId,
      };
      await deps.nonces.insert({
        nonce: data.nonce,
        orderId,
        act,
        wallet: account,
        reason,
        reasonCode: act === 'dispute' ? (input.reasonCode ?? 'other') : null,
        domain: data.domain,
        chainId: data.chainId ?? null,
        statement: data.statement,
        issuedAt,
        expiresAt: new Date(issuedAt.getTime() + ttlMs),
      });
      return {
        type: 'message',
        data,
        message: `Sign to ${ACTS[act].label.toLowerCase()} on this order. The request expires in ${Math.round(ttlMs / 60_000)} minutes.`,
        links: { next: { type: 'post', href: `/api/actions/orders/${orderId}/${act}/next` } },
      };
    },

    /**
     * The callback `{ account, signature, data }`: the checks of the module comment, then the act as the buyer.
     * Returns the completed card. Refusals: 403 (signature, nonce, wallet, edited message), 404 unknown order, and
     * the orders service's own (409 invalid-state-transition when the state moved meanwhile, 503 chain-unavailable).
     */
    async perform(
      orderId: string,
      act: OrderActionAct,
      body: { account: string; signature: string; data: SignMessageData },
      runAs: RunAs = enterActor,
    ): Promise<OrderActionCompleted> {
      const { account, data } = body;
      const row = await deps.nonces.get(data.nonce);
      if (!row) throw denied('This message was not issued by this service (unknown nonce): start the action again.');
      if (row.orderId !== orderId || row.act !== act) throw denied('This signed message was issued for another order or action.');
      if (row.wallet !== account || data.address !== account) throw denied('This signed message was issued to another wallet.');
      const issued: SignMessageData = {
        domain: row.domain,
        address: row.wallet,
        statement: row.statement,
        nonce: row.nonce,
        issuedAt: row.issuedAt.toISOString(),
        ...(row.chainId ? { chainId: row.chainId } : {}),
      };
      const edited = (Object.keys(issued) as (keyof SignMessageData)[]).filter((k) => issued[k] !== data[k]);
      if (edited.length || Object.keys(data).length !== Object.keys(issued).length) {
        throw denied(`The message was edited (${edited.join(', ') || 'fields added'}): sign the message exactly as issued.`);
      }
      const mismatches = verifySignMessageData(issued, { expectedAddress: account, expectedDomains: [domain], expectedChainIds: [await deps.settings.chainId()] });
      if (mismatches.length) throw denied(`The message does not match this service (${mismatches.join(', ')}).`);
      const signature = bs58.decodeUnsafe(body.signature);
      if (!signature || signature.length !== 64) throw new DomainError('validation-error', 'signature must be a base58 encoded 64-byte ed25519 signature.');
      const text = new TextEncoder().encode(createSignMessageText(issued));
      if (!verifyMessageSignature({ message: text, signedMessage: text, signature, publicKey: bs58.decode(account) })) {
        throw denied('The signature does not verify over the message with this wallet.');
      }
      const t = deps.now();
      if (row.usedAt) throw denied('This signed message was already used: start the action again.');
      if (row.expiresAt.getTime() <= t.getTime()) throw denied('This signed message expired: start the action again.');
      if (!(await deps.nonces.consume(row.nonce, t))) throw denied('This signed message was already used: start the action again.');

      await deps.standing?.assertMayLogIn(account);
      const { buyer, p } = await buyerView(orderId);
      if (buyer.wallet !== account) throw denied('Only the wallet of this order\'s buyer can act on it.');
      // the audit actor of the session routes (http/security.ts actorOf): the buyer's user
      const after = await runAs({ type: 'user', id: buyer.id, userId: buyer.id }, async () => {
        if (act === 'confirm') return deps.orders.confirm(p, orderId);
        const row2 = await deps.orders.dispute(p, orderId, row.reason!);
        await deps.disputes?.recordOpening(row2, (row.reasonCode ?? 'other') as DisputeReasonCode);
        return row2;
      });
      const order = await deps.orders.presentOne(p, after);
      return {
        type: 'completed',
        icon,
        title: oneLine(order.listing.title),
        label: ACTS[act].done,
        description:
          act === 'confirm'
            ? `${ACTS.confirm.done}: ${order.amount} ${order.currency} released to the seller (status: ${humanStatus(order.status)}).`
            : `${ACTS.dispute.done}: an arbiter will review the order (status: ${humanStatus(order.status)}). Sign in to the web app to add evidence.`,
      };
    },

    /** Deletes nonces that expired before `before` (the hourly purge of the leader). */
    purgeExpired: (before: Date) => deps.nonces.purgeExpired(before),
  };
}

export type OrderActions = ReturnType<typeof createOrderActions>;
