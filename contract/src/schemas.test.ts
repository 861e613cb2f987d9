import { describe, expect, it } from 'vitest';
import { MessageBody } from './chat.contract.js';
import {
  BaseUnits,
  CreateListingBody,
  CreateOrderBody,
  CreateReviewBody,
  DisputeOrderBody,
  ListListingsQuery,
  MarketplaceListingsQuery,
  Problem,
  Pubkey,
  ResolveDisputeBody,
  RuleDisputeBody,
  SearchListingsQuery,
  SubmitEvidenceBody,
  TxSignature,
  UpdateListingBody,
  VerifyLoginBody,
  problemTypes,
  problemTypeUri,
} from './index.js';

const WALLET = 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r';
const listing = { title: 'Logo design', description: 'Three concepts', price: 25, currency: 'USDC', category: 'design', duration: 5 };

describe('Pubkey', () => {
  it('accepts base58 32-byte keys', () => {
    expect(Pubkey.safeParse(WALLET).success).toBe(true);
    expect(Pubkey.safeParse('11111111111111111111111111111111').success).toBe(true); // system program
    expect(Pubkey.safeParse('So11111111111111111111111111111111111111112').success).toBe(true);
  });
  it('rejects non-base58, wrong length and too-short keys', () => {
    expect(Pubkey.safeParse(WALLET.replace('A', '0')).success).toBe(false); // 0 is not base58
    expect(Pubkey.safeParse(WALLET.slice(0, 40)).success).toBe(false); // decodes to < 32 bytes
    expect(Pubkey.safeParse('1'.repeat(44)).success).toBe(false); // 44 zero bytes
    expect(Pubkey.safeParse('').success).toBe(false);
  });
  it('checks signatures decode to 64 bytes', () => {
    expect(TxSignature.safeParse('1'.repeat(64)).success).toBe(true);
    expect(TxSignature.safeParse(WALLET).success).toBe(false);
  });
});

describe('amounts', () => {
  it('BaseUnits are u64 decimal strings', () => {
    for (const ok of ['0', '1', '1500000', '18446744073709551615']) expect(BaseUnits.safeParse(ok).success).toBe(true);
    for (const bad of ['-1', '01', '1.5', '1e6', '18446744073709551616', '', ' 1']) {
      expect(BaseUnits.safeParse(bad).success, bad).toBe(false);
    }
  });
});

describe('CreateListingBody', () => {
  it('accepts a valid listing', () => {
    expect(CreateListingBody.parse(listing)).toEqual(listing);
  });
  it('trims and bounds title (3..120) and description (1..5000)', () => {
    expect(CreateListingBody.parse({ ...listing, title: '  abc  ' }).title).toBe('abc');
    expect(CreateListingBody.safeParse({ ...listing, title: 'ab' }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, title: 'x'.repeat(121) }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, description: '   ' }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, description: 'x'.repeat(5001) }).success).toBe(false);
  });
  it('requires a positive price; the decimals limit is a server rule', () => {
    expect(CreateListingBody.safeParse({ ...listing, price: 0 }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, price: -1 }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, price: '25' }).success).toBe(false);
    // 7 decimals is too many for USDC, but currencies are runtime data: the server rejects it, not the schema
    expect(CreateListingBody.safeParse({ ...listing, price: 1.1234567 }).success).toBe(true);
  });
  it('checks currency and category shape, duration 1..365 whole days', () => {
    expect(CreateListingBody.safeParse({ ...listing, currency: 'usdc' }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, currency: 'U' }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, category: 'Web Dev' }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, duration: 0 }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, duration: 366 }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, duration: 1.5 }).success).toBe(false);
    expect(CreateListingBody.safeParse({ ...listing, duration: 365 }).success).toBe(true);
  });
  it('rejects unknown fields', () => {
    expect(CreateListingBody.safeParse({ ...listing, status: 'sold' }).success).toBe(false);
  });
});

describe('UpdateListingBody', () => {
  it('needs at least one field and only allows available/unlisted status', () => {
    expect(UpdateListingBody.safeParse({}).success).toBe(false);
    expect(UpdateListingBody.safeParse({ status: 'unlisted' }).success).toBe(true);
    expect(UpdateListingBody.safeParse({ status: 'sold' }).success).toBe(false);
    expect(UpdateListingBody.safeParse({ currency: 'SOL' }).success).toBe(false);
  });
});

describe('reviews, disputes, resolutions', () => {
  it('rating is an integer 1..5', () => {
    for (const rating of [1, 3, 5]) expect(CreateReviewBody.safeParse({ rating }).success).toBe(true);
    for (const rating of [0, 6, 2.5, '5']) expect(CreateReviewBody.safeParse({ rating }).success, String(rating)).toBe(false);
  });
  it('review text is at most 2000 characters', () => {
    expect(CreateReviewBody.safeParse({ rating: 4, text: 'x'.repeat(2000) }).success).toBe(true);
    expect(CreateReviewBody.safeParse({ rating: 4, text: 'x'.repeat(2001) }).success).toBe(false);
  });
  it('dispute reason is 10..2000 characters', () => {
    expect(DisputeOrderBody.safeParse({ reason: 'too short' }).success).toBe(false);
    expect(DisputeOrderBody.safeParse({ reason: 'Nothing was delivered' }).success).toBe(true);
    expect(DisputeOrderBody.safeParse({ reason: 'x'.repeat(2001) }).success).toBe(false);
  });
  it('buyer_bps is an integer 0..10000', () => {
    for (const buyer_bps of [0, 5000, 10000]) expect(ResolveDisputeBody.safeParse({ buyer_bps }).success).toBe(true);
    for (const buyer_bps of [-1, 10001, 50.5]) expect(ResolveDisputeBody.safeParse({ buyer_bps }).success).toBe(false);
  });
  it('a dispute\'s reason code is optional (text-only clients keep working) and one of the fixed list', () => {
    expect(DisputeOrderBody.safeParse({ reason: 'Nothing was delivered', reason_code: 'not_delivered' }).success).toBe(true);
    expect(DisputeOrderBody.safeParse({ reason: 'Nothing was delivered', reason_code: 'angry' }).success).toBe(false);
  });
  it('a rationale is optional on the older resolve body and required on the ruling, 20..3800 characters', () => {
    expect(ResolveDisputeBody.safeParse({ buyer_bps: 0, rationale: 'The seller delivered what was listed.' }).success).toBe(true);
    expect(ResolveDisputeBody.safeParse({ buyer_bps: 0, rationale: 'too short' }).success).toBe(false);
    expect(RuleDisputeBody.safeParse({ buyer_bps: 0 }).success).toBe(false);
    expect(RuleDisputeBody.safeParse({ buyer_bps: 0, rationale: 'x'.repeat(3801) }).success).toBe(false);
  });
  it('evidence files are https links with a lowercase hex SHA-256', () => {
    const sha256 = 'ab'.repeat(32);
    expect(SubmitEvidenceBody.safeParse({ text: 'Proof', files: [{ url: 'https://x.example/a.png', name: 'a.png', sha256 }] }).success).toBe(true);
    expect(SubmitEvidenceBody.safeParse({ text: 'Proof', files: [{ url: 'ftp://x.example/a.png', name: 'a.png', sha256 }] }).success).toBe(false);
    expect(SubmitEvidenceBody.safeParse({ text: 'Proof', files: [{ url: 'https://x.example/a.png', name: 'a.png', sha256: sha256.toUpperCase() }] }).success).toBe(false);
  });
});

describe('orders and login bodies', () => {
  it('createOrder needs a UUID listing_id; buyer_wallet must be a pubkey', () => {
    const listing_id = '7f0c4a4e-5b7e-4c36-9a0e-0d1c5a8f2b11';
    expect(CreateOrderBody.safeParse({ listing_id }).success).toBe(true);
    expect(CreateOrderBody.safeParse({ listing_id, buyer_wallet: WALLET }).success).toBe(true);
    expect(CreateOrderBody.safeParse({ listing_id: 'abc' }).success).toBe(false);
    expect(CreateOrderBody.safeParse({ listing_id, buyer_wallet: 'not-a-key' }).success).toBe(false);
  });
  it('verify_login needs base64 message and signature', () => {
    expect(VerifyLoginBody.safeParse({ address: WALLET, signed_message: 'aGVsbG8=', signature: 'c2ln' }).success).toBe(true);
    expect(VerifyLoginBody.safeParse({ address: WALLET, signed_message: 'not base64!', signature: 'c2ln' }).success).toBe(false);
  });
});

describe('pagination and filters', () => {
  it('limit defaults to 20, is coerced from query strings and bounded 1..100', () => {
    expect(ListListingsQuery.parse({}).limit).toBe(20);
    expect(ListListingsQuery.parse({ limit: '50' }).limit).toBe(50);
    for (const limit of ['0', '101', '2.5', 'ten']) expect(ListListingsQuery.safeParse({ limit }).success, limit).toBe(false);
  });
  it('search sort defaults to relevance and rejects unknown values', () => {
    expect(SearchListingsQuery.parse({}).sort).toBe('relevance');
    expect(SearchListingsQuery.parse({ min_price: '1.5' }).min_price).toBe(1.5);
    expect(SearchListingsQuery.safeParse({ sort: 'cheapest' }).success).toBe(false);
  });
  it('marketplace status defaults to active and never offers unlisted', () => {
    expect(MarketplaceListingsQuery.parse({}).status).toBe('active');
    expect(MarketplaceListingsQuery.safeParse({ status: 'unlisted' }).success).toBe(false);
  });
});

describe('problems', () => {
  it('has the required slugs with their statuses', () => {
    const expected: Record<string, number> = {
      'validation-error': 400, 'malformed-json': 400, 'idempotency-key-missing': 400, unauthorized: 401,
      'invalid-token': 401, 'token-expired': 401, 'login-failed': 401, forbidden: 403, 'not-found': 404,
      'route-not-found': 404, 'custody-disabled': 404, conflict: 409, 'invalid-state-transition': 409,
      'idempotency-key-in-use': 409, 'payload-too-large': 413, 'unsupported-media-type': 415,
      'idempotency-key-reused': 422, 'listing-unavailable': 409, 'own-listing': 409, 'review-not-allowed': 409,
      'insufficient-funds': 409, 'rate-limited': 429, 'chain-unavailable': 503, 'chain-transaction-failed': 502,
      'internal-error': 500,
    };
    for (const [slug, status] of Object.entries(expected)) {
      expect(problemTypes[slug as keyof typeof problemTypes]?.status, slug).toBe(status);
    }
  });
  it('builds type URIs and validates problem documents', () => {
    expect(problemTypeUri('not-found')).toBe('https://bazaar.dev/problems/not-found');
    const doc = {
      type: problemTypeUri('validation-error'),
      title: 'Validation error',
      status: 400,
      detail: 'body.price: must be positive',
      instance: '/api/v1/listings',
      request_id: 'req_1',
      errors: [{ path: 'body.price', message: 'must be positive', code: 'too_small' }],
    };
    expect(Problem.safeParse(doc).success).toBe(true);
    expect(Problem.safeParse({ ...doc, status: 200 }).success).toBe(false);
    expect(Problem.safeParse({ ...doc, type: 'not-found' }).success).toBe(false);
  });
});

describe('safe text', () => {
  it('checks the text as sent, before trimming: a trailing form feed or vertical tab is refused as the published pattern says', () => {
    for (const bad of ['hello\f', '\fhello', 'hello\u000b', 'a\u0000b']) {
      expect(MessageBody.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
      expect(ListingTitleOf(bad).success, JSON.stringify(bad)).toBe(false);
    }
    expect(MessageBody.parse('  hello\n')).toBe('hello'); // whitespace the pattern allows is still trimmed
  });
});

const ListingTitleOf = (title: string) => CreateListingBody.safeParse({ ...listing, title: `Logo ${title}` });
