import http from 'node:http';
import { createBazaarClient } from '@bazaar/client-sdk';
import { followEvents } from '@bazaar/client-sdk/events';
import { verifyWebhook } from '@bazaar/client-sdk/webhooks';

const baseUrl = 'http://localhost:3000';
const token = process.env.BAZAAR_TOKEN!; // an access token, or a personal access token (events:read, webhooks:manage)
const client = createBazaarClient({ baseUrl, token });

// 1. A webhook: Bazaar POSTs each event, signed (Standard Webhooks); verify, then answer 2xx quickly.
let secret = '';
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const event = verifyWebhook(Buffer.concat(chunks), req.headers, secret);
      if (event.type === 'order.funded') console.log(`paid: order ${event.data.order_id}, ${event.data.amount} ${event.data.currency}`);
      res.writeHead(204).end(); // deduplicate on event.event_id: delivery is at least once
    } catch {
      res.writeHead(400).end();
    }
  });
});
receiver.listen(4001);
const hook = await client.webhooks.createWebhook({ body: { url: 'http://localhost:4001/bazaar', event_types: ['order.funded', 'message.created'] } });
if (hook.status !== 201) throw new Error(`createWebhook: ${hook.status} ${hook.body.detail}`);
secret = hook.body.secret; // shown once: store it

// 2. The live stream (browser or Node): resumes with Last-Event-ID after a dropped connection.
const stop = new AbortController();
void followEvents({
  baseUrl,
  token,
  types: ['order.funded', 'order.completed', 'message.created'],
  signal: stop.signal,
  onEvent: (e) => {
    if (e.type === 'message.created') console.log(`${e.data.sender_wallet}: ${e.data.body}`);
    else console.log(`${e.type} ${e.resource_id} (#${e.sequence}, position ${e.position})`);
  },
});
