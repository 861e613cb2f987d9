/**
 * Chat over HTTP (issue 11), listing inquiries on the fake chain (order conversations and the arbiter:
 * tests/e2e.events-orders.test.ts): one inquiry per listing and buyer, the seller answers, paging,
 * read markers and unread counts, length limits, message.created events to both parties only, reports,
 * the per-sender rate limit, and 404 for strangers.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createListing, expectProblem, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';

let t: TestApp;
let seller: TestUser;
let buyer: TestUser;
let stranger: TestUser;

beforeAll(async () => {
  ({ t } = await setup({ config: { chatRateLimitPerMinute: 12 } as never }));
  [seller, buyer, stranger] = [await user(t), await user(t), await user(t)];
});

afterAll(async () => {
  await t?.close();
});

const post = (u: TestUser, path: string, body: object) => request(t.app).post(`${API}${path}`).set(u.headers).send(body);
const get = (u: TestUser, path: string) => request(t.app).get(`${API}${path}`).set(u.headers);

describe('listing inquiries', () => {
  it('a prospective buyer asks, the seller answers in the same conversation; read markers and unread counts follow', async () => {
    const l = await createListing(t.app, seller);
    const first = await post(buyer, `/listings/${l.listing_id}/conversations`, { body: 'Can you do it in two days?' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const cid = first.body.conversation.conversation_id;
    expect(first.body.conversation).toMatchObject({ listing_id: l.listing_id, order_id: null, buyer_wallet: buyer.wallet, seller_wallet: seller.wallet });
    expect(first.body.message).toMatchObject({ sender_wallet: buyer.wallet, sender_role: 'buyer', body: 'Can you do it in two days?', report: null });
    // a second question continues the same conversation
    const second = await post(buyer, `/listings/${l.listing_id}/conversations`, { body: '  And a favicon?  ' });
    expect(second.body.conversation.conversation_id).toBe(cid);
    expect(second.body.message.body).toBe('And a favicon?');

    const sellerList = await get(seller, '/conversations');
    expect(sellerList.body.data.find((c: { conversation_id: string }) => c.conversation_id === cid)).toMatchObject({ unread_count: 2 });
    const answer = await post(seller, `/conversations/${cid}/messages`, { body: 'Yes, both.' });
    expect(answer.status).toBe(201);
    expect(answer.body.sender_role).toBe('seller');

    const page1 = await get(seller, `/conversations/${cid}/messages?limit=2`);
    expect(page1.body.data.map((m: { body: string }) => m.body)).toEqual(['Yes, both.', 'And a favicon?']);
    const page2 = await get(seller, `/conversations/${cid}/messages?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body.data.map((m: { body: string }) => m.body)).toEqual(['Can you do it in two days?']);
    expect(page2.body.next_cursor).toBeNull();

    const marked = await post(seller, `/conversations/${cid}/read`, { message_id: second.body.message.message_id });
    expect(marked.body).toMatchObject({ unread_count: 0, last_read_message_id: second.body.message.message_id });
    // the marker never moves back
    const back = await post(seller, `/conversations/${cid}/read`, { message_id: first.body.message.message_id });
    expect(back.body.last_read_message_id).toBe(second.body.message.message_id);
    expect((await get(buyer, '/conversations')).body.data.find((c: { conversation_id: string }) => c.conversation_id === cid).unread_count).toBe(1);

    // message.created: to both parties, not to a stranger
    const evs = (await get(seller, '/events?type=message.created&resource_type=message')).body.data;
    expect(evs.map((e: { data: { body: string } }) => e.data.body)).toEqual(expect.arrayContaining(['Yes, both.', 'And a favicon?']));
    expect((await get(stranger, '/events?type=message.created')).body.data).toEqual([]);
  });

  it('strangers get 404; the seller cannot inquire about their own listing; bodies are 1..4000 characters', async () => {
    const l = await createListing(t.app, seller);
    const cid = (await post(buyer, `/listings/${l.listing_id}/conversations`, { body: 'Hi' })).body.conversation.conversation_id;
    expectProblem(await get(stranger, `/conversations/${cid}/messages`), 404, 'not-found');
    expectProblem(await post(stranger, `/conversations/${cid}/messages`, { body: 'x' }), 404, 'not-found');
    expectProblem(await post(stranger, `/conversations/${cid}/read`, { message_id: cid }), 404, 'not-found');
    expectProblem(await post(seller, `/listings/${l.listing_id}/conversations`, { body: 'me?' }), 409, 'own-listing');
    expectProblem(await post(buyer, `/conversations/${cid}/messages`, { body: '   ' }), 400, 'validation-error', ['body.body']);
    expectProblem(await post(buyer, `/conversations/${cid}/messages`, { body: 'x'.repeat(4001) }), 400, 'validation-error', ['body.body']);
    expect((await post(buyer, `/conversations/${cid}/messages`, { body: 'x'.repeat(4000) })).status).toBe(201);
    expectProblem(await post(buyer, '/listings/00000000-0000-4000-8000-000000000000/conversations', { body: 'hi' }), 404, 'not-found');
    expect((await get(stranger, '/conversations')).body.data).toEqual([]);
  });

  it('a participant reports the other party\'s message once; not their own, and strangers cannot', async () => {
    const l = await createListing(t.app, seller);
    const r = await post(buyer, `/listings/${l.listing_id}/conversations`, { body: 'Send me your password' });
    const mid = r.body.message.message_id;
    expectProblem(await post(buyer, `/messages/${mid}/report`, { reason: 'mine' }), 409, 'conflict');
    expectProblem(await post(stranger, `/messages/${mid}/report`, { reason: 'spam' }), 404, 'not-found');
    const rep = await post(seller, `/messages/${mid}/report`, { reason: 'phishing' });
    expect(rep.status).toBe(200);
    expect(rep.body.report).toMatchObject({ reason: 'phishing', reported_by_wallet: seller.wallet });
    expectProblem(await post(seller, `/messages/${mid}/report`, { reason: 'again' }), 409, 'conflict');
    const seen = (await get(buyer, `/conversations/${r.body.conversation.conversation_id}/messages`)).body.data[0];
    expect(seen.report.reason).toBe('phishing');
  });

  it('limits messages per sender per minute (429 with Retry-After), other senders unaffected', async () => {
    const spammer = await user(t);
    const l = await createListing(t.app, seller);
    const codes: number[] = [];
    for (let i = 0; i < 14; i++) codes.push((await post(spammer, `/listings/${l.listing_id}/conversations`, { body: `msg ${i}` })).status);
    expect(codes.slice(0, 12)).toEqual(Array(12).fill(201));
    const refused = await post(spammer, `/listings/${l.listing_id}/conversations`, { body: 'one more' });
    expectProblem(refused, 429, 'rate-limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await post(stranger, `/listings/${l.listing_id}/conversations`, { body: 'hello' })).status).toBe(201);
  });
});
