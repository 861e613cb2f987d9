import SwaggerParser from '@apidevtools/swagger-parser';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, buildSdkTypes, contractRoutes, serializeOpenApi } from '../scripts/openapi';
import { listingTransitions, orderTransitions, type RouteMetadata } from './index';

const doc = buildOpenApiDocument();
const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

describe('generated OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document (swagger-parser)', async () => {
    const api = await SwaggerParser.validate(structuredClone(doc) as never);
    expect((api as { openapi: string }).openapi).toBe('3.0.2');
  });

  it('has info, license, servers and the three security schemes', () => {
    expect(doc.info).toMatchObject({ title: 'Bazaar API', license: { name: 'Apache-2.0' } });
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'http://localhost:3000' })]);
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
    for (const [status, response] of Object.entries(op.responses as Record<string, { content?: Record<string, unknown> }>)) {
      const types = Object.keys(response.content ?? {});
      expect(types, status).toEqual([Number(status) >= 400 ? 'application/problem+json' : 'application/json']);
    }
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

  it('is what openapi.json and client-sdk/src/openapi-types.ts contain (run npm run openapi:generate)', async () => {
    const json = serializeOpenApi(doc);
    expect(await readFile(root('openapi.json'), 'utf8')).toBe(json);
    expect(await readFile(root('client-sdk/src/openapi-types.ts'), 'utf8')).toBe(await buildSdkTypes(JSON.parse(json)));
  });
});
