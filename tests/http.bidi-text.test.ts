/**
 * Bidirectional control characters (issue 23 item 4): a title "Invoice <U+202E>fdp.exe" displays as
 * "Invoice exe.pdf". Embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069) are refused in
 * every request string with 400 validation-error, `errors[].code` invalid_text_bidi, naming the field
 * (server/src/http/request-text.ts; every body field is walked in tests/http.unstorable-text.test.ts);
 * the contract's safeText schemas refuse them too (openapi.json `pattern`). The marks LRM, RLM and ALM
 * that right-to-left text needs stay allowed.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DisplayName, ListingTitle, SAFE_TEXT } from '@bazaar/contract';
import { API, createListing, insertOrder, setListingStatus, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';

const RLO_TITLE = 'Invoice \u202Efdp.exe';
const CONTROLS = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069'];

let t: TestApp;
let app: TestApp['app'];
let db: TestApp['ctx']['db'];
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  ({ t, app, db } = await setup());
  alice = await user(t);
  bob = await user(t);
});
afterAll(async () => {
  await t?.close();
});

function expectBidiRefused(res: request.Response, path: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body.type).toBe('https://bazaar.dev/problems/validation-error');
  expect(res.body.errors).toEqual([expect.objectContaining({ path, code: 'invalid_text_bidi' })]);
  expect(res.body.detail).toContain(path);
  expect(res.body.detail).toMatch(/bidirectional/);
}

describe('bidi controls in user-visible text', () => {
  it('a listing titled "Invoice <RLO>fdp.exe" is refused naming body.title; nothing is created', async () => {
    const before = await request(app).get(`${API}/listings?seller_wallet=${alice.wallet}`).set(alice.headers);
    const res = await request(app).post(`${API}/listings`).set(alice.headers).send({
      title: RLO_TITLE,
      description: 'Monthly invoice template',
      price: 5,
      currency: 'USDC',
      category: 'design',
      duration: 3,
    });
    expectBidiRefused(res, 'body.title');
    const after = await request(app).get(`${API}/listings?seller_wallet=${alice.wallet}`).set(alice.headers);
    expect(after.body.data.length).toBe(before.body.data.length);
  });

  it('every embedding, override and isolate control, in a description, a rename, a display name', async () => {
    const l = await createListing(app, alice, { title: 'Plain title' });
    for (const ch of CONTROLS) {
      expectBidiRefused(
        await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ description: `pay ${ch}here` }),
        'body.description',
      );
      expectBidiRefused(await request(app).patch(`${API}/user/me`).set(alice.headers).send({ display_name: `Ali${ch}ce` }), 'body.display_name');
    }
    expectBidiRefused(await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ title: RLO_TITLE }), 'body.title');
    const me = await request(app).get(`${API}/user/me`).set(alice.headers);
    expect(me.body.display_name).toBeNull();
  });

  it('order messages and disputes: the body and the reason name the field', async () => {
    const l = await createListing(app, alice, { title: 'Chatty gig' });
    await setListingStatus(db, l.listing_id, 'reserved');
    const id = await insertOrder(db, { listingId: l.listing_id, buyerId: bob.userId, sellerId: alice.userId, status: 'in_progress' });
    expectBidiRefused(await request(app).post(`${API}/orders/${id}/messages`).set(bob.headers).send({ body: `see ${RLO_TITLE}` }), 'body.body');
    expectBidiRefused(
      await request(app).post(`${API}/orders/${id}/dispute`).set(bob.headers).send({ reason: `The file ${RLO_TITLE} is not a PDF` }),
      'body.reason',
    );
  });

  it('right-to-left text and the marks LRM, RLM, ALM stay allowed', async () => {
    const name = '\u200Fשלום\u200E Dana \u061C';
    const res = await request(app).patch(`${API}/user/me`).set(bob.headers).send({ display_name: name });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.display_name).toBe(name);
    const l = await createListing(app, bob, { title: 'تصميم شعار \u200F(logo)' });
    expect(l.title).toBe('تصميم شعار \u200F(logo)');
  });

  it('the contract schemas refuse them too (openapi.json pattern of every safeText field)', () => {
    for (const ch of CONTROLS) {
      expect(SAFE_TEXT.test(`a${ch}b`)).toBe(false);
      expect(ListingTitle.safeParse(`Invoice ${ch}fdp.exe`).success).toBe(false);
      expect(DisplayName.safeParse(`Ali${ch}ce`).success).toBe(false);
    }
    expect(ListingTitle.safeParse('Invoice \u200Fpdf').success).toBe(true);
  });
});
