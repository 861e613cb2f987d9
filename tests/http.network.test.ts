/**
 * GET /network (issue 23 item 6, server/src/modules/network): the cluster, the RPC URL a browser reaches
 * (the one the service uses, port included, or SOLANA_PUBLIC_RPC_URL), explorer link templates that open
 * that cluster (a localnet through Solana Explorer's custom cluster), and whether Solana Pay links work
 * there. Public, the same for every caller; nothing secret.
 */
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { NetworkInfo } from '@bazaar/contract';
import { loadConfig } from '../server/src/config.js';
import { networkInfo } from '../server/src/modules/network/index.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';

const apps: TestApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

describe('GET /network', () => {
  it('localnet: the RPC URL the service uses with its port, explorer links through the custom cluster, Solana Pay refused with a reason', async () => {
    const t = await createTestApp({ config: { siwsChainId: 'localnet', solanaRpcUrl: 'http://127.0.0.1:18115' } });
    apps.push(t);
    // public: no credential, and a signed-in caller gets the same
    const anonymous = await request(t.app).get(`${API}/network`);
    expect(anonymous.status, JSON.stringify(anonymous.body)).toBe(200);
    expect(NetworkInfo.parse(anonymous.body)).toEqual(anonymous.body);
    const custom = `?cluster=custom&customUrl=${encodeURIComponent('http://127.0.0.1:18115')}`;
    expect(anonymous.body).toEqual({
      cluster: 'localnet',
      rpc_url: 'http://127.0.0.1:18115',
      explorer_tx_url_template: `https://explorer.solana.com/tx/{signature}${custom}`,
      explorer_address_url_template: `https://explorer.solana.com/address/{address}${custom}`,
      solana_pay_supported: false,
      solana_pay_unsupported_reason: expect.stringMatching(/local test network/),
      actions_enabled: false,
    });
    expect(anonymous.body.explorer_tx_url_template).toContain('customUrl=http%3A%2F%2F127.0.0.1%3A18115');
    // a URI template, not a URI (its braces are not URI characters): filled in, it is the explorer link of that transaction
    const filled = new URL(anonymous.body.explorer_tx_url_template.replace('{signature}', '5'.repeat(88)));
    expect([filled.pathname, filled.searchParams.get('cluster'), filled.searchParams.get('customUrl')]).toEqual([`/tx/${'5'.repeat(88)}`, 'custom', 'http://127.0.0.1:18115']);
    const doc = JSON.parse((await request(t.app).get('/openapi.json')).text) as { components: { schemas: Record<string, { properties: Record<string, { format?: string }> }> } };
    expect(doc.components.schemas.NetworkInfo!.properties.explorer_tx_url_template!.format, 'no format: uri on a template').toBeUndefined();
    const session = await loginAs(t);
    expect((await request(t.app).get(`${API}/network`).set(session.headers)).body).toEqual(anonymous.body);
  });

  it('devnet behind a keyed RPC: the public RPC URL is published, explorer ?cluster=devnet, Solana Pay works over https', () => {
    const env = {
      SIWS_CHAIN_ID: 'solana:devnet',
      SOLANA_RPC_URL: 'https://rpc.example.test/?api-key=SECRET',
      SOLANA_PUBLIC_RPC_URL: 'https://api.devnet.solana.com',
      PUBLIC_BASE_URL: 'https://bazaar.example.test',
      JWT_SECRET: 'x'.repeat(40),
      DATA_DIR: '/tmp/bazaar-network-test',
    };
    const config = loadConfig(env);
    const info = networkInfo(config);
    expect(info).toEqual({
      cluster: 'devnet',
      rpc_url: 'https://api.devnet.solana.com',
      explorer_tx_url_template: 'https://explorer.solana.com/tx/{signature}?cluster=devnet',
      explorer_address_url_template: 'https://explorer.solana.com/address/{address}?cluster=devnet',
      solana_pay_supported: true,
      solana_pay_unsupported_reason: null,
      actions_enabled: false,
    });
    expect(JSON.stringify(info)).not.toContain('SECRET');
    expect(() => loadConfig({ ...env, SOLANA_PUBLIC_RPC_URL: 'ftp://rpc.example.test' })).toThrow(/SOLANA_PUBLIC_RPC_URL/);
  });

  it('mainnet-beta: explorer links without a cluster parameter; plain http refuses Solana Pay with its reason', () => {
    const info = networkInfo({ siwsChainId: 'mainnet', solanaRpcUrl: 'https://api.mainnet-beta.solana.com', publicBaseUrl: 'http://localhost:3000' });
    expect(info.cluster).toBe('mainnet-beta');
    expect(info.explorer_tx_url_template).toBe('https://explorer.solana.com/tx/{signature}');
    expect(info.solana_pay_supported).toBe(false);
    expect(info.solana_pay_unsupported_reason).toMatch(/https/);
  });
});
