/**
 * Builds the OpenAPI 3.0 document of the Bazaar API from the ts-rest contract.
 * Used by generate-openapi.ts (CLI) and by the contract tests.
 */
import { createHash } from 'node:crypto';
import { createSignInMessage } from '@solana/wallet-standard-util';
import { isAppRouteOtherResponse, isZodType, type AppRoute, type AppRouter } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { addLinks } from './openapi-links.js';
import {
  API_PREFIX,
  CACHE_VARY,
  CACHEABLE_OPERATIONS,
  HTTP_CACHE_SENTENCE,
  PRIVATE_CACHE_CONTROL,
  PUBLIC_CACHE_CONTROL,
  commonProblems,
  contract,
  inheritedOpenApiMeta,
  listingActionsContract,
  orderActionsContract,
  MONEY_CAPABILITIES,
  Problem,
  problemTypes,
  problemTypeUri,
  PROBLEM_CONTENT_TYPE,
  type ProblemSlug,
  routeAccess,
  type RouteAccess,
  type RouteAccessRule,
  type RouteKey,
  type RouteMetadata,
  schemaTitle,
  type SignInInput,
} from '../src/index.js';
import type { z } from 'zod';

type Json = Record<string, any>;

export const OPENAPI_VERSION_NOTE = 'Generated from contract/src by contract/scripts/generate-openapi.ts; do not edit.';

const TAGS: Record<string, string> = {
  auth:
    'Wallet login with Sign In With Solana (SIWS): request_login gives the input to sign, verify_login the JWT. ' +
    'Authenticated routes take `Authorization: Bearer <JWT>`, an API key in `X-API-Key` (server-to-server), or ' +
    'the `bazaar_session` cookie (verify_login with set_cookie).',
  users:
    'The authenticated user and public profiles by wallet; operator roles (admin, moderator, arbiter), granted and ' +
    'revoked by admins.',
  listings: 'Service listings, each backed by a Token-2022 NFT minted on creation.',
  marketplace: 'Search and browse listings; configured categories and currencies.',
  orders: 'Orders paid into an on-chain escrow; deliver, confirm, dispute, refund, resolve; Solana Pay.',
  reviews: 'Reviews of sellers by buyers of completed orders.',
  wallet: 'Balances; deposits and withdrawals where custody is enabled.',
  events:
    'Every state change of your orders, listings, reviews, deposits, withdrawals and conversations, as pages or a ' +
    'live Server-Sent Events stream that resumes with Last-Event-ID.',
  webhooks: 'Endpoints that receive your events, signed per Standard Webhooks v1; delivery log and redelivery.',
  chat: 'Conversations between buyer and seller: order messages (the arbiter joins a dispute) and pre-order inquiries.',
  network: 'The Solana cluster the service runs on: RPC URL, explorer link templates, Solana Pay support.',
  tips:
    'Tips from an order\'s buyer to its seller after the order paid out: a plain token transfer the buyer\'s wallet ' +
    'signs (no escrow), confirmed from the chain\'s record of the transfer.',
  offers:
    'Custom offers: a seller prices work no listing describes for the buyer of a conversation (price, milestones, ' +
    'revisions, expiry); the buyer accepts it into an order with those terms, or declines; the seller withdraws.',
  reports:
    'Revenue reports: fee revenue, volume, payouts, refunds and tips per period (UTC day, ISO week, month) and ' +
    'currency, from what the chain paid (the money events); a seller\'s own, or the marketplace\'s and any seller\'s ' +
    'for an admin; JSON or CSV.',
  disputes:
    'The dispute desk: a dispute\'s structured reason, evidence from both parties (statements and files as links with their ' +
    'SHA-256) until a due date, the arbiter\'s queue of open disputes and her ruling with a written rationale.',
  audit:
    'The audit log (admins): every money-moving action and operator action with its actor, request id, transaction ' +
    'signature and before/after, hash-chained (RFC 8785 canonical JSON, SHA-256) so an edit or a deletion is detected ' +
    'by the verification.',
  moderation:
    'Reports of listings and users by any signed-in user; for moderators, the queue of open reports by target, ' +
    'takedowns and restores of listings (the seller appeals once), suspensions, bans and reinstatements of ' +
    'accounts. Every decision carries a reason the affected user receives in an event.',
  actions:
    'Solana Actions (blinks), served at the site root (not under /api/v1) while the operator turns them on ' +
    '(ACTIONS_ENABLED; `npm start` does): `/actions.json` and `/api/actions/...`. Anonymous by design (a wallet ' +
    'fetches them without a login; README "Share a listing as a blink"), rate-limited per client IP. Every answer ' +
    'carries `X-Action-Version` and `X-Blockchain-Ids` (CAIP-2 id of the cluster) and allows any origin; errors are ' +
    'the spec\'s `ActionError` (`{ message }`), not problem+json.',
  tokens:
    'Personal access tokens with scopes, for third-party apps acting for you. Each operation names the scopes a ' +
    'token needs in `x-bazaar-token-scopes`: `scope` for every request (null: no token), and `money` when a request ' +
    'can move your money without your wallet signing it (' +
    Object.entries(MONEY_CAPABILITIES)
      .map(([k, c]) => `\`${k}\` needs \`${c.scope}\``)
      .join(', ') +
    '); a token without them gets 403 insufficient-scope.',
};

/**
 * `x-bazaar-token-scopes` of an operation (contract routeAccess): `scope` every request needs (null: no
 * personal access token may call it) and, for a route whose request can move money, `money`: the
 * capability, its scope and `unless` (the body field and values that do not move money). Absent on public
 * routes. OpenAPI 3.0 allows scopes only on OAuth2 security schemes, hence an extension.
 */
function tokenScopesExtension(key: RouteKey): Json | undefined {
  const access: RouteAccess = routeAccess[key];
  if (access.scope === 'public') return undefined;
  return {
    scope: access.scope,
    ...(access.money
      ? {
          money: {
            capability: access.money.capability,
            scope: MONEY_CAPABILITIES[access.money.capability].scope,
            description: MONEY_CAPABILITIES[access.money.capability].description,
            ...(access.money.unless ? { unless: { ...access.money.unless, absent_or: [...access.money.unless.absent_or] } } : {}),
          },
        }
      : {}),
  };
}

/** A sentence for the description of an operation that can move money: which scope a token needs for it. */
function moneySentence(key: RouteKey): string {
  const access: RouteAccess = routeAccess[key];
  if (!access.money) return '';
  const c = MONEY_CAPABILITIES[access.money.capability];
  const when = access.money.unless
    ? ` when \`${access.money.unless.body_field}\` is given and not ${access.money.unless.absent_or.map((v) => `\`${v}\``).join(' or ')}`
    : '';
  const needs = c.scope === access.scope ? `\`${c.scope}\`` : `\`${c.scope}\` besides \`${access.scope}\``;
  return ` Moves money (${access.money.capability}: ${c.description}): a personal access token needs ${needs}${when} (else 403 insufficient-scope).`;
}

/**
 * `x-bazaar-auth` of an operation: the access level (`public`, `user`), or `role:<name>` for an operator route
 * (access.role: e.g. `role:arbiter`).
 */
export function authExtension(rule: RouteAccessRule): string {
  return rule.auth === 'role' ? `role:${rule.role}` : rule.auth;
}

/** Does PUBLIC_MARKETPLACE open the route (metadata.access)? */
const publicMarketplace = (rule: RouteAccessRule) => rule.auth === 'user' && rule.public_marketplace === true;

/**
 * Appended to the description of the operations PUBLIC_MARKETPLACE opens. Their `security` in the committed
 * document requires a credential (the default); a service running with PUBLIC_MARKETPLACE=true serves
 * /openapi.json with an empty requirement added to them (server/src/http/docs.ts), which OpenAPI reads as
 * "no credential needed".
 */
export const PUBLIC_MARKETPLACE_SENTENCE =
  ' Anonymous (no credential) when the service runs with PUBLIC_MARKETPLACE=true (`x-bazaar-public-marketplace`).';

/** Contract route -> its key (`group.route`). */
const routeKeyOf = new Map<AppRoute, RouteKey>();

/**
 * `servers` of the committed openapi.json: the local default (npm start). A running service serves
 * GET /openapi.json with its own origin instead (server/src/app.ts: PUBLIC_BASE_URL when configured,
 * else the origin of the request), so /docs "Try it out" calls the service that served the page.
 */
export const PLACEHOLDER_SERVER_URL = 'http://localhost:3000';
const PLACEHOLDER_SERVER_DESCRIPTION =
  `Placeholder: the local default of npm start. A running service serves /openapi.json with its own origin ` +
  `here (PUBLIC_BASE_URL, else the origin of the request). Paths start with ${API_PREFIX}, except the Solana ` +
  `Actions (tag actions: /actions.json and /api/actions/...).`;

const SUCCESS_DESCRIPTIONS: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };

/**
 * info.description: three lines on purpose. Generators such as orval copy it into the header of every
 * file they write (the former 40-line text landed in 79 files). Each detail lives once where it belongs:
 * authentication in the security schemes and the auth tag, problem types with their statuses in
 * `Problem.type`, units and formats on each field, rules in each operation's description.
 */
const DESCRIPTION = [
  'Marketplace backend for services paid in crypto: Token-2022 listings, orders paid into a Solana escrow program,',
  'Sign In With Solana. Errors are RFC 9457 problem details (types and statuses: `Problem.type`). Versioning:',
  '`/api/v1` changes are additive only (new routes, optional fields, response fields, enum values); ignore unknown fields.',
].join('\n');

/** `Problem.type`'s description: every problem type with its status and meaning. */
const PROBLEM_TYPE_DESCRIPTION = [
  '`https://bazaar.dev/problems/<slug>`. New types may be added within v1 (treat an unknown one by its `status`).',
  '',
  ...Object.entries(problemTypes).map(([slug, p]) => `- \`${slug}\` (${p.status}): ${p.description}`),
].join('\n');

/**
 * The wallet of the sign-in examples: an ed25519 key derived from a fixed, public seed, so the examples of
 * SignInInput and VerifyLoginBody are a real SIWS message and a valid signature of it.
 */
const exampleWallet = nacl.sign.keyPair.fromSeed(createHash('sha256').update('Bazaar OpenAPI example wallet').digest());

/** The sign_in_input request_login returns to the example wallet on the local default service. */
export const EXAMPLE_SIGN_IN_INPUT: SignInInput = {
  domain: 'localhost:3000',
  address: bs58.encode(exampleWallet.publicKey),
  statement: 'Sign in to Bazaar',
  uri: 'http://localhost:3000',
  version: '1',
  chainId: 'localnet',
  nonce: 'k3Jd9aQx7LmP2vRt',
  issuedAt: '2026-01-31T12:00:00.000Z',
  expirationTime: '2026-01-31T12:05:00.000Z',
};

/** verify_login's body for EXAMPLE_SIGN_IN_INPUT, signed by the example wallet. */
export function exampleVerifyLoginBody() {
  const message = createSignInMessage(EXAMPLE_SIGN_IN_INPUT);
  return {
    address: EXAMPLE_SIGN_IN_INPUT.address,
    signed_message: Buffer.from(message).toString('base64'),
    signature: Buffer.from(nacl.sign.detached(message, exampleWallet.secretKey)).toString('base64'),
  };
}

/** Example values of path parameters, for the `instance` of problem examples. */
const EXAMPLE_PATH_PARAMS: Record<string, string> = {
  order_id: '0d8f3c1e-7b2a-4c5d-9e6f-a1b2c3d4e5f6',
  listing_id: '0d8f3c1e-7b2a-4c5d-9e6f-a1b2c3d4e5f6',
  withdrawal_id: '0d8f3c1e-7b2a-4c5d-9e6f-a1b2c3d4e5f6',
  wallet: 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r',
  seller_wallet: 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r',
};
const EXAMPLE_REQUEST_ID = '5f0c6f0e-2d7a-4f4e-8a53-0c1b9b7e4d21';

/** Extension members of a few problem examples, as the server sends them. */
const EXAMPLE_EXTENSIONS: Partial<Record<ProblemSlug, Json>> = {
  'validation-error': {
    detail: 'body.price: Number must be greater than 0',
    errors: [{ path: 'body.price', message: 'Number must be greater than 0', code: 'too_small' }],
  },
  'login-failed': { detail: 'Login failed: nonce already used.' },
  'rate-limited': { detail: 'Too many requests; retry after the Retry-After seconds.' },
  'chain-transaction-failed': { detail: 'The escrow program refused the transaction: InvalidState.', program_error: 'InvalidState' },
};

/** A problem document as the server answers `slug` on `path` (a contract path, e.g. /api/v1/orders/:order_id). */
function problemExample(slug: ProblemSlug, path: string): Json {
  const p = problemTypes[slug];
  return {
    type: problemTypeUri(slug),
    title: p.title,
    status: p.status,
    detail: p.description,
    instance: path.startsWith('urn:') ? path : path.replace(/:(\w+)/g, (_, name: string) => EXAMPLE_PATH_PARAMS[name] ?? name),
    request_id: EXAMPLE_REQUEST_ID,
    ...EXAMPLE_EXTENSIONS[slug],
  };
}

/**
 * The problem slugs routes declare, each with the first route path declaring it (filled while the paths
 * are generated). Every error response refers to `#/components/examples/<slug>` of its slugs: one example
 * document per problem type, its `instance` a path of a route that answers it.
 */
const problemExamplePaths = new Map<ProblemSlug, string>();

function problemExampleComponents(): Json {
  const slugs = [...problemExamplePaths.keys()].sort();
  return Object.fromEntries(
    slugs.map((slug) => [
      slug,
      {
        summary: `${problemTypes[slug].title} (${problemTypes[slug].status})`,
        value: problemExample(slug, problemExamplePaths.get(slug)!),
      },
    ]),
  );
}

function flattenRoutes(router: AppRouter, tags: string[] = []): { key: string; tags: string[]; route: AppRoute }[] {
  const out: { key: string; tags: string[]; route: AppRoute }[] = [];
  for (const [key, value] of Object.entries(router)) {
    if (typeof (value as AppRoute).method === 'string' && typeof (value as AppRoute).path === 'string') {
      out.push({ key, tags, route: value as AppRoute });
    } else out.push(...flattenRoutes(value as AppRouter, [...tags, key]));
  }
  return out;
}

/** Every route of the contract as {operationId, tag, method, path, route}. */
export function contractRoutes() {
  return flattenRoutes(contract).map(({ key, tags, route }) => ({
    operationId: key,
    tag: tags[0]!,
    method: route.method,
    path: route.path,
    openapiPath: route.path.replace(/:(\w+)/g, '{$1}'),
    route,
  }));
}

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'JWT from verify_login (an API key is also accepted as Bearer token)',
  },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key for server-to-server use' },
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'bazaar_session',
    description: 'Session cookie set by verify_login with set_cookie: true',
  },
};
const AUTHENTICATED = [{ bearerAuth: [] }, { apiKeyHeader: [] }, { sessionCookie: [] }];

const slugsWithStatus = (status: number, slugs: readonly ProblemSlug[]) => slugs.filter((s) => problemTypes[s].status === status);

function problemDescription(status: number, slugs: readonly ProblemSlug[]): string {
  return slugsWithStatus(status, slugs)
    .map((s) => `${problemTypes[s].title} (\`${s}\`)`)
    .join('; ');
}

/** Schemas of non-JSON success bodies (text/event-stream), collected while mapping operations. */
const textComponents = new Map<string, Json>();

/**
 * The transport-layer responses every operation refers to (`#/components/responses/<name>`): statuses the
 * HTTP server answers before or without the route (contract `transportProblems`).
 */
const TRANSPORT_RESPONSES: Record<string, { name: string; slug: ProblemSlug }> = {
  '408': { name: 'RequestTimeout', slug: 'request-timeout' },
  '413': { name: 'PayloadTooLarge', slug: 'payload-too-large' },
  '414': { name: 'UriTooLong', slug: 'uri-too-long' },
  '431': { name: 'HeaderFieldsTooLarge', slug: 'header-fields-too-large' },
};
/** Problems answered before a request was read whole: their `instance` is `urn:uuid:<request_id>`. */
const BEFORE_PARSING: readonly ProblemSlug[] = ['request-timeout', 'header-fields-too-large'];

/** `components/responses`: one shared problem+json response per transport status (see TRANSPORT_RESPONSES). */
function transportResponseComponents(): Json {
  const out: Json = {};
  for (const { name, slug } of Object.values(TRANSPORT_RESPONSES)) {
    if (!problemExamplePaths.has(slug) || BEFORE_PARSING.includes(slug)) {
      problemExamplePaths.set(slug, BEFORE_PARSING.includes(slug) ? `urn:uuid:${EXAMPLE_REQUEST_ID}` : `${API_PREFIX}/events`);
    }
    out[name] = {
      description: `${problemTypes[slug].title} (\`${slug}\`): ${problemTypes[slug].description}`,
      content: {
        [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' }, examples: { [slug]: { $ref: `#/components/examples/${slug}` } } },
      },
    };
  }
  return out;
}

function operationMapper(operation: Json, route: AppRoute): Json {
  const meta = route.metadata as RouteMetadata;
  if (routeKeyOf.size === 0) for (const r of contractRoutes()) routeKeyOf.set(r.route, `${r.tag}.${r.operationId}` as RouteKey);
  const key = routeKeyOf.get(route);
  if (!key) throw new Error(`${route.method} ${route.path}: not a route of the contract`);
  const tokenScopes = tokenScopesExtension(key);
  const slugs = [...commonProblems, ...meta.problems];
  const responses: Json = {};
  for (const [status, response] of Object.entries(route.responses)) {
    if (isAppRouteOtherResponse(response) && Number(status) < 400) {
      // a success that is not JSON (the SSE stream): its content type with a string body
      // (named in components as `<Title>`, like every other success body)
      const body = response.body as z.ZodTypeAny;
      const title = schemaTitle(body);
      if (!title) throw new Error(`${route.path} ${status}: a non-JSON success body needs a named schema`);
      textComponents.set(title, { type: 'string', ...(body.description ? { description: body.description } : {}) });
      responses[status] = {
        description: SUCCESS_DESCRIPTIONS[status] ?? status,
        content: { [response.contentType]: { schema: { $ref: `#/components/schemas/${title}` } } },
      };
    } else if (isAppRouteOtherResponse(response) && TRANSPORT_RESPONSES[status]) {
      // shared: the transport layer answers it the same way on every operation
      responses[status] = { $ref: `#/components/responses/${TRANSPORT_RESPONSES[status].name}` };
    } else if (isAppRouteOtherResponse(response)) {
      const examples = Object.fromEntries(
        slugsWithStatus(Number(status), slugs).map((slug) => {
          if (!problemExamplePaths.has(slug)) problemExamplePaths.set(slug, route.path);
          return [slug, { $ref: `#/components/examples/${slug}` }];
        }),
      );
      responses[status] = {
        description: problemDescription(Number(status), slugs),
        content: { [response.contentType]: { schema: { $ref: '#/components/schemas/Problem' }, examples } },
      };
    } else {
      responses[status] = { ...operation.responses[status], description: SUCCESS_DESCRIPTIONS[status] ?? status };
    }
  }
  const parameters = (operation.parameters as Json[]).map((p) =>
    p.in === 'header' && p.name === 'idempotency-key'
      ? { ...p, name: 'Idempotency-Key', description: p.schema?.description, schema: { ...p.schema, description: undefined } }
      : p,
  );
  const out: Json = {
    operationId: operation.operationId,
    summary: operation.summary,
    description: operation.description + moneySentence(key) + (publicMarketplace(meta.access) ? PUBLIC_MARKETPLACE_SENTENCE : ''),
    tags: operation.tags,
    security: meta.access.auth === 'public' ? [] : AUTHENTICATED,
    'x-bazaar-auth': authExtension(meta.access),
    ...(publicMarketplace(meta.access) ? { 'x-bazaar-public-marketplace': true } : {}),
    ...(tokenScopes ? { 'x-bazaar-token-scopes': tokenScopes } : {}),
    ...(meta.actors ? { 'x-bazaar-actors': [...meta.actors] } : {}),
    ...(parameters.length ? { parameters } : {}),
  };
  if (operation.requestBody) {
    const content = operation.requestBody.content as Json;
    for (const media of Object.values(content)) {
      if (!media.schema?.$ref) throw new Error(`${operation.operationId}: inline request body; name its schema with named()`);
    }
    out.requestBody = { required: true, content };
  }
  for (const [status, response] of Object.entries(responses)) {
    if (status === '429' || status === '503') {
      response.headers = {
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } },
      };
    }
  }
  if (CACHEABLE_OPERATIONS.includes(operation.operationId)) {
    // issue 28 item 2 (contract/src/http-cache.ts): validators and cache headers on the 200, a 304 without body
    const cacheHeaders = {
      ETag: { description: 'Strong validator of the bytes sent (SHA-256 of the body, plus the content coding when compressed)', schema: { type: 'string' } },
      'Cache-Control': { description: `\`${PUBLIC_CACHE_CONTROL}\` without credentials; \`${PRIVATE_CACHE_CONTROL}\` with any credential`, schema: { type: 'string' } },
      Vary: { description: `${CACHE_VARY}, Accept-Encoding`, schema: { type: 'string' } },
    };
    responses['200'].headers = { ...(responses['200'].headers ?? {}), ...cacheHeaders };
    responses['304'] = { description: 'Not Modified: If-None-Match named the current ETag; no body', headers: cacheHeaders };
    out.parameters = [
      ...((out.parameters as Json[] | undefined) ?? []),
      { name: 'If-None-Match', in: 'header', required: false, description: 'ETag(s) of a representation the client holds (RFC 9110 §13.1.2)', schema: { type: 'string' } },
    ];
    out.description += HTTP_CACHE_SENTENCE;
  }
  if (operation.operationId === 'verifyLogin') {
    responses['200'].headers = {
      'Set-Cookie': {
        description: 'bazaar_session=<JWT>; HttpOnly; Secure; SameSite=Strict; Path=/ (only when set_cookie is true)',
        schema: { type: 'string' },
      },
    };
  }
  out.responses = responses;
  return out;
}

/** JSON schema components of the problem document (Problem, ProblemFieldError). */
function problemComponents(): Json {
  const doc = generateOpenApi(
    { problem: { method: 'GET', path: '/problem', responses: { 200: Problem } } } as AppRouter,
    { info: { title: 'problem', version: '0' } },
  );
  return (doc.components?.schemas ?? {}) as Json;
}

/**
 * @anatine/zod-openapi emits a few OpenAPI 3.1 forms; rewrite them to OpenAPI 3.0:
 * numeric exclusiveMinimum/exclusiveMaximum -> minimum/maximum + boolean flag, and
 * `nullable` next to a lone `allOf: [$ref]` gets the `type` of the referenced schema.
 */
function normalizeTo30(node: unknown, schemas: Json): void {
  if (Array.isArray(node)) return node.forEach((n) => normalizeTo30(n, schemas));
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  if (typeof o.exclusiveMinimum === 'number') {
    o.minimum = o.exclusiveMinimum;
    o.exclusiveMinimum = true;
  }
  if (typeof o.exclusiveMaximum === 'number') {
    o.maximum = o.exclusiveMaximum;
    o.exclusiveMaximum = true;
  }
  if (o.nullable === true && o.type === undefined && Array.isArray(o.allOf) && o.allOf.length === 1) {
    const ref = String(o.allOf[0].$ref ?? '').replace('#/components/schemas/', '');
    const type = schemas[ref]?.type;
    if (type) Object.assign(o, { type, nullable: true, allOf: o.allOf });
  }
  for (const value of Object.values(o)) normalizeTo30(value, schemas);
}

/**
 * A `discriminator` whose `oneOf` members each stand for several values of the property (e.g. Event:
 * ListingEvent covers listing.created, listing.updated, ...) needs an explicit `mapping` (OpenAPI 3.0.3
 * section 4.7.25: without one a value must equal a component name, so validators and generated clients
 * refuse every real event). Adds the mapping from each member's `enum`/single value of the property;
 * drops the discriminator when a member does not list its values.
 */
function discriminatorMappings(node: unknown, schemas: Json): void {
  if (Array.isArray(node)) return node.forEach((n) => discriminatorMappings(n, schemas));
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  const prop = o.discriminator?.propertyName;
  if (typeof prop === 'string' && Array.isArray(o.oneOf) && !o.discriminator.mapping) {
    const mapping: Record<string, string> = {};
    let complete = true;
    for (const member of o.oneOf as Json[]) {
      const ref = typeof member.$ref === 'string' ? member.$ref : undefined;
      const target = ref ? schemas[ref.replace('#/components/schemas/', '')] : undefined;
      const values = target?.properties?.[prop]?.enum as unknown[] | undefined;
      if (!ref || !values?.length) {
        complete = false;
        break;
      }
      for (const v of values) mapping[String(v)] = ref;
    }
    if (complete) o.discriminator = { ...o.discriminator, mapping };
    else delete o.discriminator;
  }
  for (const value of Object.values(o)) discriminatorMappings(value, schemas);
}

/**
 * Give every zod schema reachable from `root` that has no OpenAPI metadata of its own the metadata it
 * inherited from the schema it was copied from (see extendApi in contract/src/common.ts): without it
 * `Pubkey.describe('...')` would lose Pubkey's example.
 */
function applyInheritedMeta(root: unknown): void {
  const seen = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isZodType(node)) return Object.values(node).forEach(visit);
    const schema = node as unknown as { _def: Json; metaOpenApi?: Json };
    if (!schema.metaOpenApi) {
      const inherited = inheritedOpenApiMeta(node as never);
      if (inherited && Object.keys(inherited).length) schema.metaOpenApi = inherited;
    }
    for (const [key, value] of Object.entries(schema._def)) {
      if (key === 'shape' && typeof value === 'function') visit(Object.values(value()));
      else if (typeof value === 'object') visit(value);
    }
  };
  visit(root);
}

/**
 * A component marked `x-bazaar-extends: Base` (namedExtension) as `allOf: [{$ref: Base}, {its own
 * properties}]`. Its inherited properties must be exactly Base's (else the contract changed them: error).
 */
function asExtension(name: string, schema: Json, schemas: Json): Json {
  const baseName = schema['x-bazaar-extends'];
  if (!baseName) return schema;
  const base = schemas[baseName];
  if (!base) throw new Error(`${name} extends ${baseName}, which is not a component`);
  const own: Json = {};
  for (const [key, value] of Object.entries(schema.properties as Json)) {
    if (!(key in base.properties)) own[key] = value;
    else if (JSON.stringify(value) !== JSON.stringify(base.properties[key])) {
      throw new Error(`${name}.${key} differs from ${baseName}.${key}; an extension may only add properties`);
    }
  }
  const required = (schema.required ?? []).filter((key: string) => key in own);
  const { title, description } = schema;
  return {
    title,
    ...(description ? { description } : {}),
    allOf: [
      { $ref: `#/components/schemas/${baseName}` },
      { type: 'object', properties: own, ...(required.length ? { required } : {}) },
    ],
  };
}

const sortKeys = (o: Json): Json => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));

/** Headers every Solana Actions answer carries (http/actions/common.ts actionHeaders). */
const ACTION_RESPONSE_HEADERS: Json = {
  'X-Action-Version': { description: 'Solana Actions spec version served (2.4)', schema: { type: 'string' } },
  'X-Blockchain-Ids': { description: 'CAIP-2 id of the service\'s cluster, e.g. `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1` (devnet)', schema: { type: 'string' } },
  'Access-Control-Allow-Origin': { description: '`*`: any origin, no credentials (spec)', schema: { type: 'string' } },
};

const ACTION_ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'Invalid path, query or body (`{ message }`)',
  '403': 'Not allowed for this account (`{ message }`)',
  '404': 'Unknown, unlisted, or the actions are off (ACTIONS_ENABLED) (`{ message }`)',
  '409': 'Not possible now: own listing, sold, reserved, taken down, insufficient funds, too many unpaid orders (`{ message }`)',
  '429': 'Per-IP actions limit (ACTIONS_RATE_LIMIT_PER_MINUTE) or the network\'s holds limit (`{ message }`, Retry-After)',
  '503': 'The chain or the escrow program is unavailable (`{ message }`, Retry-After)',
};

/** An operation of the actions contract (tag `actions`, public, the spec's headers and ActionError). */
function actionsOperationMapper(operation: Json): Json {
  const responses: Json = {};
  for (const [status, response] of Object.entries(operation.responses as Json)) {
    const headers = status === '429' || status === '503'
      ? { ...ACTION_RESPONSE_HEADERS, 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } }
      : ACTION_RESPONSE_HEADERS;
    responses[status] = { ...response, description: SUCCESS_DESCRIPTIONS[status] ?? ACTION_ERROR_DESCRIPTIONS[status] ?? status, headers };
  }
  // what the HTTP server answers before any route (problem+json, as for every /api/v1 operation): a request too
  // slow, too large (with a body), with a too long target or too large headers
  for (const [status, { name }] of Object.entries(TRANSPORT_RESPONSES)) {
    if (status === '413' && !operation.requestBody) continue;
    responses[status] ??= { $ref: `#/components/responses/${name}` };
  }
  const parameters = (operation.parameters ?? []) as Json[];
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    description: operation.description,
    tags: ['actions'],
    security: [],
    'x-bazaar-auth': 'public',
    ...(parameters.length ? { parameters } : {}),
    ...(operation.requestBody ? { requestBody: { required: true, content: operation.requestBody.content } } : {}),
    responses,
  };
}

/** The actions contract's paths and schemas (mounted at the site root; see the `actions` tag). */
function actionsDocument(): { paths: Json; schemas: Json } {
  applyInheritedMeta(listingActionsContract);
  applyInheritedMeta(orderActionsContract);
  const doc = generateOpenApi(
    { actions: { ...listingActionsContract, ...orderActionsContract } } as AppRouter,
    { info: { title: 'actions', version: '0' } },
    { setOperationId: true, operationMapper: actionsOperationMapper as never },
  ) as Json;
  return { paths: doc.paths, schemas: (doc.components?.schemas ?? {}) as Json };
}

/** The OpenAPI 3.0 document of the whole contract. */
export function buildOpenApiDocument(): Json {
  applyInheritedMeta(contract);
  problemExamplePaths.clear();
  const generated = generateOpenApi(
    contract,
    { info: { title: 'Bazaar API', version: '1.0.0' } },
    { setOperationId: true, operationMapper: operationMapper as never },
  ) as Json;

  const actions = actionsDocument();
  for (const name of Object.keys(actions.schemas)) {
    if (generated.components?.schemas?.[name]) throw new Error(`schema ${name} is both an API and an actions component`);
  }
  const transportResponses = transportResponseComponents();
  const schemas = sortKeys({ ...(generated.components?.schemas ?? {}), ...actions.schemas, ...problemComponents(), ...Object.fromEntries(textComponents) });
  schemas.Problem.properties.type.description = PROBLEM_TYPE_DESCRIPTION;
  schemas.SignInInput.example = EXAMPLE_SIGN_IN_INPUT;
  schemas.VerifyLoginBody.example = exampleVerifyLoginBody();
  for (const name of Object.keys(schemas)) schemas[name] = asExtension(name, schemas[name], schemas);

  normalizeTo30(generated.paths, schemas);
  normalizeTo30(schemas, schemas);
  discriminatorMappings(schemas, schemas);
  discriminatorMappings(generated.paths, schemas);
  addLinks(generated.paths, schemas);
  // the actions after the links: their listing_id is a path of the site root, not an API operation to link to
  normalizeTo30(actions.paths, schemas);
  generated.paths = { ...generated.paths, ...actions.paths };

  return {
    openapi: generated.openapi,
    info: {
      title: 'Bazaar API',
      version: '1.0.0',
      description: DESCRIPTION,
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    servers: [{ url: PLACEHOLDER_SERVER_URL, description: PLACEHOLDER_SERVER_DESCRIPTION }],
    security: AUTHENTICATED,
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: generated.paths,
    components: { schemas, responses: transportResponses, examples: problemExampleComponents(), securitySchemes: SECURITY_SCHEMES },
  };
}

/** Canonical file text: 2-space JSON with a trailing newline. */
export const serializeOpenApi = (doc: Json): string => JSON.stringify(doc, null, 2) + '\n';

export { PROBLEM_CONTENT_TYPE };
