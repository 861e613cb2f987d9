/**
 * OpenAPI links of the generated document (contract/scripts/openapi-links.ts): the ids a response returns lead
 * to the operations that take them, so a property-based tester (.ci/schemathesis, stateful phase) holds real
 * listing, order and withdrawal ids and reaches the money paths instead of answering 404 forever.
 */
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../scripts/openapi.js';

type Json = Record<string, any>;
const doc = buildOpenApiDocument();

const ops = new Map<string, { path: string; op: Json }>();
for (const [path, item] of Object.entries(doc.paths as Json)) {
  for (const [method, op] of Object.entries(item as Json)) if ((op as Json)?.operationId) ops.set((op as Json).operationId, { path, op: op as Json });
}
const linksOf = (operationId: string, status: string): Json => ops.get(operationId)!.op.responses[status]?.links ?? {};
const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** The schema at a JSON pointer of a response schema (through $ref, allOf and array items), or undefined. */
function schemaAt(schema: Json | undefined, pointer: string): Json | undefined {
  const deref = (n: Json | undefined): Json | undefined => {
    if (n?.$ref) return deref(doc.components.schemas[String(n.$ref).split('/').pop()!]);
    if (n?.allOf) return { properties: Object.assign({}, ...n.allOf.map((p: Json) => deref(p)?.properties ?? {})) };
    return n;
  };
  let node = deref(schema);
  for (const key of pointer.split('/').slice(1)) node = deref(/^\d+$/.test(key) ? node?.items : node?.properties?.[key]);
  return node;
}

describe('OpenAPI links', () => {
  it('lead from a new listing to ordering it, and from an order to every action on it', () => {
    expect(linksOf('createListing', '201').createOrder).toMatchObject({ operationId: 'createOrder', requestBody: { listing_id: '$response.body#/listing_id' } });
    expect(linksOf('listListings', '200').createOrder).toMatchObject({ requestBody: { listing_id: '$response.body#/data/0/listing_id' } });
    const actions = ['getOrder', 'submitOrderTransaction', 'createOrderPayment', 'deliverOrder', 'confirmOrder', 'disputeOrder', 'refundOrder', 'resolveDispute', 'createReview', 'listOrderMessages', 'sendOrderMessage'];
    for (const action of actions) {
      expect(linksOf('createOrder', '201')[action], action).toMatchObject({ operationId: action, parameters: { 'path.order_id': '$response.body#/order_id' } });
      expect(linksOf('listOrders', '200')[action], action).toMatchObject({ parameters: { 'path.order_id': '$response.body#/data/0/order_id' } });
    }
    expect(linksOf('sendOrderMessage', '201').reportMessage).toMatchObject({ parameters: { 'path.message_id': '$response.body#/message_id' } });
  });

  it('lead from a deposit to a withdrawal in its currency, and from a withdrawal to reading it', () => {
    expect(linksOf('createDeposit', '200').createWithdrawal).toMatchObject({ requestBody: { currency: '$response.body#/currency' } });
    expect(linksOf('createWithdrawal', '202').getWithdrawal).toMatchObject({ parameters: { 'path.withdrawal_id': '$response.body#/withdrawal_id' } });
  });

  it('name existing operations, give every path parameter of the target, and point at fields the response has', () => {
    let count = 0;
    for (const [operationId, { path, op }] of ops) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const [name, link] of Object.entries(((response as Json).links ?? {}) as Json)) {
          count++;
          const where = `${operationId} ${status} -> ${name}`;
          const target = ops.get(link.operationId);
          expect(target, where).toBeDefined();
          expect(Object.keys(link.parameters ?? {}).sort(), where).toEqual(pathParams(target!.path).map((p) => `path.${p}`).sort());
          const expressions = [...Object.values(link.parameters ?? {}), ...Object.values(link.requestBody ?? {})] as string[];
          for (const e of expressions) {
            if (e.startsWith('$request.path.')) expect(pathParams(path), where).toContain(e.slice('$request.path.'.length));
            else {
              expect(e, where).toMatch(/^\$response\.body#\//);
              expect(schemaAt((response as Json).content['application/json'].schema, e.slice('$response.body#'.length)), `${where}: ${e}`).toBeDefined();
            }
          }
          // a body field a link fills is a field of the target's request body
          for (const field of Object.keys(link.requestBody ?? {})) {
            expect(schemaAt(target!.op.requestBody.content['application/json'].schema, `/${field}`), `${where}: body.${field}`).toBeDefined();
          }
        }
      }
    }
    expect(count).toBeGreaterThan(50);
  });

  it('reach every operation that takes an id in its path (none is left to guessing ids)', () => {
    const targets = new Set<string>();
    for (const { op } of ops.values()) {
      for (const response of Object.values(op.responses as Json)) for (const link of Object.values(((response as Json).links ?? {}) as Json)) targets.add(link.operationId);
    }
    // the Solana Actions (tag actions, site root) are not API operations: a blink client reaches them through the
    // Actions protocol's own links (actions.json rules, the card's links.actions[].href, links.next), and their
    // `{act}` path segment is a fixed word of the card's href, which no response field carries
    const isAction = (op: Json) => (op.tags as string[] | undefined)?.includes('actions');
    const unlinked = [...ops].filter(([id, { path, op }]) => pathParams(path).length > 0 && !isAction(op) && !targets.has(id)).map(([id]) => id);
    expect([...ops.values()].filter(({ op }) => isAction(op)).length, 'the actions are in the document').toBeGreaterThan(0);
    expect(unlinked).toEqual([]);
  });
});
