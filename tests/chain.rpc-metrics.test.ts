/**
 * The service times every JSON-RPC call its Connection makes (chain/index.ts meteredFetch, the
 * `bazaar_rpc_request_duration_seconds` histogram): by method (comma-joined for a batch) and outcome
 * (ok: an HTTP answer; error: none).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection, type RpcCallObserver } from '../server/src/chain/index';
import { createMetrics } from '../server/src/metrics';
import { freePort } from './helpers/ports';
import { sample } from './helpers/metrics';

let server: Server;
let url: string;

beforeAll(async () => {
  // a JSON-RPC endpoint that answers getSlot after 30 ms
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const call = JSON.parse(body) as { id: string; method: string };
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: call.method === 'getSlot' ? 42 : null }));
      }, 30);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('JSON-RPC call timing', () => {
  it('each call the Connection makes is observed with its method, its duration and outcome ok', async () => {
    const calls: Array<[string, number, string]> = [];
    const observe: RpcCallObserver = (m, s, o) => calls.push([m, s, o]);
    const connection = createConnection(url, { onRpcCall: observe });
    expect(await connection.getSlot()).toBe(42);
    expect(calls).toHaveLength(1);
    expect(calls[0]![0]).toBe('getSlot');
    expect(calls[0]![1]).toBeGreaterThanOrEqual(0.025);
    expect(calls[0]![2]).toBe('ok');
  });

  it('a provider that does not answer: outcome error, and the metric counts both by label', async () => {
    const metrics = createMetrics();
    const observe: RpcCallObserver = (method, seconds, outcome) => metrics.rpcDuration.observe({ method, outcome }, seconds);
    await createConnection(url, { onRpcCall: observe }).getSlot();
    const refused = createConnection(`http://127.0.0.1:${await freePort()}`, { onRpcCall: observe });
    await expect(refused.getSlot()).rejects.toThrow();
    const text = await metrics.registry.metrics();
    expect(sample(text, 'bazaar_rpc_request_duration_seconds_count', { method: 'getSlot', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'bazaar_rpc_request_duration_seconds_count', { method: 'getSlot', outcome: 'error' })).toBeGreaterThanOrEqual(1);
  });
});
