/**
 * Order actions for the buyer (issue 26 item 1; Solana Actions spec 2.4 sign-message): the real app (PGlite) on the
 * worker's shared localnet. A wallet fetches the card anonymously, POSTs `{ account }`, signs the spec's message
 * text of the structured `SignMessageData` with its key (what a blink client does: @solana/actions
 * createSignMessageText + an ed25519 signature, base58), and POSTs the callback. Happy paths: a delivered order
 * confirmed through the action is released on chain (the seller's USDC rises by price - fee); a dispute opened
 * through the action reaches the dispute desk. Every refusal is tried with a body that would otherwise pass:
 * replay, another wallet, a stale nonce, an edited message or data, another order, another act, a state the table
 * refuses, and the setting off.
 */
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import request from 'supertest';
import { createSignMessageText } from '@solana/actions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Order, SignMessageData } from '@bazaar/contract';
import type { Keypair } from '@solana/web3.js';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import type { BootstrappedChain } from './helpers/localnet';
import { createApiKey, createTestApp, newKeypair, walletOf } from './helpers/app';
import { fundedOrder as fundedOrderOf, listing as newListing, order as placeOrder, party as newParty, usdcBalance, USDC, type Party } from './helpers/parties';
import { ORDER_ACTION_NONCE_TTL_SECONDS } from '../server/src/modules/actions/order-actions';

const API = '/api/v1';
const ACTIONS = '/api/actions/orders';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;

let env: BootstrappedChain;
let t: TestApp;
let off: TestApp;
let admin: Record<string, string>;
/** the service clock runs ahead of wall time by this much (the stale-nonce test moves it) */
let clockOffsetMs = 0;

const party = (usdc = 0) => newParty(t, env, { sol: 2, usdc });
const fundedOrder = (o: { buyer?: Party; seller?: Party } = {}) => fundedOrderOf(t, env, { price: 25, ...o });
const actionPost = (orderId: string, act: string, body: object, query = '') => request(t.app).post(`${ACTIONS}/${orderId}/${act}${query}`).send(body);

/** What a blink client signs for `data` (the spec's template), signed with `kp`, base58. */
function sign(kp: Keypair | nacl.SignKeyPair, data: SignMessageData): string {
  return bs58.encode(nacl.sign.detached(new TextEncoder().encode(createSignMessageText(data)), kp.secretKey));
}

/** POST `{ account }` as `buyer` (200 asserted): the sign-message action. */
async function askToSign(orderId: string, act: 'confirm' | 'dispute', buyer: Party, query = '') {
  const res = await actionPost(orderId, act, { account: buyer.wallet }, query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { type: 'message'; data: SignMessageData; links: { next: { type: 'post'; href: string } } };
}

/** The buyer's wallet signs the issued data; the callback body. */
function signedCallback(buyer: Party, data: SignMessageData) {
  return { account: buyer.wallet, signature: sign(buyer.kp, data), data };
}

const orderOf = async (id: string, who: Party) => (await request(t.app).get(`${API}/orders/${id}`).set(who.headers).expect(200)).body as Order;

beforeAll(async () => {
  env = await sharedBootstrappedChain('order-actions');
  t = await createTestApp({
    chain: env.chain,
    now: () => new Date(Date.now() + clockOffsetMs),
    config: { currencies: env.boot.currencies, actionsEnabled: true, actionsRateLimitPerMinute: 10_000 },
    orders: { reviewWindowSeconds: 60, watcherIntervalMs: 0, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: 10_000 },
  });
  off = await createTestApp({ chain: env.chain, config: { currencies: env.boot.currencies } });
  admin = { 'x-api-key': (await createApiKey(t, { name: 'audit', isAdmin: true })).key };
}, 120_000);

afterAll(async () => {
  await t?.close();
  await off?.close();
  await env?.stop();
});

describe('order actions: the card', () => {
  it('GET answers the card of a funded order: title, amount and currency, status, Confirm delivery and Open a dispute, with the spec headers', async () => {
    const { id } = await fundedOrder();
    const res = await request(t.app).get(`${ACTIONS}/${id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['x-action-version']).toBe('2.4');
    expect(res.headers['x-blockchain-ids']).toMatch(/^solana:/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.body).toMatchObject({ type: 'action', title: 'Logo design in three days', icon: 'http://bazaar.test/icon.svg' });
    expect(res.body.description).toContain('25 USDC');
    expect(res.body.description).toContain('status: in progress');
    const actions = res.body.links.actions as Array<{ type: string; label: string; href: string; parameters?: Array<{ name: string; required?: boolean }> }>;
    expect(actions.map((a) => [a.type, a.label, a.href])).toEqual([
      ['message', 'Confirm delivery', `${ACTIONS}/${id}/confirm`],
      ['message', 'Open a dispute', `${ACTIONS}/${id}/dispute?reason={reason}&reason_code={reason_code}`],
    ]);
    expect(actions[1]!.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'reason', required: true })]));
  });

  it('an unpaid order: the card is disabled with the reason; POST confirm is refused 409 { message }', async () => {
    const [buyer, seller] = await Promise.all([party(100), party()]);
    const l = await newListing(t, seller, { price: 25 });
    const created = await placeOrder(t, buyer, l.listing_id);
    const card = await request(t.app).get(`${ACTIONS}/${created.order_id}`).expect(200);
    expect(card.body).toMatchObject({ disabled: true, error: { message: expect.stringContaining('Confirm delivery') } });
    expect(card.body.links).toBeUndefined();
    expect(card.body.description).toContain('awaiting payment');
    const res = await actionPost(created.order_id, 'confirm', { account: buyer.wallet });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: expect.stringContaining('awaiting_payment') });
  });

  it('an unknown order is 404 { message }; a malformed account 400 { message }', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const get = await request(t.app).get(`${ACTIONS}/${missing}`);
    expect(get.status).toBe(404);
    expect(get.body).toEqual({ message: expect.stringContaining('not found') });
    const post = await actionPost(missing, 'confirm', { account: walletOf(newKeypair()) });
    expect(post.status).toBe(404);
    expect(post.body).toEqual({ message: expect.any(String) });
    const bad = await actionPost(missing, 'confirm', { account: 'not-a-key' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: expect.stringMatching(/account/) });
  });

  it('with ACTIONS_ENABLED off every order action answers 404 { message } (card, sign request, callback)', async () => {
    const { id, buyer } = await fundedOrder();
    for (const res of [
      await request(off.app).get(`${ACTIONS}/${id}`),
      await request(off.app).post(`${ACTIONS}/${id}/confirm`).send({ account: buyer.wallet }),
      await request(off.app).post(`${ACTIONS}/${id}/confirm/next`).send({}),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: expect.stringContaining('Solana Actions are not enabled') });
    }
  });
});

describe('order actions: who may sign, and what', () => {
  let buyer: Party;
  let id: string;
  let other: string;
  beforeAll(async () => {
    const a = await fundedOrder();
    ({ buyer, id } = a);
    // a second funded order of the same buyer
    other = (await fundedOrder({ buyer })).id;
  }, 120_000);

  it('another wallet asking to sign gets 403 { message } and no message to sign', async () => {
    const stranger = walletOf(newKeypair());
    const res = await actionPost(id, 'confirm', { account: stranger });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'Only the wallet of this order\'s buyer can act on it.' });
  });

  it('the buyer gets a sign-message action: structured SignMessageData naming the order and the act, links.next the callback', async () => {
    const body = await askToSign(id, 'confirm', buyer);
    expect(body.type).toBe('message');
    expect(body.links.next).toEqual({ type: 'post', href: `${ACTIONS}/${id}/confirm/next` });
    expect(body.data).toMatchObject({ domain: 'bazaar.test', address: buyer.wallet, chainId: expect.stringMatching(/^solana:/) });
    expect(body.data.statement).toContain(`Confirm delivery of order ${id}`);
    expect(body.data.statement).toContain('25 USDC');
    expect(body.data.nonce).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(Date.parse(body.data.issuedAt)).not.toBeNaN();
  });

  it('a callback signed by another key, or naming another wallet, is 403 and performs nothing', async () => {
    const { data } = await askToSign(id, 'confirm', buyer);
    const intruder = newKeypair();
    const forged = await actionPost(id, 'confirm/next', { account: buyer.wallet, signature: sign(intruder, data), data });
    expect(forged.status).toBe(403);
    expect(forged.body.message).toContain('signature does not verify');
    // the intruder's own wallet, signing the buyer's data (address swapped or not)
    const asIntruder = await actionPost(id, 'confirm/next', { account: walletOf(intruder), signature: sign(intruder, data), data });
    expect(asIntruder.status).toBe(403);
    expect(asIntruder.body.message).toContain('another wallet');
    const swapped = { ...data, address: walletOf(intruder) };
    const asIntruder2 = await actionPost(id, 'confirm/next', { account: walletOf(intruder), signature: sign(intruder, swapped), data: swapped });
    expect(asIntruder2.status).toBe(403);
    expect((await orderOf(id, buyer)).status).toBe('in_progress');
  });

  it('an edited message (statement, issuedAt, chainId, domain) signed by the buyer\'s own key is 403: only what was issued is honoured', async () => {
    const { data } = await askToSign(id, 'dispute', buyer, `?reason=${encodeURIComponent('The logo files never arrived at all')}`);
    const edits: Partial<SignMessageData>[] = [
      { statement: data.statement.replace('never arrived at all', 'arrived, thanks!!') },
      { issuedAt: new Date(Date.parse(data.issuedAt) + 1000).toISOString() },
      { chainId: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' },
      { domain: 'evil.example' },
    ];
    for (const edit of edits) {
      const edited = { ...data, ...edit };
      const res = await actionPost(id, 'dispute/next', signedCallback(buyer, edited));
      expect(res.status, JSON.stringify(edit)).toBe(403);
      expect(res.body.message).toContain('edited');
    }
    // data with an extra field is refused by the schema (strict), and a signature over the right text with the wrong data too
    const extra = await actionPost(id, 'dispute/next', { ...signedCallback(buyer, data), data: { ...data, extra: 'x' } });
    expect(extra.status).toBe(400);
    const mismatched = await actionPost(id, 'dispute/next', { account: buyer.wallet, signature: sign(buyer.kp, data), data: { ...data, statement: `${data.statement} ` } });
    expect(mismatched.status).toBe(403);
    expect((await orderOf(id, buyer)).status).toBe('in_progress');
  });

  it('a message issued for another order, or for another act, is 403 on this one', async () => {
    const forOther = await askToSign(other, 'confirm', buyer);
    const res = await actionPost(id, 'confirm/next', signedCallback(buyer, forOther.data));
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('another order or action');
    const forConfirm = await askToSign(id, 'confirm', buyer);
    const asDispute = await actionPost(id, 'dispute/next', signedCallback(buyer, forConfirm.data));
    expect(asDispute.status).toBe(403);
    expect(asDispute.body.message).toContain('another order or action');
    const unknown = await actionPost(id, 'confirm/next', signedCallback(buyer, { ...forConfirm.data, nonce: 'Zz'.repeat(12) }));
    expect(unknown.status).toBe(403);
    expect(unknown.body.message).toContain('unknown nonce');
    expect((await orderOf(id, buyer)).status).toBe('in_progress');
    expect((await orderOf(other, buyer)).status).toBe('in_progress');
  });

  it('a stale nonce (the callback comes after the nonce expired) is 403 expired', async () => {
    const { data } = await askToSign(id, 'confirm', buyer);
    clockOffsetMs = (ORDER_ACTION_NONCE_TTL_SECONDS + 1) * 1000;
    try {
      const res = await actionPost(id, 'confirm/next', signedCallback(buyer, data));
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('expired');
    } finally {
      clockOffsetMs = 0;
    }
    expect((await orderOf(id, buyer)).status).toBe('in_progress');
  });

  it('a suspended buyer gets no message to sign, and a message signed before the suspension performs nothing (403 account-suspended)', async () => {
    const { data } = await askToSign(id, 'confirm', buyer);
    await t.ctx.db.user.update({ where: { id: buyer.userId }, data: { restriction: 'suspended', restrictedUntil: null } });
    try {
      const ask = await actionPost(id, 'confirm', { account: buyer.wallet });
      expect(ask.status).toBe(403);
      expect(ask.body.message).toContain('suspended');
      const res = await actionPost(id, 'confirm/next', signedCallback(buyer, data));
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('suspended');
    } finally {
      await t.ctx.db.user.update({ where: { id: buyer.userId }, data: { restriction: null } });
    }
    expect((await orderOf(id, buyer)).status).toBe('in_progress');
  });

  it('a dispute without a reason of 10..2000 characters gets no message to sign (400)', async () => {
    for (const q of ['', '?reason=short', `?reason=${encodeURIComponent('{reason}')}`]) {
      const res = await actionPost(id, 'dispute', { account: buyer.wallet }, q);
      expect(res.status, q).toBe(400);
      expect(res.body.message).toContain('reason');
    }
    const badCode = await actionPost(id, 'dispute', { account: buyer.wallet, data: { reason: 'The logo files never arrived', reason_code: 'bored' } });
    expect(badCode.status).toBe(400);
  });
});

describe('order actions: the acts, on chain', () => {
  it('delivered, then confirmed through the action: released on chain (seller + price - fee), completed card, same audit actor as the session route; the replay is refused', async () => {
    const { id, buyer, seller, created } = await fundedOrder();
    await request(t.app).post(`${API}/orders/${id}/deliver`).set(seller.headers).send({}).expect(200);
    const card = await request(t.app).get(`${ACTIONS}/${id}`).expect(200);
    expect(card.body.description).toContain('status: delivered');
    const before = await usdcBalance(env, seller.wallet);
    const { data, links } = await askToSign(id, 'confirm', buyer);
    const body = signedCallback(buyer, data);
    // two callbacks with the same signed message race: exactly one performs the act
    const [a, b] = await Promise.all([request(t.app).post(links.next.href).set('X-Request-Id', `act-${id}`).send(body), request(t.app).post(links.next.href).send(body)]);
    const statuses = [a.status, b.status].sort();
    expect(statuses, JSON.stringify([a.body, b.body])).toEqual([200, 403]);
    const done = a.status === 200 ? a : b;
    expect(done.body).toMatchObject({ type: 'completed', label: 'Delivery confirmed', title: 'Logo design in three days' });
    expect(done.body.description).toContain('released to the seller');
    expect((a.status === 403 ? a : b).body.message).toContain('already used');
    const order = await orderOf(id, buyer);
    expect(order.status).toBe('completed');
    expect(order.transactions.some((x) => x.action === 'release')).toBe(true);
    expect(await usdcBalance(env, seller.wallet)).toBe(before + BigInt(created.seller_receives_base_units));
    expect(BigInt(created.seller_receives_base_units)).toBe(USDC(25) - BigInt(created.fee_base_units));
    // a replay after the act: the nonce is spent
    const replay = await request(t.app).post(links.next.href).send(body);
    expect(replay.status).toBe(403);
    expect(replay.body.message).toContain('already used');
    // the audit log names the buyer's user as the actor (the session route's actor), with the callback's request id
    const log = await request(t.app).get(`${API}/admin/audit-log?resource_type=order&resource_id=${id}`).set(admin).expect(200);
    const completed = (log.body.data as Array<Record<string, unknown>>).find((e) => e.action === 'order.completed');
    expect(completed).toMatchObject({ actor_type: 'user', actor_id: buyer.userId, actor_user_id: buyer.userId });
    if (a.status === 200) expect(completed!.request_id).toBe(`act-${id}`);
    // completed: the card offers nothing and says why; asking to sign is refused by the state table
    const after = await request(t.app).get(`${ACTIONS}/${id}`).expect(200);
    expect(after.body).toMatchObject({ disabled: true, error: { message: expect.stringContaining('completed') } });
    const again = await actionPost(id, 'confirm', { account: buyer.wallet });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: expect.stringContaining('completed') });
  }, 60_000);

  it('a dispute opened through the action: the order is disputed on chain with the signed reason, and the dispute desk has its kind', async () => {
    const { id, buyer, seller } = await fundedOrder();
    const reason = 'The logo files never arrived, and the seller does not answer.';
    const { data, links } = await askToSign(id, 'dispute', buyer, `?reason=${encodeURIComponent(reason)}&reason_code=not_delivered`);
    expect(data.statement).toContain(`Open a dispute on order ${id}`);
    expect(data.statement).toContain(reason);
    expect(data.statement).toContain('not_delivered');
    expect(links.next.href).toBe(`${ACTIONS}/${id}/dispute/next`);
    const res = await request(t.app).post(links.next.href).send(signedCallback(buyer, data));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ type: 'completed', label: 'Dispute opened' });
    const order = await orderOf(id, seller);
    expect(order).toMatchObject({ status: 'disputed', escrow_state: 'disputed', dispute_reason: reason });
    const desk = await request(t.app).get(`${API}/disputes/${id}`).set(buyer.headers).expect(200);
    expect(desk.body).toMatchObject({ reason_code: 'not_delivered', opened_by: 'buyer' });
    // disputed: neither act is offered any more
    const card = await request(t.app).get(`${ACTIONS}/${id}`).expect(200);
    expect(card.body.disabled).toBe(true);
  }, 60_000);
});
