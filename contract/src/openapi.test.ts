import SwaggerParser from '@apidevtools/swagger-parser';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, contractRoutes, serializeOpenApi } from '../scripts/openapi.js';
import { commonProblems, listingTransitions, orderTransitions, Problem, problemTypes, problemTypeUri, type ProblemSlug, type RouteMetadata } from './index.js';

const doc = buildOpenApiDocument();
const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
/** The operations whose success is not JSON, and its one content type (every other success is application/json). */
const NON_JSON_SUCCESS: Record<string, string> = {
  streamEvents: 'text/event-stream',
  getMyRevenueReportCsv: 'text/csv',
  getRevenueReportCsv: 'text/csv',
};

describe('generated OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document (swagger-parser)', async () => {
    const api = await SwaggerParser.validate(structuredClone(doc) as never);
    expect((api as { openapi: string }).openapi).toBe('3.0.2');
  });

  it('has info, license, servers and the three security schemes', () => {
    expect(doc.info).toMatchObject({ title: 'Bazaar API', license: { name: 'Apache-2.0' } });
    // a documented placeholder: the running service serves its own origin (server/src/app.ts)
    expect(doc.servers).toEqual([
      { url: 'http://localhost:3000', description: expect.stringContaining('A running service serves /openapi.json with its own origin') },
    ]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKeyHeader', 'bearerAuth', 'sessionCookie']);
  });

  it.each(contractRoutes())('has $operationId at $method $openapiPath', ({ operationId, tag, method, openapiPath, route }) => {
    const op = doc.paths[openapiPath]?.[method.toLowerCase()];
    expect(op, `${method} ${openapiPath}`).toBeDefined();
    expect(op.operationId).toBe(operationId);
    expect(op.tags).toEqual([tag]);
    expect(op.summary).toBe(route.summary);
    const auth = (route.metadata as RouteMetadata).auth;
    if (auth === 'public') expect(op.security).toEqual([]);
    else expect(op.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }, { sessionCookie: [] }]);
    // PUBLIC_MARKETPLACE: marked per operation from metadata.access, nothing else
    const access = (route.metadata as RouteMetadata).access;
    const opened = access.auth === 'user' && access.public_marketplace === true;
    expect(op['x-bazaar-public-marketplace'], operationId).toBe(opened ? true : undefined);
    expect(op['x-bazaar-auth'], operationId).toBe(access.auth === 'role' ? `role:${access.role}` : access.auth);
    for (const [status, entry] of Object.entries(op.responses as Record<string, { $ref?: string; content?: Record<string, unknown> }>)) {
      const response = entry.$ref ? doc.components.responses[entry.$ref.replace('#/components/responses/', '')] : entry;
      const types = Object.keys(response.content ?? {});
      // the successes that are not JSON: the SSE stream and the revenue reports' CSV
      const success = NON_JSON_SUCCESS[operationId] ?? 'application/json';
      // 304 Not Modified (the cacheable reads' If-None-Match) has no body (RFC 9110 §15.4.5)
      if (status === '304') expect(types, status).toEqual([]);
      else expect(types, status).toEqual([Number(status) >= 400 ? 'application/problem+json' : success]);
    }
  });

  it('names the operator role of operator routes in x-bazaar-auth (role:<name>): the arbiter resolves, admins grant roles', () => {
    expect(doc.paths['/api/v1/orders/{order_id}/resolve'].post['x-bazaar-auth']).toBe('role:arbiter');
    expect(doc.paths['/api/v1/orders/{order_id}/milestones/{index}/resolve'].post['x-bazaar-auth']).toBe('role:arbiter');
    expect(doc.paths['/api/v1/admin/users/{wallet}/roles/{role}'].put['x-bazaar-auth']).toBe('role:admin');
    expect(doc.paths['/api/v1/orders/{order_id}/resolve'].post['x-bazaar-token-scopes']).toEqual({ scope: 'disputes:resolve' });
    expect(doc.paths['/api/v1/admin/users/{wallet}/roles/{role}'].delete['x-bazaar-token-scopes']).toEqual({ scope: null });
  });

  it('documents the Idempotency-Key header on createOrder and createWithdrawal', () => {
    const createOrder = doc.paths['/api/v1/orders'].post;
    expect(createOrder.parameters).toEqual([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true })]);
    expect(doc.paths['/api/v1/wallet/withdraw'].post.parameters[0].name).toBe('Idempotency-Key');
  });

  it('publishes the order lifecycle and listing state tables on the Order and Listing schemas', () => {
    const schemas = doc.components.schemas as Record<string, Record<string, unknown>>;
    expect(schemas.Order['x-order-transitions']).toEqual(JSON.parse(JSON.stringify(orderTransitions)));
    expect(schemas.Order.description).toContain('| in_progress | refund | refunded | seller, buyer, system | buyer: after delivery_deadline (chain clock');
    expect(schemas.Listing['x-listing-transitions']).toEqual(JSON.parse(JSON.stringify(listingTransitions)));
  });

  it('is what openapi.json contains (run npm run openapi:generate)', async () => {
    const json = serializeOpenApi(doc);
    expect(await readFile(root('openapi.json'), 'utf8')).toBe(json);
  });
});

type Json = Record<string, any>;
const operations = () =>
  contractRoutes().map((r) => ({ ...r, op: doc.paths[r.openapiPath][r.method.toLowerCase()] as Json }));
const schemas = doc.components.schemas as Record<string, Json>;

describe('OpenAPI document for client generators', () => {
  it('names every request body and every success response in components (no inline schemas)', () => {
    for (const { operationId, op } of operations()) {
      for (const media of Object.values((op.requestBody?.content ?? {}) as Json)) {
        expect(media.schema, `${operationId} request body`).toEqual({ $ref: expect.stringMatching(/^#\/components\/schemas\/\w+Body$/) });
      }
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const media of Object.values((response.content ?? {}) as Json)) {
          expect(media.schema, `${operationId} ${status}`).toEqual({ $ref: expect.stringMatching(/^#\/components\/schemas\/\w+$/) });
        }
      }
    }
  });

  it('has no component named like the types generators derive from an operationId (no RequestLoginResponse2)', () => {
    const derived = operations().flatMap(({ operationId }) =>
      ['Data', 'Error', 'Errors', 'Response', 'Responses', 'Body', 'Params'].map(
        (suffix) => operationId[0]!.toUpperCase() + operationId.slice(1) + suffix,
      ),
    );
    // request bodies may be named <OperationId>Body: orval names inline bodies so, hey-api uses <OperationId>Data
    const clashes = derived.filter((name) => name in schemas && !name.endsWith('Body'));
    expect(clashes).toEqual([]);
  });

  it('describes OrderWithPayment (createOrder 201) as Order plus payment, not a copy of Order', () => {
    expect(doc.paths['/api/v1/orders'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/OrderWithPayment',
    });
    const { allOf, properties } = schemas.OrderWithPayment!;
    expect(properties).toBeUndefined();
    expect(allOf[0]).toEqual({ $ref: '#/components/schemas/Order' });
    expect(Object.keys(allOf[1].properties)).toEqual(['payment']);
    expect(allOf[1].required).toEqual(['payment']);
    const fresh = schemas.FreshOrderPayment!;
    expect(fresh.allOf[0]).toEqual({ $ref: '#/components/schemas/OrderPayment' });
    expect(Object.keys(fresh.allOf[1].properties).sort()).toEqual(['order_id', 'payment_expires_at']);
  });

  it('gives Problem.type the enum of the documented problem types, with their statuses in its description', () => {
    const type = schemas.Problem!.properties.type;
    expect(type.enum).toEqual(Object.keys(problemTypes).map((slug) => problemTypeUri(slug as ProblemSlug)));
    for (const [slug, p] of Object.entries(problemTypes)) expect(type.description).toContain(`\`${slug}\` (${p.status}): ${p.description}`);
  });

  it('keeps the API description short and in info only (generators copy info.description into every file)', () => {
    expect(doc.info.description.split('\n').length).toBeLessThanOrEqual(3);
    const json = JSON.stringify(doc);
    expect(json.split(JSON.stringify(doc.info.description).slice(1, -1)).length - 1).toBe(1);
  });

  it('documents the transport-layer statuses on every operation, as shared problem+json responses (issue 20 item 16)', () => {
    const responses = doc.components.responses as Record<string, Json>;
    for (const { operationId, op } of operations()) {
      const r = op.responses as Json;
      for (const status of ['408', '413', '414', '429', '431', '503']) expect(r[status], `${operationId} ${status}`).toBeDefined();
      expect(r['408'], operationId).toEqual({ $ref: '#/components/responses/RequestTimeout' });
      expect(r['413'], operationId).toEqual({ $ref: '#/components/responses/PayloadTooLarge' });
      expect(r['414'], operationId).toEqual({ $ref: '#/components/responses/UriTooLong' });
      expect(r['431'], operationId).toEqual({ $ref: '#/components/responses/HeaderFieldsTooLarge' });
      for (const status of ['429', '503']) expect(Object.keys(r[status].content), `${operationId} ${status}`).toEqual(['application/problem+json']);
    }
    for (const name of ['RequestTimeout', 'PayloadTooLarge', 'UriTooLong', 'HeaderFieldsTooLarge']) {
      expect(responses[name]!.content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
    }
    const examples = doc.components.examples as Record<string, { value: Json }>;
    expect(examples['header-fields-too-large']!.value.instance).toBe('urn:uuid:5f0c6f0e-2d7a-4f4e-8a53-0c1b9b7e4d21');
  });

  it('gives every error response an example of each of its problem types, with its status', () => {
    const examples = doc.components.examples as Record<string, { value: Json }>;
    for (const { operationId, op, route } of operations()) {
      const slugs = [...commonProblems, ...(route.metadata as RouteMetadata).problems];
      for (const [status, entry] of Object.entries(op.responses as Json)) {
        if (Number(status) < 400) continue;
        const response = entry.$ref ? doc.components.responses[entry.$ref.replace('#/components/responses/', '')] : entry;
        const media = response.content['application/problem+json'];
        const expected = slugs.filter((slug) => problemTypes[slug].status === Number(status));
        expect(Object.keys(media.examples).sort(), `${operationId} ${status}`).toEqual([...new Set(expected)].sort());
        for (const [slug, ref] of Object.entries(media.examples as Record<string, { $ref: string }>)) {
          const value = examples[ref.$ref.replace('#/components/examples/', '')]!.value;
          expect(value, `${operationId} ${status} ${slug}`).toMatchObject({ type: problemTypeUri(slug as ProblemSlug), status: Number(status) });
          expect(Problem.safeParse(value).success, `${slug} example is a Problem`).toBe(true);
        }
      }
    }
  });
});


describe('discriminators', () => {
  it('every discriminator maps each value its members declare (Event: every event type) to that member', () => {
    const schemas = doc.components.schemas as Record<string, any>;
    const found: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) return node.forEach((n) => walk(n, where));
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, any>;
      if (o.discriminator) {
        found.push(where);
        const prop = o.discriminator.propertyName;
        const expected: Record<string, string> = {};
        for (const m of o.oneOf) {
          for (const v of schemas[m.$ref.replace('#/components/schemas/', '')].properties[prop].enum) expected[v] = m.$ref;
        }
        expect(o.discriminator.mapping, where).toEqual(expected);
      }
      for (const [k, v] of Object.entries(o)) walk(v, `${where}/${k}`);
    };
    walk(doc, '#');
    expect(found).toContain('#/components/schemas/Event');
    expect(Object.keys(schemas.Event.discriminator.mapping)).toEqual(expect.arrayContaining(['order.funded', 'listing.created', 'message.created']));
  });
});
