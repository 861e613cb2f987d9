/**
 * Builds the OpenAPI 3.0 document of the Bazaar API from the ts-rest contract, and the raw
 * TypeScript types of client-sdk/src/openapi-types.ts from that document.
 * Used by generate-openapi.ts (CLI) and by the contract tests.
 */
import { isAppRouteOtherResponse, type AppRoute, type AppRouter } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import openapiTS, { astToString } from 'openapi-typescript';
import {
  API_PREFIX,
  commonProblems,
  contract,
  Problem,
  problemTypes,
  problemTypeUri,
  PROBLEM_CONTENT_TYPE,
  type ProblemSlug,
  type RouteMetadata,
} from '../src/index';

type Json = Record<string, any>;

export const OPENAPI_VERSION_NOTE = 'Generated from contract/src by contract/scripts/generate-openapi.ts; do not edit.';

const TAGS: Record<string, string> = {
  auth: 'Wallet login with Sign In With Solana (SIWS): nonce, signed message, JWT or session cookie.',
  users: 'The authenticated user and public profiles by wallet.',
  listings: 'Service listings, each backed by a Token-2022 NFT minted on creation.',
  marketplace: 'Search and browse listings; configured categories and currencies.',
  orders: 'Orders paid into an on-chain escrow; deliver, confirm, dispute, refund, resolve; Solana Pay.',
  reviews: 'Reviews of sellers by buyers of completed orders.',
  wallet: 'Balances; deposits and withdrawals where custody is enabled.',
};

const SUCCESS_DESCRIPTIONS: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };

const DESCRIPTION = [
  'Marketplace backend for services paid in crypto: listings backed by Token-2022 NFTs, orders paid into',
  'a Solana escrow program, Sign In With Solana login.',
  '',
  '**Authentication**: `Authorization: Bearer <JWT>` from `POST /api/v1/auth/verify_login`, an API key in',
  '`X-API-Key` (or as Bearer), or the `bazaar_session` cookie. Public routes: request_login, verify_login,',
  'the listing token metadata JSON and the Solana Pay endpoints.',
  '',
  '**Errors**: RFC 9457 problem details (`application/problem+json`); `type` is',
  '`https://bazaar.dev/problems/<slug>`:',
  '',
  ...Object.entries(problemTypes).map(([slug, p]) => `- \`${slug}\` (${p.status}): ${p.description}`),
  '',
  '**Conventions**: snake_case JSON; token amounts as `*_base_units` u64 decimal strings next to UI numbers;',
  'ISO-8601 UTC timestamps; cursor pagination (`limit` 1..100, default 20, `cursor` -> `next_cursor`).',
  'Mutations that create money movements (`createOrder`, `createWithdrawal`) require `Idempotency-Key`.',
  '',
  '**Limits**: JSON bodies up to 100 kB (413 payload-too-large), `application/json` only (415); rate limits are',
  'server configuration and answer 429 rate-limited with `Retry-After` (seconds). Every response carries',
  '`X-Request-Id`, repeated as `request_id` in problem documents. Request line and headers up to 16 kB',
  '(431); headers within 10 s and the whole request within 30 s of the connection (408); idle keep-alive',
  'connections close after 5 s (server defaults). A dependency that is down or timed out (database, pool,',
  'statement or lock timeout) answers 503 service-unavailable with `Retry-After`; an undeclared method on a',
  'known path answers 405 with `Allow`.',
  '',
  '**Versioning**: the major version is the path prefix `/api/v1`. Within v1 changes are additive only (new',
  'routes, new optional request fields, new response fields, new problem slugs, new enum values in responses);',
  'clients must ignore unknown fields. Breaking changes ship as `/api/v2`, with v1 kept for at least 6 months',
  'after a `Deprecation` header announces its end.',
  '',
  '**Not in v1**: webhooks/notifications (poll `GET /api/v1/orders/{order_id}`), chat between users.',
].join('\n');

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

function problemDescription(status: number, slugs: readonly ProblemSlug[]): string {
  const matching = slugs.filter((s) => problemTypes[s].status === status);
  return matching.map((s) => `${problemTypes[s].title} (\`${s}\`)`).join('; ');
}

function operationMapper(operation: Json, route: AppRoute): Json {
  const meta = route.metadata as RouteMetadata;
  const slugs = [...commonProblems, ...meta.problems];
  const responses: Json = {};
  for (const [status, response] of Object.entries(route.responses)) {
    if (isAppRouteOtherResponse(response)) {
      responses[status] = {
        description: problemDescription(Number(status), slugs),
        content: { [response.contentType]: { schema: { $ref: '#/components/schemas/Problem' } } },
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
    description: operation.description,
    tags: operation.tags,
    security: meta.auth === 'public' ? [] : AUTHENTICATED,
    'x-bazaar-auth': meta.auth,
    ...(meta.actors ? { 'x-bazaar-actors': [...meta.actors] } : {}),
    ...(parameters.length ? { parameters } : {}),
  };
  if (operation.requestBody) {
    out.requestBody = { required: true, content: operation.requestBody.content };
  }
  for (const [status, response] of Object.entries(responses)) {
    if (status === '429' || status === '503') {
      response.headers = {
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } },
      };
    }
  }
  if (operation.operationId === 'verifyLogin') {
    responses['200'].headers = {
      'Set-Cookie': {
        description: 'bazaar_session=<JWT>; HttpOnly; Secure; SameSite=Lax; Path=/ (only when set_cookie is true)',
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

const sortKeys = (o: Json): Json => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));

/** The OpenAPI 3.0 document of the whole contract. */
export function buildOpenApiDocument(): Json {
  const generated = generateOpenApi(
    contract,
    { info: { title: 'Bazaar API', version: '1.0.0' } },
    { setOperationId: true, operationMapper: operationMapper as never },
  ) as Json;

  const schemas = sortKeys({ ...(generated.components?.schemas ?? {}), ...problemComponents() });
  const problemType = schemas.Problem?.properties?.type;
  if (problemType) problemType.example = problemTypeUri('not-found');

  normalizeTo30(generated.paths, schemas);
  normalizeTo30(schemas, schemas);

  return {
    openapi: generated.openapi,
    info: {
      title: 'Bazaar API',
      version: '1.0.0',
      description: DESCRIPTION,
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    servers: [{ url: 'http://localhost:3000', description: `Local development (paths start with ${API_PREFIX})` }],
    security: AUTHENTICATED,
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: generated.paths,
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
  };
}

/** Canonical file text: 2-space JSON with a trailing newline. */
export const serializeOpenApi = (doc: Json): string => JSON.stringify(doc, null, 2) + '\n';

export const SDK_TYPES_HEADER =
  '/* eslint-disable */\n// Generated by `npm run sdk:types` (openapi-typescript) from openapi.json; do not edit.\n\n';

/** client-sdk/src/openapi-types.ts text for an OpenAPI document. */
export async function buildSdkTypes(doc: Json): Promise<string> {
  const ast = await openapiTS(doc as never, { alphabetize: false });
  return SDK_TYPES_HEADER + astToString(ast);
}

export { PROBLEM_CONTENT_TYPE };
