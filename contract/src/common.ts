/**
 * Shared building blocks of the Bazaar contract: the ts-rest contract instance, scalar schemas
 * (public keys, UUIDs, amounts, timestamps), pagination and the response helpers every route uses.
 *
 * Conventions (every route follows them):
 * - JSON bodies, snake_case field names.
 * - Token amounts: `*_base_units` are decimal strings of a u64 (exact, e.g. "1500000" = 1.5 USDC);
 *   the UI number next to them (`price`, `amount`) is `base_units / 10^decimals` for display.
 * - Timestamps: ISO-8601 strings in UTC (`2026-01-31T12:00:00.000Z`).
 * - Durations carry their unit in the name (`*_seconds`) or are documented (listing `duration` = days).
 * - Lists: `{ data: [...], next_cursor: string | null }`; pass `next_cursor` back as `cursor`.
 */
import { initContract } from '@ts-rest/core';
import bs58 from 'bs58';
import { z } from 'zod';

/** The ts-rest contract builder (annotated: its inferred type names a symbol ts-rest does not export). */
export const c: ReturnType<typeof initContract> = initContract();

/**
 * OpenAPI 3.0 schema keywords attached to a zod schema (`title`, `description`, `example`, `minProperties`,
 * ...), plus `x-bazaar-*` hints read by contract/scripts/openapi.ts.
 */
export type OpenApiMeta = Record<string, unknown>;

/** Key in a zod schema's `_def` under which extendApi leaves the metadata its copies inherit. */
export const OPENAPI_INHERITED = 'bazaarOpenApi';
/** Metadata a copy inherits; `description` is the zod description when it was attached (a later .describe() wins). */
export interface InheritedOpenApiMeta {
  meta: OpenApiMeta;
  description: string | undefined;
}

/**
 * The metadata a schema inherited from the schema it was copied from (zod's `.describe()`, `.refine()`,
 * `.extend()` ... return copies made from `_def`): everything but `title` and `x-bazaar-extends`, and
 * the description only when no later `.describe()` replaced it.
 */
export function inheritedOpenApiMeta(schema: z.ZodTypeAny): OpenApiMeta | undefined {
  const def = schema._def as { description?: string; [OPENAPI_INHERITED]?: InheritedOpenApiMeta };
  const prior = def[OPENAPI_INHERITED];
  if (!prior) return undefined;
  if (prior.description === def.description) return { ...prior.meta };
  const { description: _replaced, ...rest } = prior.meta;
  return rest;
}

/**
 * Attach OpenAPI metadata to `schema` (in place; returns it). Same behaviour and property
 * (`schema.metaOpenApi`) as `extendApi` of @anatine/zod-openapi, which @ts-rest/open-api reads when
 * openapi.json is generated. Defined here so that the contract's runtime, which client bundles load,
 * does not import the generator (a CommonJS module with its own zod import). The part copies inherit
 * is also kept in `_def` (see inheritedOpenApiMeta; applied by contract/scripts/openapi.ts), so that
 * e.g. `Pubkey.describe('...')` keeps Pubkey's example.
 */
export function extendApi<T extends z.ZodTypeAny>(schema: T, meta: OpenApiMeta): T {
  const target = schema as T & { metaOpenApi?: OpenApiMeta };
  target.metaOpenApi = Object.assign(target.metaOpenApi ?? inheritedOpenApiMeta(schema) ?? {}, meta);
  const { title: _title, 'x-bazaar-extends': _extends, ...inheritable } = target.metaOpenApi;
  (schema._def as { [OPENAPI_INHERITED]?: InheritedOpenApiMeta })[OPENAPI_INHERITED] = {
    meta: inheritable,
    description: schema._def.description as string | undefined,
  };
  return schema;
}

/** Give a schema a component name in the generated OpenAPI document (`#/components/schemas/<title>`). */
export const named = <T extends z.ZodTypeAny>(title: string, schema: T, description?: string): T =>
  extendApi(schema, { title, ...(description ? { description } : {}) });

/** The component name given to `schema` by `named`, if any. */
export const schemaTitle = (schema: z.ZodTypeAny): string | undefined =>
  (schema as { metaOpenApi?: OpenApiMeta }).metaOpenApi?.title as string | undefined;

/**
 * `base.extend(shape)` as a named schema that openapi.json describes as
 * `allOf: [{$ref: base}, {the added properties}]` instead of a copy of base's properties (generators
 * then reuse base's type and enums). `base` must be `named`.
 */
export function namedExtension<
  T extends z.ZodRawShape,
  U extends z.UnknownKeysParam,
  C extends z.ZodTypeAny,
  S extends z.ZodRawShape,
>(title: string, base: z.ZodObject<T, U, C>, shape: S, description?: string) {
  const baseTitle = schemaTitle(base);
  if (!baseTitle) throw new Error(`namedExtension(${title}): the base schema has no component name`);
  return extendApi(named(title, base.extend(shape), description), { 'x-bazaar-extends': baseTitle });
}

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const decodesTo = (value: string, bytes: number): boolean => {
  const decoded = bs58.decodeUnsafe(value);
  return decoded !== undefined && decoded.length === bytes;
};

/** A Solana public key: base58 text that decodes to exactly 32 bytes. */
export const Pubkey = extendApi(
  z
    .string()
    .min(32)
    .max(44)
    .regex(BASE58, 'must be base58')
    .refine((v) => decodesTo(v, 32), { message: 'must be a base58 encoded 32-byte public key' }),
  { description: 'Solana public key, base58 (32 bytes)', example: 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r' },
);

/**
 * Explorer links (issue 26 item 4). Every transaction signature and mint the API returns comes with its Solana
 * Explorer URL for the service's cluster (mainnet-beta: no query; devnet/testnet: `?cluster=`; a localnet or other
 * custom RPC: `?cluster=custom&customUrl=<the RPC URL, credentials stripped>`), so clients never build one. Naming
 * rule: an object that describes a transaction (it has `signature`) gets `explorer_url`; a flat field `x_signature`
 * gets `x_explorer_url`; a mint `mint` / `x_mint` gets `mint_explorer_url` / `x_mint_explorer_url`; a linked address
 * `x_address` (`token_mint_address`, `escrow_account_address`) gets `x_explorer_url`. A null value has a null link.
 * The server adds them in one place to every answer under /api/v1 (problem bodies included) and to every event (GET
 * /events, the event stream, webhook deliveries: the envelope's `signature` and the resource in `data`, computed
 * when the event is sent, never stored), except the audit log (an entry's hash covers its fields): there, build
 * links from GET /network's templates.
 */
export const EXPLORER_LINKS_DOC =
  'Explorer links: each signature and mint has a sibling Solana Explorer URL for the service\'s cluster: `signature` -> ' +
  '`explorer_url`, `x_signature` -> `x_explorer_url`, `mint` / `x_mint` -> `mint_explorer_url` / `x_mint_explorer_url`, ' +
  '`x_address` -> `x_explorer_url`; in answers and events, not in audit entries (use GET /network\'s templates there)';

/** The explorer link of `what` (see EXPLORER_LINKS_DOC); set by the server on every answer and event but audit entries. */
export const ExplorerUrl = (what: string) =>
  z
    .string()
    .url()
    .optional()
    .describe(`Solana Explorer URL of ${what} on the service's cluster (the naming rule of explorer links: GET /network)`);

/** A Solana transaction signature: base58 text that decodes to exactly 64 bytes. */
export const TxSignature = extendApi(
  z
    .string()
    .min(64)
    .max(88)
    .regex(BASE58, 'must be base58')
    .refine((v) => decodesTo(v, 64), { message: 'must be a base58 encoded 64-byte signature' }),
  {
    description: 'Solana transaction signature, base58 (64 bytes)',
    example: '4CKtRKnWZDvqWuJup8awgTGodXRzdMGqFhPeWJtYmRje4GtEUZaotnYsYm3L6pzLZHE5FGsWdvFvN2z8B4shx4RR',
  },
);

/**
 * Text the service stores or searches: no NUL and no other C0 control character except tab, line feed
 * and carriage return, and no bidirectional embedding, override or isolate control (U+202A..U+202E,
 * U+2066..U+2069; BIDI_CONTROLS). PostgreSQL `text` cannot hold NUL (error 22021), and the other controls
 * are never legitimate in titles, names, descriptions or queries: the bidi ones reorder how the text
 * displays (a title "Invoice <U+202E>fdp.exe" reads "Invoice exe.pdf"; Unicode UTS #55, CVE-2021-42574).
 * Checked by the schema, so a request carrying them is a 400 validation-error naming the field before any
 * handler (or chain transaction) runs; the server refuses the bidi controls in every request string too
 * (server/src/http/request-text.ts, `invalid_text_bidi`).
 */
export const SAFE_TEXT = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u202A-\u202E\u2066-\u2069]*$/;
export const SAFE_TEXT_MESSAGE =
  'must not contain NUL, control characters other than tab, line feed and carriage return, or bidirectional ' +
  'embedding, override or isolate controls (U+202A..U+202E, U+2066..U+2069)';

/**
 * The bidirectional formatting characters refused in request text: embeddings LRE, RLE (U+202A, U+202B),
 * PDF (U+202C), overrides LRO, RLO (U+202D, U+202E) and isolates LRI, RLI, FSI, PDI (U+2066..U+2069),
 * the set UTS #55 and CVE-2021-42574 (Trojan Source) name. Allowed: the implicit marks LRM, RLM (U+200E,
 * U+200F) and ALM (U+061C), which right-to-left text legitimately needs next to neutral characters and
 * which cannot reverse a run of text.
 */
export const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;

/**
 * `schema` (a z.string() with its own bounds) refusing NUL and control characters (see SAFE_TEXT). The
 * check runs first, on the text as sent: a `.trim()` in `schema` would otherwise strip a trailing form feed
 * or vertical tab before the pattern sees it, and the server would accept what openapi.json's `pattern`
 * refuses (found by schemathesis on `sendOrderMessage`).
 */
export const safeText = (schema: z.ZodString): z.ZodString =>
  new z.ZodString({ ...schema._def, checks: [{ kind: 'regex', regex: SAFE_TEXT, message: SAFE_TEXT_MESSAGE }, ...schema._def.checks] });

/** Decimal number text in a query string: optional minus, digits, optional fraction. No hex, exponent, blanks. */
const DECIMAL_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;
const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;

/**
 * A number in a query string, parsed strictly: only plain decimal text ("12", "0.5", "-1"; with
 * `integer`, digits only) becomes a number, then `schema` applies its bounds. `""`, `"0x10"`, `"1e3"`,
 * `" 5"`, `"Infinity"` (and `"2.0"` for an integer) are 400 validation-error, where z.coerce.number()
 * read them as 0, 16, 1000, 5, Infinity. Typed as number on input too, so the typed client sends numbers.
 */
export const queryNumber = <T extends z.ZodNumber>(schema: T, opts: { integer?: boolean } = {}) => {
  const text = opts.integer ? INTEGER_TEXT : DECIMAL_TEXT;
  return z.preprocess((v) => (typeof v === 'string' && text.test(v) ? Number(v) : v), schema) as unknown as z.ZodEffects<
    T,
    number,
    number
  >;
};

export const Uuid = extendApi(z.string().uuid(), {
  description: 'UUID (RFC 9562), lower-case hex',
  example: '0d8f3c1e-7b2a-4c5d-9e6f-a1b2c3d4e5f6',
});

/** ISO-8601 timestamp, UTC. */
export const Timestamp = extendApi(z.string().datetime({ offset: true }), {
  description: 'ISO-8601 timestamp (UTC)',
  example: '2026-01-31T12:00:00.000Z',
});

/** Base64 (standard alphabet, padded) text. */
export const Base64 = extendApi(
  z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64'),
  { description: 'Base64 (RFC 4648 standard alphabet, with padding)' },
);

const U64_MAX = 18446744073709551615n;
/** u64 in base units as a decimal string (no sign, no leading zeros, no exponent). */
export const BaseUnits = extendApi(
  z
    .string()
    .regex(/^(0|[1-9][0-9]{0,19})$/, 'must be a decimal string of an unsigned integer')
    .refine((v) => !/^[0-9]+$/.test(v) || BigInt(v) <= U64_MAX, { message: 'must fit in a u64' }),
  { description: 'Amount in base units (u64) as a decimal string, e.g. "1500000" = 1.5 USDC', example: '1500000' },
);

/**
 * Currency code: 2..10 upper-case letters. The set is runtime configuration (USDC, SOL by default,
 * see GET /currencies); the server answers 400 validation-error for codes that are not configured.
 */
export const CurrencyCode = extendApi(z.string().regex(/^[A-Z]{2,10}$/, 'must be 2..10 upper-case letters'), {
  description: 'Currency code (2..10 upper-case letters); validated by the server against GET /currencies',
  example: 'USDC',
});

/**
 * Category slug: lower-case words joined by hyphens, at most 64 characters. The set is runtime
 * configuration (GET /categories); the server answers 400 validation-error for unknown slugs.
 */
export const CategorySlug = extendApi(
  z
    .string()
    .min(2)
    .max(64)
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be a lower-case slug'),
  { description: 'Category slug; validated by the server against GET /categories', example: 'development' },
);

/**
 * A positive UI amount (e.g. 12.5 USDC). Decimal places beyond the currency's `decimals` are a server
 * rule (400 validation-error, `errors[].code = "too_many_decimals"`), since the currency is runtime data.
 */
export const UiAmount = extendApi(z.number().positive().finite().max(1_000_000_000_000), {
  description: 'Amount in UI units (base_units / 10^decimals); at most the currency decimals (server rule)',
  example: 12.5,
});

/** Basis points, 0..10000 (10000 = 100 %). */
export const Bps = z.number().int().min(0).max(10_000);

/** Opaque pagination cursor, as returned in `next_cursor` (base64url text). */
export const Cursor = extendApi(z.string().min(1).max(512).regex(/^[A-Za-z0-9_-]+$/, 'must be a cursor from next_cursor'), {
  description: 'Opaque cursor from a previous page\'s next_cursor; only valid with the same filters and sort',
});

/** `limit` (1..100, default 20) + `cursor`. `limit` is decimal digits only (see queryNumber). */
export const PaginationQuery = z.object({
  limit: extendApi(queryNumber(z.number({ invalid_type_error: 'must be a whole number in decimal digits' }).int().min(1).max(100), {
    integer: true,
  }).default(20), {
    description: 'Page size, 1..100 (default 20)',
  }),
  cursor: Cursor.optional(),
});

/** A cursor page of `item`: `{ data, next_cursor }`; `next_cursor` is null on the last page. */
export const page = <T extends z.ZodTypeAny>(item: T) =>
  z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().describe('Cursor of the next page; null on the last page'),
  });

const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7E]+$/, 'must be printable ASCII');
const idempotencyKeyRules =
  '1..255 printable ASCII (a UUID is recommended), kept 24 h. Replays with the same body return the stored ' +
  'response (header `Idempotent-Replayed: true`); same key with a different body -> 422 idempotency-key-reused; ' +
  'same key while the first request still runs -> 409 idempotency-key-in-use.';

/** Idempotency-Key request header (IETF draft-ietf-httpapi-idempotency-key-header): required on createOrder and createWithdrawal. */
export const IdempotencyHeaders = z.object({
  'idempotency-key': extendApi(idempotencyKey, {
    description: `Unique key per logical request, ${idempotencyKeyRules} Missing -> 400 idempotency-key-missing.`,
  }),
});

/**
 * Optional Idempotency-Key (as Stripe accepts on every POST): createListing. Without it the request runs as
 * before; with it a retry (a lost response, a timeout) returns the first response instead of a second resource.
 */
export const OptionalIdempotencyHeaders = z.object({
  'idempotency-key': extendApi(idempotencyKey.optional(), {
    description: `Optional key per logical request, ${idempotencyKeyRules}`,
  }),
});

/** Who may call a route, read by the server's auth middleware: `role` = an operator role (access.ts `access.role`). */
export type RouteAuth = 'public' | 'user' | 'role';
