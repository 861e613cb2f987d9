/**
 * OpenAPI links (OpenAPI 3.0.3 section 4.7.20, Link Object) of openapi.json: how an id that one operation's
 * response returns is used by the operations that take it. Clients read them as documentation; property-based
 * testers follow them (schemathesis' stateful phase, .ci/schemathesis): without them a tester never holds a
 * real listing, order or withdrawal id and every order action, message and withdrawal answers only 404.
 *
 * Declared once per kind of id: where responses carry it (`PRODUCERS`: operationId, status, JSON pointer) and,
 * for ids taken in a request body, which operations take it there (`BODY_CONSUMERS`). The consumers of a
 * path parameter are found in the contract itself: every operation whose path has `{<kind>}`. A link is
 * added when the producer supplies every path parameter of the consumer (from its response, or from its own
 * request path: `$request.path.<name>`). Every pointer is checked against the response schema, so a renamed
 * field or operation fails the generation instead of leaving a dead link.
 *
 * The money lifecycle this gives a tester: createListing -> createOrder (body listing_id) -> getOrder,
 * submitOrderTransaction, createOrderPayment, deliverOrder, confirmOrder, disputeOrder, refundOrder,
 * resolveDispute, createReview, createTip -> submitTipTransaction, listOrderMessages, sendOrderMessage -> reportMessage; createDeposit ->
 * createWithdrawal (body currency) -> getWithdrawal; createInquiry -> createOffer -> getOffer, acceptOffer,
 * declineOffer, withdrawOffer; disputeOrder, createOrder, listOrders, listDisputeQueue -> getDispute,
 * submitDisputeEvidence, ruleDispute (dispute_id = the milestone_id);
 * grantRole <-> revokeRole (wallet and role).
 * createReport or listReportQueue -> dismissReports (issue 25).
 */

type Json = Record<string, any>;

/** Kinds of id: the path parameter name that takes each (and the field name that carries it). */
type IdKind =
  | 'listing_id'
  | 'order_id'
  | 'wallet'
  | 'seller_wallet'
  | 'withdrawal_id'
  | 'webhook_id'
  | 'delivery_id'
  | 'conversation_id'
  | 'message_id'
  | 'token_id'
  | 'tip_id'
  | 'offer_id'
  | 'dispute_id'
  | 'currency'
  | 'index'
  | 'role'
  | 'target_type'
  | 'target_id';

/** One place a response carries an id: `pointer` is a JSON pointer into the response body. */
interface Producer {
  operationId: string;
  status: string;
  pointer: string;
}

const first = (field: string) => `/data/0/${field}`;

/** Where each id comes from. */
const PRODUCERS: Record<IdKind, Producer[]> = {
  listing_id: [
    { operationId: 'createListing', status: '201', pointer: '/listing_id' },
    { operationId: 'listListings', status: '200', pointer: first('listing_id') },
    { operationId: 'searchListings', status: '200', pointer: first('listing_id') },
    { operationId: 'listMarketplaceListings', status: '200', pointer: first('listing_id') },
  ],
  order_id: [
    { operationId: 'createOrder', status: '201', pointer: '/order_id' },
    { operationId: 'listOrders', status: '200', pointer: first('order_id') },
  ],
  wallet: [
    { operationId: 'getMe', status: '200', pointer: '/wallet' },
    { operationId: 'getListing', status: '200', pointer: '/seller_wallet' },
    { operationId: 'grantRole', status: '200', pointer: '/wallet' },
    { operationId: 'revokeRole', status: '200', pointer: '/wallet' },
  ],
  seller_wallet: [
    { operationId: 'createListing', status: '201', pointer: '/seller_wallet' },
    { operationId: 'getListing', status: '200', pointer: '/seller_wallet' },
  ],
  withdrawal_id: [
    { operationId: 'createWithdrawal', status: '202', pointer: '/withdrawal_id' },
    { operationId: 'listWithdrawals', status: '200', pointer: first('withdrawal_id') },
  ],
  webhook_id: [
    { operationId: 'createWebhook', status: '201', pointer: '/webhook_id' },
    { operationId: 'listWebhooks', status: '200', pointer: first('webhook_id') },
  ],
  delivery_id: [{ operationId: 'listWebhookDeliveries', status: '200', pointer: first('delivery_id') }],
  conversation_id: [
    { operationId: 'createInquiry', status: '201', pointer: '/conversation/conversation_id' },
    { operationId: 'sendOrderMessage', status: '201', pointer: '/conversation_id' },
    { operationId: 'listConversations', status: '200', pointer: first('conversation_id') },
  ],
  message_id: [
    { operationId: 'sendOrderMessage', status: '201', pointer: '/message_id' },
    { operationId: 'sendConversationMessage', status: '201', pointer: '/message_id' },
    { operationId: 'createInquiry', status: '201', pointer: '/message/message_id' },
    { operationId: 'listOrderMessages', status: '200', pointer: first('message_id') },
    { operationId: 'listConversationMessages', status: '200', pointer: first('message_id') },
  ],
  token_id: [
    { operationId: 'createToken', status: '201', pointer: '/token_id' },
    { operationId: 'listTokens', status: '200', pointer: first('token_id') },
  ],
  currency: [{ operationId: 'createDeposit', status: '200', pointer: '/currency' }],
  tip_id: [
    { operationId: 'createTip', status: '201', pointer: '/tip_id' },
    { operationId: 'listOrderTips', status: '200', pointer: first('tip_id') },
  ],
  offer_id: [
    { operationId: 'createOffer', status: '201', pointer: '/offer_id' },
    { operationId: 'listOffers', status: '200', pointer: first('offer_id') },
  ],
  // a dispute's id is the disputed milestone's milestone_id (disputes.contract.ts): an order's milestone 1 (the order
  // id), the one a dispute opened on the order is about, and the arbiter's queue
  dispute_id: [
    { operationId: 'disputeOrder', status: '200', pointer: '/milestones/0/milestone_id' },
    { operationId: 'createOrder', status: '201', pointer: '/milestones/0/milestone_id' },
    { operationId: 'listOrders', status: '200', pointer: first('milestones/0/milestone_id') },
    { operationId: 'listDisputeQueue', status: '200', pointer: first('dispute/dispute_id') },
  ],
  // issue 25: a reported target (dismissReports takes both): a report, or the moderators' queue
  target_type: [
    { operationId: 'createReport', status: '201', pointer: '/target_type' },
    { operationId: 'listReportQueue', status: '200', pointer: first('target_type') },
  ],
  target_id: [
    { operationId: 'createReport', status: '201', pointer: '/target_id' },
    { operationId: 'listReportQueue', status: '200', pointer: first('target_id') },
  ],
  // a milestone's index (POST /orders/{order_id}/milestones/{index}/...): every order has milestone 1
  index: [
    { operationId: 'createOrder', status: '201', pointer: '/milestones/0/index' },
    { operationId: 'listOrders', status: '200', pointer: first('milestones/0/index') },
  ],
  // an operator role (PUT/DELETE /admin/users/{wallet}/roles/{role}): a grant leads to its revoke and back
  role: [
    { operationId: 'grantRole', status: '200', pointer: '/role' },
    { operationId: 'revokeRole', status: '200', pointer: '/role' },
  ],
};

/** Ids taken in a request body (top-level field of the same name), per consumer operation. */
const BODY_CONSUMERS: Partial<Record<IdKind, string[]>> = {
  listing_id: ['createOrder'],
  message_id: ['markConversationRead'],
  currency: ['createWithdrawal'],
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  operationId: string;
  path: string;
  op: Json;
}

function operations(paths: Json): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined;
      if (op?.operationId) out.set(op.operationId, { operationId: op.operationId, path, op });
    }
  }
  return out;
}

const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** The schema a JSON pointer reaches in a response schema (through $ref, allOf, array items); null when none. */
function schemaAt(schema: Json | undefined, pointer: string, schemas: Json): Json | null {
  let node: Json | undefined = schema;
  const deref = (n: Json | undefined): Json | undefined => {
    if (!n) return n;
    if (typeof n.$ref === 'string') return deref(schemas[n.$ref.replace('#/components/schemas/', '')]);
    if (Array.isArray(n.allOf)) {
      const properties: Json = {};
      for (const part of n.allOf as Json[]) Object.assign(properties, deref(part)?.properties ?? {});
      return { ...n, properties };
    }
    return n;
  };
  for (const key of pointer.split('/').slice(1)) {
    node = deref(node);
    if (!node) return null;
    node = /^\d+$/.test(key) ? node.items : node.properties?.[key];
  }
  return deref(node) ?? null;
}

/** The link object from `producer` (which supplies `given`) to `target`, or null when it cannot supply every path parameter. */
function linkTo(producer: Operation, target: Operation, given: Map<string, string>, body: Json | null): Json | null {
  const parameters: Json = {};
  for (const name of pathParams(target.path)) {
    const expression = given.get(name) ?? (pathParams(producer.path).includes(name) ? `$request.path.${name}` : undefined);
    if (!expression) return null;
    parameters[`path.${name}`] = expression;
  }
  if (!Object.keys(parameters).length && !body) return null;
  return {
    operationId: target.operationId,
    ...(Object.keys(parameters).length ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    description: `${target.operationId} with the ${[...Object.keys(parameters).map((p) => p.slice(5)), ...Object.keys(body ?? {})].join(', ')} of this response`,
  };
}

/**
 * Add `links` to the success responses of `paths` (the generated OpenAPI paths object, changed in place).
 * Throws when a producer, a consumer or a pointer names something the document does not have.
 */
export function addLinks(paths: Json, schemas: Json): void {
  const ops = operations(paths);
  const need = (id: string) => {
    const op = ops.get(id);
    if (!op) throw new Error(`openapi links: no operation ${id}`);
    return op;
  };
  // what each (producer, status) response supplies: id kind -> response expression
  const supplies = new Map<string, Map<string, string>>();
  for (const [kind, producers] of Object.entries(PRODUCERS) as [IdKind, Producer[]][]) {
    for (const p of producers) {
      const op = need(p.operationId);
      const response = op.op.responses?.[p.status];
      const schema = response?.content?.['application/json']?.schema;
      if (!schema) throw new Error(`openapi links: ${p.operationId} has no JSON ${p.status} response`);
      if (!schemaAt(schema, p.pointer, schemas)) throw new Error(`openapi links: ${p.operationId} ${p.status} has nothing at ${p.pointer}`);
      const key = `${p.operationId} ${p.status}`;
      if (!supplies.has(key)) supplies.set(key, new Map());
      supplies.get(key)!.set(kind, `$response.body#${p.pointer}`);
    }
  }
  for (const consumers of Object.values(BODY_CONSUMERS)) consumers!.forEach(need);

  for (const [key, given] of supplies) {
    const [operationId, status] = key.split(' ') as [string, string];
    const producer = need(operationId);
    const links: Json = {};
    for (const target of ops.values()) {
      if (target.operationId === operationId) continue;
      const bodyFields = Object.entries(BODY_CONSUMERS).flatMap(([kind, consumers]) =>
        consumers!.includes(target.operationId) && given.has(kind) ? [[kind, given.get(kind)!] as const] : [],
      );
      const uses = pathParams(target.path).some((name) => given.has(name)) || bodyFields.length > 0;
      if (!uses) continue;
      const link = linkTo(producer, target, given, bodyFields.length ? Object.fromEntries(bodyFields) : null);
      if (link) links[target.operationId] = link;
    }
    if (Object.keys(links).length) producer.op.responses[status].links = Object.fromEntries(Object.entries(links).sort(([a], [b]) => a.localeCompare(b)));
  }
}
