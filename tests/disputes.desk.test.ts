/**
 * The dispute desk over HTTP (issue 25 part 3): the real app on PGlite and PostgreSQL (the Prisma storage,
 * the events outbox, the chat module) with the simulated escrow program of tests/orders.fakes.ts as the
 * orders module's escrow port, as tests/e2e.orders-agreements-http.test.ts. A reason code on opening,
 * evidence from both parties (shapes, hash chain, due date, per-party limit, who may), the arbiter's queue
 * (oldest first, cursor, evidence, messages, stake, attention flag) and the ruling with a rationale both
 * parties receive (event and chat), beside the older resolve routes.
 */
import { createHash, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { setRoles } from './helpers/roles.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISPUTE_DEFAULTS, DISPUTE_LIMITS, type Dispute, type DisputeCase, type Order } from '@bazaar/contract';
import { API, createListing, expectProblem, insertOrder, setListingStatus, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { createApiKey, createTestApp } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { FakeEscrow } from './orders.fakes.js';
import { dbBackends } from './helpers/shared-db.js';
import { countDisputesNeedingAttention } from '../server/src/modules/disputes/index.js';

/** THE one place an operator is made: a user holding the `arbiter` role only (issue 25 roles). */
async function makeArbiter(t: TestApp): Promise<TestUser> {
  const u = await user(t);
  await setRoles(t.ctx.db, { id: u.userId }, ['arbiter']);
  return u;
}

let t: TestApp;
let alice: TestUser; // buyer
let bob: TestUser; // seller
let carol: TestUser; // stranger
let judy: TestUser; // arbiter
const escrow = new FakeEscrow();

/** An order of Alice's for Bob's listing, funded in the fake escrow (in_progress) and disputed (by Alice unless `by`); `null`: not disputed. */
async function fundedOrder(dispute: { by?: TestUser; reason?: string; reason_code?: string } | null = {}): Promise<string> {
  const l = await createListing(t.app, bob);
  await setListingStatus(t.ctx.db, l.listing_id, 'reserved');
  const id = await insertOrder(t.ctx.db, { listingId: l.listing_id, buyerId: alice.userId, sellerId: bob.userId, status: 'in_progress' });
  await t.ctx.db.$executeRaw`UPDATE orders SET funded_at = now() WHERE id = ${id}::uuid`;
  const o = (await request(t.app).get(`${API}/orders/${id}`).set(alice.headers).expect(200)).body as Order;
  escrow.fund({
    orderId: id,
    buyer: alice.wallet,
    seller: bob.wallet,
    mint: o.payment_mint,
    amount: BigInt(o.amount_base_units),
    deliveryDeadline: Date.parse(o.delivery_deadline) / 1000,
    reviewWindow: o.review_window_seconds,
    expiresAt: escrow.now + 900,
  });
  if (dispute) {
    const { by = alice, ...body } = dispute;
    const r = await post(by, `/orders/${id}/dispute`, { reason: 'Nothing arrived by the deadline', ...body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  return id;
}
const post = (who: TestUser, path: string, body: object = {}) => request(t.app).post(`${API}${path}`).set(who.headers).send(body);
const get = (who: TestUser, path: string) => request(t.app).get(`${API}${path}`).set(who.headers);
const evidence = (who: TestUser, id: string, body: object) => post(who, `/disputes/${id}/evidence`, body);
const file = (over: Record<string, unknown> = {}) => ({
  url: 'https://files.example.com/delivery.zip',
  name: 'delivery.zip',
  sha256: createHash('sha256').update('the delivered files').digest('hex'),
  size_bytes: 1234,
  content_type: 'application/zip',
  ...over,
});
const eventsOf = async (who: TestUser, id: string) =>
  (await get(who, `/events?resource_id=${id}&limit=100`).expect(200)).body.data as Array<{ type: string; data: Dispute; resource_type: string }>;

describe.each(dbBackends)('dispute desk on $name', ({ postgres }) => {
  beforeAll(async () => {
    escrow.now = Math.floor(Date.now() / 1000);
    escrow.feeBpsValue = 100; // the fee snapshot insertOrder writes
    const chain = Object.assign(new FakeChain(), { escrow: {} });
    t = await createTestApp({ chain: chain as never, postgres, orders: { ports: { escrow: () => escrow } } });
    [alice, bob, carol] = await Promise.all([user(t), user(t), user(t)]);
    judy = await makeArbiter(t);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a dispute opens with a reason code; a client that sends the reason text only gets `other`', async () => {
    const coded = await fundedOrder({ reason: 'The logo files never arrived', reason_code: 'not_delivered' });
    const d = (await get(alice, `/disputes/${coded}`).expect(200)).body as Dispute;
    expect(d).toMatchObject({
      dispute_id: coded,
      order_id: coded,
      milestone_index: 1,
      status: 'open',
      reason_code: 'not_delivered',
      reason: 'The logo files never arrived',
      opened_by: 'buyer',
      evidence: [],
      evidence_head: null,
      evidence_open: true,
      resolution: null,
      at_stake: { currency: 'USDC', amount: 25.5, amount_base_units: '25500000' },
    });
    expect(Date.parse(d.evidence_due_at) - Date.parse(d.opened_at)).toBe(DISPUTE_DEFAULTS.evidenceHours * 3_600_000);
    const textOnly = await fundedOrder({ by: bob, reason: 'The buyer stopped answering' });
    expect((await get(bob, `/disputes/${textOnly}`).expect(200)).body).toMatchObject({ reason_code: 'other', opened_by: 'seller' });
    expectProblem(await post(alice, `/orders/${await fundedOrder(null)}/dispute`, { reason: 'Something else went wrong', reason_code: 'bored' }), 400, 'validation-error', ['body.reason_code']);
  });

  it('both parties submit evidence, hash-chained (sha256 of the canonical JSON); both see both sides and receive dispute.evidence_submitted', async () => {
    const id = await fundedOrder({ reason_code: 'not_as_described' });
    const first = await evidence(alice, id, { text: 'The delivery is a different logo than the one agreed.', files: [file()] });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const second = await evidence(bob, id, { text: 'This is the logo from the brief, see the attached brief.' });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect(first.body).toMatchObject({ party: 'buyer', submitted_by: alice.wallet, prev_hash: null, anchor_signature: null, files: [file()] });
    expect(second.body).toMatchObject({ party: 'seller', submitted_by: bob.wallet, prev_hash: first.body.content_hash, files: [] });
    // anyone holding the fields recomputes the hash (RFC 8785 canonical JSON, SHA-256)
    for (const e of [first.body, second.body]) {
      const fields = { dispute_id: id, evidence_id: e.evidence_id, party: e.party, submitted_by: e.submitted_by, text: e.text, files: e.files, submitted_at: e.submitted_at, prev_hash: e.prev_hash };
      expect(e.content_hash).toBe(createHash('sha256').update(canonicalize(fields)!).digest('hex'));
    }
    // visibility (decision): each party sees both sides at once
    for (const who of [alice, bob, judy]) {
      const d = (await get(who, `/disputes/${id}`).expect(200)).body as Dispute;
      expect(d.evidence.map((e) => e.party)).toEqual(['buyer', 'seller']);
      expect(d.evidence_head).toBe(second.body.content_hash);
    }
    for (const who of [alice, bob]) {
      const evs = (await eventsOf(who, id)).filter((e) => e.type === 'dispute.evidence_submitted');
      expect(evs).toHaveLength(2);
      expect(evs[0]!.resource_type).toBe('dispute');
      expect(evs.map((e) => e.data.evidence_head).sort()).toEqual([first.body.content_hash, second.body.content_hash].sort());
    }
    expect((await eventsOf(carol, id)).length).toBe(0);
  });

  it('concurrent submissions chain one after the other: each prev_hash is its predecessor\'s content_hash', async () => {
    const id = await fundedOrder();
    const sent = await Promise.all(Array.from({ length: 8 }, (_, i) => evidence(i % 2 ? bob : alice, id, { text: `Concurrent statement ${i}` })));
    expect(sent.map((r) => r.status)).toEqual(Array(8).fill(201));
    const d = (await get(alice, `/disputes/${id}`).expect(200)).body as Dispute;
    expect(d.evidence).toHaveLength(8);
    expect(d.evidence[0]!.prev_hash).toBeNull();
    expect(d.evidence.slice(1).map((e) => e.prev_hash)).toEqual(d.evidence.slice(0, -1).map((e) => e.content_hash));
    expect(d.evidence_head).toBe(d.evidence[7]!.content_hash);
  });

  it('evidence by a non-party: a stranger gets 404 (reading too), the arbiter 403', async () => {
    const id = await fundedOrder();
    expectProblem(await evidence(carol, id, { text: 'I saw it all happen.' }), 404, 'not-found');
    expectProblem(await get(carol, `/disputes/${id}`), 404, 'not-found');
    expectProblem(await evidence(judy, id, { text: 'The arbiter testifies.' }), 403, 'forbidden');
    // an escrow that was never disputed is no dispute
    expectProblem(await get(alice, `/disputes/${await fundedOrder(null)}`), 404, 'not-found');
    expectProblem(await get(alice, `/disputes/${randomUUID()}`), 404, 'not-found');
  });

  it('refuses evidence of the wrong shape: a bad SHA-256, a plain http link, too many files, no text, unknown members', async () => {
    const id = await fundedOrder();
    const bad = async (body: object, path: string) => expectProblem(await evidence(alice, id, body), 400, 'validation-error', [path]);
    await bad({ text: 'x', files: [file({ sha256: 'ABC' })] }, 'body.files.0.sha256');
    await bad({ text: 'x', files: [file({ sha256: 'A'.repeat(64) })] }, 'body.files.0.sha256');
    await bad({ text: 'x', files: [file({ url: 'http://files.example.com/a.zip' })] }, 'body.files.0.url');
    await bad({ text: 'x', files: [file({ size_bytes: DISPUTE_LIMITS.fileMaxBytes + 1 })] }, 'body.files.0.size_bytes');
    await bad({ text: 'x', files: Array.from({ length: DISPUTE_LIMITS.filesPerSubmission + 1 }, () => file()) }, 'body.files');
    await bad({ text: '' }, 'body.text');
    await bad({ text: 'x'.repeat(DISPUTE_LIMITS.textMaxLength + 1) }, 'body.text');
    await bad({ text: 'x', files: [{ ...file(), secret: 1 }] }, 'body');
    await bad({ text: 'x', note: 'not a member' }, 'body');
    expect((await get(alice, `/disputes/${id}`).expect(200)).body.evidence).toEqual([]);
  });

  it('evidence after the due date answers 409 evidence-closed; so does evidence after the ruling', async () => {
    const id = await fundedOrder();
    expect((await evidence(bob, id, { text: 'Delivered on time, here is the proof.' })).status).toBe(201);
    // the dispute opened DISPUTE_EVIDENCE_HOURS and a minute ago (service clock): its evidence is due
    const openedAt = new Date(Date.now() - DISPUTE_DEFAULTS.evidenceHours * 3_600_000 - 60_000);
    await t.ctx.db.$executeRaw`UPDATE orders SET disputed_at = ${openedAt} WHERE id = ${id}::uuid`;
    const late = await evidence(alice, id, { text: 'One more thing I forgot to say.' });
    expectProblem(late, 409, 'evidence-closed');
    expect(late.body).toMatchObject({ dispute_status: 'open', evidence_due_at: new Date(openedAt.getTime() + DISPUTE_DEFAULTS.evidenceHours * 3_600_000).toISOString() });
    expect((await get(alice, `/disputes/${id}`).expect(200)).body).toMatchObject({ status: 'open', evidence_open: false });
    const ruled = await fundedOrder();
    expect((await post(judy, `/admin/disputes/${ruled}/resolve`, { buyer_bps: 0, rationale: 'The seller delivered what the listing promised.' })).status).toBe(200);
    const after = await evidence(alice, ruled, { text: 'But I disagree with the ruling.' });
    expectProblem(after, 409, 'evidence-closed');
    expect(after.body).toMatchObject({ dispute_status: 'resolved' });
  });

  it(`a party submits at most ${DISPUTE_LIMITS.submissionsPerParty} pieces of evidence: one more answers 409 evidence-limit-reached`, async () => {
    const id = await fundedOrder();
    for (let i = 0; i < DISPUTE_LIMITS.submissionsPerParty; i++) expect((await evidence(alice, id, { text: `Statement ${i}` })).status).toBe(201);
    const over = await evidence(alice, id, { text: 'One too many' });
    expectProblem(over, 409, 'evidence-limit-reached');
    expect(over.body.limit).toBe(DISPUTE_LIMITS.submissionsPerParty);
    // the other party's count is her own
    expect((await evidence(bob, id, { text: 'My side' })).status).toBe(201);
    const d = (await get(bob, `/disputes/${id}`).expect(200)).body as Dispute;
    expect(d.evidence).toHaveLength(DISPUTE_LIMITS.submissionsPerParty + 1);
    expect(d.evidence.slice(1).every((e, i) => e.prev_hash === d.evidence[i]!.content_hash)).toBe(true);
  });

  it('the arbiter\'s queue: open disputes oldest first with cursor pages, both sides\' evidence, the order\'s messages and the stake; an attention flag past DISPUTE_ATTENTION_HOURS', async () => {
    const older = await fundedOrder();
    const oldest = await fundedOrder({ reason_code: 'late' });
    expect((await post(alice, `/orders/${oldest}/messages`, { body: 'Where is my delivery?' })).status).toBe(201);
    expect((await post(bob, `/orders/${oldest}/messages`, { body: 'It is late, sorry.' })).status).toBe(201);
    expect((await evidence(alice, oldest, { text: 'The deadline passed a week ago.' })).status).toBe(201);
    expect((await evidence(bob, oldest, { text: 'I was ill.' })).status).toBe(201);
    // opened long ago (before anything else in this suite), oldest first
    await t.ctx.db.$executeRaw`UPDATE orders SET disputed_at = '2001-01-01T00:00:00Z' WHERE id = ${oldest}::uuid`;
    await t.ctx.db.$executeRaw`UPDATE orders SET disputed_at = '2001-01-02T00:00:00Z' WHERE id = ${older}::uuid`;

    expectProblem(await get(alice, '/admin/disputes'), 403, 'forbidden');
    const p1 = await get(judy, '/admin/disputes?limit=1').expect(200);
    const c1 = p1.body.data[0] as DisputeCase;
    expect(c1.dispute).toMatchObject({ dispute_id: oldest, reason_code: 'late', needs_attention: true, at_stake: { amount_base_units: '25500000' } });
    expect(c1.dispute.evidence.map((e) => e.party)).toEqual(['buyer', 'seller']);
    expect(c1.messages.map((m) => [m.sender_role, m.body])).toEqual([
      ['buyer', 'Where is my delivery?'],
      ['seller', 'It is late, sorry.'],
    ]);
    expect(c1).toMatchObject({ buyer_wallet: alice.wallet, seller_wallet: bob.wallet, more_messages: false });
    expect(p1.body.next_cursor).toEqual(expect.any(String));
    const p2 = await get(judy, `/admin/disputes?limit=1&cursor=${p1.body.next_cursor}`).expect(200);
    expect(p2.body.data[0].dispute.dispute_id).toBe(older);

    // the whole queue: every open dispute once, oldest first; the flag and the metrics function agree
    const all: DisputeCase[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await get(judy, `/admin/disputes?limit=3${cursor ? `&cursor=${cursor}` : ''}`).expect(200);
      all.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor);
    const opened = all.map((c) => Date.parse(c.dispute.opened_at));
    expect(opened).toEqual([...opened].sort((a, b) => a - b));
    expect(new Set(all.map((c) => c.dispute.dispute_id)).size).toBe(all.length);
    const flagged = all.filter((c) => c.dispute.needs_attention).map((c) => c.dispute.dispute_id);
    expect(flagged).toEqual(expect.arrayContaining([oldest, older]));
    expect(all.find((c) => !c.dispute.needs_attention)).toBeDefined();
    expect(await countDisputesNeedingAttention(t.ctx.db, { now: new Date(), attentionHours: DISPUTE_DEFAULTS.attentionHours })).toBe(flagged.length);
    // the same count is the dispute desk's attention flag in the Prometheus metrics (bazaar_attention_flags)
    const scrape = await (t.app as unknown as { services: { metrics: { scrape(): Promise<string> } } }).services.metrics.scrape();
    expect(scrape).toMatch(new RegExp(`bazaar_attention_flags\\{kind="dispute-unresolved"\\} ${flagged.length}\\n`));
    const onlyFlagged = (await get(judy, '/admin/disputes?limit=100&attention=true').expect(200)).body.data as DisputeCase[];
    expect(onlyFlagged.map((c) => c.dispute.dispute_id)).toEqual(flagged);
  });

  it('a ruling with a written rationale: the split on chain, dispute.resolved with the rationale to both parties, the rationale in the order\'s chat; a repeat sends nothing twice', async () => {
    const id = await fundedOrder({ reason_code: 'quality' });
    expect((await evidence(alice, id, { text: 'Half the pages are missing.' })).status).toBe(201);
    expectProblem(await post(judy, `/admin/disputes/${id}/resolve`, { buyer_bps: 5000 }), 400, 'validation-error', ['body.rationale']);
    expectProblem(await post(judy, `/admin/disputes/${id}/resolve`, { buyer_bps: 5000, rationale: 'too short' }), 400, 'validation-error', ['body.rationale']);
    expectProblem(await post(alice, `/admin/disputes/${id}/resolve`, { buyer_bps: 10000, rationale: 'I decide for myself, thank you.' }), 403, 'forbidden');
    const serviceKey = await createApiKey(t, { name: 'arbiter-key', isAdmin: true });
    const keyed = await request(t.app).post(`${API}/admin/disputes/${id}/resolve`).set('x-api-key', serviceKey.key).send({ buyer_bps: 5000, rationale: 'A ruling without a person behind it.' });
    expectProblem(keyed, 403, 'forbidden');
    expect((await get(alice, `/orders/${id}`).expect(200)).body.status).toBe('disputed');

    const rationale = 'Half of the work was delivered as agreed; the buyer gets half back.';
    const ruled = await post(judy, `/admin/disputes/${id}/resolve`, { buyer_bps: 5000, rationale });
    expect(ruled.status, JSON.stringify(ruled.body)).toBe(200);
    expect(ruled.body).toMatchObject({ status: 'resolved', resolution: { outcome: 'arbiter', buyer_bps: 5000, rationale } });
    const order = (await get(bob, `/orders/${id}`).expect(200)).body as Order;
    expect(order).toMatchObject({ status: 'resolved', settled_by: 'arbiter', resolution: { buyer_bps: 5000 } });
    expect(escrow.accounts.get(id)).toBeUndefined(); // the simulated program closed the escrow: the split was paid
    for (const who of [alice, bob]) {
      const resolved = (await eventsOf(who, id)).filter((e) => e.type === 'dispute.resolved');
      expect(resolved).toHaveLength(1);
      expect(resolved[0]!.data).toMatchObject({ status: 'resolved', resolution: { rationale, buyer_bps: 5000 }, evidence: [{ party: 'buyer' }] });
      const messages = (await get(who, `/orders/${id}/messages`).expect(200)).body.data as Array<{ sender_role: string; body: string; sender_wallet: string }>;
      const fromArbiter = messages.filter((m) => m.sender_role === 'arbiter');
      expect(fromArbiter).toHaveLength(1);
      expect(fromArbiter[0]!.body).toContain(rationale);
      expect(fromArbiter[0]!.sender_wallet).toBe(judy.wallet);
    }
    // the same ruling again: 200, nothing sent twice; another split: 409
    expect((await post(judy, `/admin/disputes/${id}/resolve`, { buyer_bps: 5000, rationale })).status).toBe(200);
    expect((await eventsOf(alice, id)).filter((e) => e.type === 'dispute.resolved')).toHaveLength(1);
    expect(((await get(alice, `/orders/${id}/messages`).expect(200)).body.data as Array<{ sender_role: string }>).filter((m) => m.sender_role === 'arbiter')).toHaveLength(1);
    expectProblem(await post(judy, `/admin/disputes/${id}/resolve`, { buyer_bps: 0, rationale: 'Changed my mind about this one.' }), 409, 'invalid-state-transition');
    // ruled disputes leave the queue
    const queue = (await get(judy, '/admin/disputes?limit=100').expect(200)).body.data as DisputeCase[];
    expect(queue.map((c) => c.dispute.dispute_id)).not.toContain(id);
  });

  it('a milestone\'s dispute is that milestone\'s: dispute_id = its milestone_id, opened and ruled on the milestone only', async () => {
    const first = await fundedOrder(null);
    const listingId = (await t.ctx.db.order.findUniqueOrThrow({ where: { id: first } })).listingId;
    // as tests/orders.view.test.ts builds one: the second row inserted scheduled, then made milestone 2 of the first,
    // with the order-level status on every row (as the orders module keeps it; the listing counts read it)
    const second = await insertOrder(t.ctx.db, { listingId, buyerId: alice.userId, sellerId: bob.userId, status: 'scheduled' });
    await t.ctx.db.$executeRaw`UPDATE orders SET milestone_count = 2, order_status = 'in_progress', buyer_wallet = ${alice.wallet}, seller_wallet = ${bob.wallet} WHERE id = ${first}::uuid`;
    await t.ctx.db.$executeRaw`
      UPDATE orders SET order_id = ${first}::uuid, milestone_index = 2, milestone_count = 2, order_status = 'in_progress',
                        buyer_wallet = ${alice.wallet}, seller_wallet = ${bob.wallet} WHERE id = ${second}::uuid`;
    // milestone 1 paid out, milestone 2 funded
    await t.ctx.db.$executeRaw`UPDATE orders SET status = 'completed', completed_at = now() WHERE id = ${first}::uuid`;
    await t.ctx.db.$executeRaw`UPDATE orders SET status = 'in_progress', funded_at = now() WHERE id = ${second}::uuid`;
    escrow.accounts.delete(first);
    escrow.fund({ orderId: second, buyer: alice.wallet, seller: bob.wallet, mint: 'mint', amount: 25_500_000n, deliveryDeadline: escrow.now + 86_400, reviewWindow: 259_200, expiresAt: escrow.now + 900 });
    const opened = await post(alice, `/orders/${first}/milestones/2/dispute`, { reason: 'The second batch is unusable', reason_code: 'quality' });
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect((opened.body as Order).milestones.map((m) => [m.milestone_id, m.status])).toEqual([
      [first, 'completed'],
      [second, 'disputed'],
    ]);
    expectProblem(await get(alice, `/disputes/${first}`), 404, 'not-found');
    expect((await get(bob, `/disputes/${second}`).expect(200)).body).toMatchObject({ dispute_id: second, order_id: first, milestone_index: 2, reason_code: 'quality', status: 'open' });
    expect((await evidence(bob, second, { text: 'The second batch matches the brief.' })).status).toBe(201);
    const rationale = 'The second batch misses the agreed format; the buyer gets it all back.';
    const ruled = await post(judy, `/admin/disputes/${second}/resolve`, { buyer_bps: 10000, rationale });
    expect(ruled.status, JSON.stringify(ruled.body)).toBe(200);
    expect(ruled.body).toMatchObject({ dispute_id: second, milestone_index: 2, resolution: { outcome: 'arbiter', buyer_bps: 10000, rationale } });
    const messages = (await get(alice, `/orders/${first}/messages`).expect(200)).body.data as Array<{ sender_role: string; body: string }>;
    expect(messages.find((m) => m.sender_role === 'arbiter')?.body).toMatch(/^Ruling on milestone 2: 100% to the buyer, 0% to the seller\./);
  });

  it('the older resolve route keeps working with buyer_bps alone (no rationale recorded); with a rationale it is sent like a ruling', async () => {
    const plain = await fundedOrder();
    const r = await post(judy, `/orders/${plain}/resolve`, { buyer_bps: 10000 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'resolved', resolution: { buyer_bps: 10000 } });
    expect((await get(alice, `/disputes/${plain}`).expect(200)).body).toMatchObject({ status: 'resolved', resolution: { outcome: 'arbiter', buyer_bps: 10000, rationale: null } });
    expect((await eventsOf(alice, plain)).filter((e) => e.type === 'dispute.resolved')).toHaveLength(0);

    const withReasons = await fundedOrder();
    const rationale = 'Nothing was delivered before the deadline: a full refund.';
    expect((await post(judy, `/orders/${withReasons}/resolve`, { buyer_bps: 10000, rationale })).status).toBe(200);
    expect((await get(bob, `/disputes/${withReasons}`).expect(200)).body).toMatchObject({ resolution: { rationale } });
    expect((await eventsOf(bob, withReasons)).filter((e) => e.type === 'dispute.resolved')).toHaveLength(1);
    // the admin API key without a user still resolves without a rationale (as before), not with one
    const serviceKey = await createApiKey(t, { name: 'legacy-arbiter', isAdmin: true });
    const third = await fundedOrder();
    const keyed = request(t.app).post(`${API}/orders/${third}/resolve`).set('x-api-key', serviceKey.key);
    expectProblem(await keyed.send({ buyer_bps: 5000, rationale: 'No person behind this ruling.' }), 403, 'forbidden');
    expect((await request(t.app).post(`${API}/orders/${third}/resolve`).set('x-api-key', serviceKey.key).send({ buyer_bps: 5000 })).status).toBe(200);
  });
});
