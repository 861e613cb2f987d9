/**
 * Explorer links (issue 26 item 4, server/src/lib/explorer.ts + http/explorer-links.ts): one builder for the
 * configured cluster (mainnet-beta, devnet, testnet, a localnet through Solana Explorer's custom cluster), an RPC URL
 * named in a link never carries credentials, the naming rule of the link fields, every answer of the API gets them
 * (event payloads and the audit log excepted), and a route walk over openapi.json: every signature and mint field of
 * an answer has its link sibling, so a new field without one fails here.
 */
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { Keypair } from '@solana/web3.js';
import { loadConfig } from '../server/src/config.js';
import { createExplorer, explorerSibling, linkableRpcUrl, withExplorerLinks } from '../server/src/lib/explorer.js';
import { linksExplorer } from '../server/src/http/explorer-links.js';
import { networkInfo } from '../server/src/modules/network/index.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';

const SIG = '4CKtRKnWZDvqWuJup8awgTGodXRzdMGqFhPeWJtYmRje4GtEUZaotnYsYm3L6pzLZHE5FGsWdvFvN2z8B4shx4RR';
const MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

const apps: TestApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

describe('explorerUrl for the configured cluster', () => {
  it('mainnet: no cluster parameter; devnet and testnet: ?cluster=', () => {
    const main = createExplorer({ siwsChainId: 'solana:mainnet', solanaRpcUrl: 'https://api.mainnet-beta.solana.com' });
    expect(main.explorerUrl('tx', SIG)).toBe(`https://explorer.solana.com/tx/${SIG}`);
    expect(main.explorerUrl('address', MINT)).toBe(`https://explorer.solana.com/address/${MINT}`);
    expect(createExplorer({ siwsChainId: 'devnet', solanaRpcUrl: 'https://api.devnet.solana.com' }).explorerUrl('tx', SIG)).toBe(
      `https://explorer.solana.com/tx/${SIG}?cluster=devnet`,
    );
    expect(createExplorer({ siwsChainId: 'testnet', solanaRpcUrl: 'https://api.testnet.solana.com' }).explorerUrl('address', MINT)).toBe(
      `https://explorer.solana.com/address/${MINT}?cluster=testnet`,
    );
  });

  it('localnet: the custom cluster with the RPC URL, port included (the public one when set)', () => {
    const local = createExplorer({ siwsChainId: 'localnet', solanaRpcUrl: 'http://127.0.0.1:18115' });
    const link = new URL(local.explorerUrl('tx', SIG));
    expect([link.origin, link.pathname, link.searchParams.get('cluster'), link.searchParams.get('customUrl')]).toEqual([
      'https://explorer.solana.com',
      `/tx/${SIG}`,
      'custom',
      'http://127.0.0.1:18115',
    ]);
    const pub = createExplorer({ siwsChainId: 'localnet', solanaRpcUrl: 'http://10.0.0.5:8899', solanaPublicRpcUrl: 'https://rpc.bazaar.test' });
    expect(new URL(pub.explorerUrl('address', MINT)).searchParams.get('customUrl')).toBe('https://rpc.bazaar.test');
  });

  it('an RPC URL with credentials: user info, the query and a key-like path segment are stripped from every link', () => {
    const keyed = [
      ['https://user:hunter2@rpc.example.test:8899/?api-key=SECRET1', 'https://rpc.example.test:8899'],
      ['https://rpc.example.test/rpc?token=SECRET2#x', 'https://rpc.example.test/rpc'],
      ['https://example.solana-mainnet.quiknode.pro/a1b2c3d4e5f6a7b8c9d0SECRET3/', 'https://example.solana-mainnet.quiknode.pro'],
      ['https://solana-devnet.g.alchemy.com/v2/AbCdEf0123456789GhIjSECRET4', 'https://solana-devnet.g.alchemy.com'],
      ['http://127.0.0.1:8899', 'http://127.0.0.1:8899'],
    ] as const;
    for (const [raw, clean] of keyed) {
      expect(linkableRpcUrl(raw), raw).toBe(clean);
      const link = createExplorer({ siwsChainId: 'localnet', solanaRpcUrl: raw }).explorerUrl('tx', SIG);
      expect(link, raw).not.toMatch(/SECRET|hunter2|user/);
      expect(new URL(link).searchParams.get('customUrl')).toBe(clean);
      // the public one too: a link is shown to anyone
      expect(createExplorer({ siwsChainId: 'localnet', solanaRpcUrl: 'http://127.0.0.1:1', solanaPublicRpcUrl: raw }).explorerUrl('tx', SIG)).not.toMatch(/SECRET|hunter2/);
    }
    // GET /network's templates and RPC URL of a keyed localnet RPC without SOLANA_PUBLIC_RPC_URL: nothing secret either
    const info = networkInfo({ siwsChainId: 'localnet', solanaRpcUrl: 'https://user:hunter2@rpc.example.test/?api-key=SECRET', publicBaseUrl: 'http://localhost:3000' });
    expect(JSON.stringify(info)).not.toMatch(/SECRET|hunter2/);
    expect(info.rpc_url).toBe('https://rpc.example.test');
  });

  it('the naming rule: signature -> explorer_url, x_signature -> x_explorer_url, mint / x_mint -> (x_)mint_explorer_url, x_address -> x_explorer_url', () => {
    expect(explorerSibling('signature')).toEqual({ field: 'explorer_url', kind: 'tx' });
    expect(explorerSibling('anchor_signature')).toEqual({ field: 'anchor_explorer_url', kind: 'tx' });
    expect(explorerSibling('mint')).toEqual({ field: 'mint_explorer_url', kind: 'address' });
    expect(explorerSibling('payment_mint')).toEqual({ field: 'payment_mint_explorer_url', kind: 'address' });
    expect(explorerSibling('token_mint_address')).toEqual({ field: 'token_mint_explorer_url', kind: 'address' });
    expect(explorerSibling('escrow_account_address')).toEqual({ field: 'escrow_account_explorer_url', kind: 'address' });
    expect(explorerSibling('buyer_wallet')).toBeNull();
    const x = createExplorer({ siwsChainId: 'devnet', solanaRpcUrl: 'https://api.devnet.solana.com' });
    const body = {
      payment_mint: MINT,
      transactions: [{ action: 'fund', signature: SIG }],
      tip: { mint: MINT, signature: null },
      login: { signature: 'bm90IGEgYmFzZTU4IHNpZ25hdHVyZQ==' },
      kept: { signature: SIG, explorer_url: 'https://example.test/own' },
    };
    expect(withExplorerLinks(body, x)).toEqual({
      payment_mint: MINT,
      payment_mint_explorer_url: `https://explorer.solana.com/address/${MINT}?cluster=devnet`,
      transactions: [{ action: 'fund', signature: SIG, explorer_url: `https://explorer.solana.com/tx/${SIG}?cluster=devnet` }],
      tip: { mint: MINT, mint_explorer_url: `https://explorer.solana.com/address/${MINT}?cluster=devnet`, signature: null, explorer_url: null },
      login: { signature: 'bm90IGEgYmFzZTU4IHNpZ25hdHVyZQ==' },
      kept: { signature: SIG, explorer_url: 'https://example.test/own' },
    });
    expect(body.transactions[0]).not.toHaveProperty('explorer_url'); // a copy
    // anything but a plain object is left as it is (its own toJSON serializes it)
    const at = new Date(0);
    expect(withExplorerLinks({ at, mint: MINT }, x).at).toBe(at);
  });
});

describe('the API answers carry the links', () => {
  it('GET /currencies on devnet: each mint with its mint_explorer_url; only the audit log is exempt', async () => {
    const mint = Keypair.generate().publicKey.toBase58();
    const t = await createTestApp({
      config: { siwsChainId: 'devnet', solanaRpcUrl: 'https://rpc.example.test/?api-key=SECRET', currencies: [{ code: 'USDC', mint, decimals: 6 }] },
    });
    apps.push(t);
    const r = await request(t.app).get(`${API}/currencies`).set((await loginAs(t)).headers);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toEqual([{ code: 'USDC', mint, decimals: 6, mint_explorer_url: `https://explorer.solana.com/address/${mint}?cluster=devnet` }]);
    expect(linksExplorer(`${API}/orders/x`)).toBe(true);
    for (const p of [`${API}/admin/audit-log`, `${API}/admin/audit-log/verify`, '/openapi.json']) expect(linksExplorer(p), p).toBe(false);
    for (const p of [`${API}/events`, `${API}/webhooks/w/deliveries`, `${API}/tips/x`]) expect(linksExplorer(p), p).toBe(true);
  });

  it('the configured cluster of the config (SIWS_CHAIN_ID, SOLANA_RPC_URL, SOLANA_PUBLIC_RPC_URL) drives the links', () => {
    const config = loadConfig({
      SIWS_CHAIN_ID: 'localnet',
      SOLANA_RPC_URL: 'http://127.0.0.1:18899',
      JWT_SECRET: 'x'.repeat(40),
      DATA_DIR: '/tmp/bazaar-explorer-test',
    });
    expect(createExplorer(config).explorerUrl('tx', SIG)).toBe(`https://explorer.solana.com/tx/${SIG}?cluster=custom&customUrl=${encodeURIComponent('http://127.0.0.1:18899')}`);
  });
});

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  additionalProperties?: Schema | boolean;
  minLength?: number;
  maxLength?: number;
};

describe('route walk: every signature and mint field of an answer has its explorer sibling (openapi.json)', () => {
  const doc = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>;
    components: { schemas: Record<string, Schema> };
  };
  const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]!) : s);
  /** a field that holds a transaction signature: named so, or shaped like one (base58 of 64 bytes: 64..88 characters) */
  const isSignatureField = (name: string, s: Schema) => /(^|_)signature$/.test(name) || (s.minLength === 64 && s.maxLength === 88);
  const isMintField = (name: string) => /(^|_)mint(_address)?$/.test(name);

  function missing(): string[] {
    const out = new Set<string>();
    const seen = new Set<Schema>();
    const walk = (raw: Schema, where: string) => {
      const s = resolve(raw);
      if (seen.has(s)) return;
      seen.add(s);
      for (const x of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) walk(x, where);
      if (s.items) walk(s.items, `${where}[]`);
      if (s.additionalProperties && typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${where}{}`);
      for (const [name, p] of Object.entries(s.properties ?? {})) {
        const prop = resolve(p);
        if (isSignatureField(name, prop) || isMintField(name)) {
          const sibling = explorerSibling(name);
          if (!sibling || !(sibling.field in (s.properties ?? {}))) out.add(`${where}.${name} -> ${sibling?.field ?? '(no rule)'}`);
        }
        walk(p, `${where}.${name}`);
      }
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      // audit entries are exempt (documented: their hashes cover every field): the same rule as the server's
      if (!linksExplorer(path.replace(/\{[^}]+\}/g, 'x'))) continue;
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses ?? {})) {
          for (const media of Object.values(r.content ?? {})) if (media.schema) walk(media.schema, `${method.toUpperCase()} ${path} ${status}`);
        }
      }
    }
    return [...out];
  }

  it('no signature or mint field without its link (a new field without one fails here)', () => {
    expect(missing()).toEqual([]);
  });

  it('the walk finds the fields it guards (orders, milestones, transactions, listings, tips, custody, disputes, problems)', () => {
    const has = (schema: string, field: string) => field in (doc.components.schemas[schema]?.properties ?? {});
    for (const [schema, field] of [
      ['Order', 'payment_mint_explorer_url'],
      ['Order', 'token_mint_explorer_url'],
      ['Order', 'escrow_account_explorer_url'],
      ['OrderMilestone', 'escrow_account_explorer_url'],
      ['OrderTransaction', 'explorer_url'],
      ['Listing', 'token_mint_explorer_url'],
      ['Listing', 'currency_mint_explorer_url'],
      ['MintTransaction', 'explorer_url'],
      ['Tip', 'explorer_url'],
      ['Tip', 'mint_explorer_url'],
      ['Withdrawal', 'explorer_url'],
      ['CustodyDeposit', 'explorer_url'],
      ['Balance', 'mint_explorer_url'],
      ['Currency', 'mint_explorer_url'],
      ['DisputeEvidence', 'anchor_explorer_url'],
      ['FundsAmount', 'mint_explorer_url'],
      ['ChainTransactionLanded', 'explorer_url'],
    ] as const) {
      expect(has(schema, field), `${schema}.${field}`).toBe(true);
    }
  });
});

describe('withExplorerLinks allocates only where it adds a link (issue 28 item 1)', () => {
  const explorer = createExplorer({ siwsChainId: 'solana:devnet', solanaRpcUrl: 'https://api.devnet.solana.com' });
  it('returns a body without link fields as it is, copies only the objects that get a link, and never changes its input', () => {
    const categories = { data: [{ slug: 'design', name: 'Design', listing_count: 3 }] };
    expect(withExplorerLinks(categories, explorer)).toBe(categories);
    const packages = [{ key: 'basic', price: '10' }];
    const listing = { listing_id: 'x', token_mint_address: Keypair.generate().publicKey.toBase58(), packages, seller: { wallet: 'w' } };
    const snapshot = JSON.stringify(listing);
    const linked = withExplorerLinks(listing, explorer) as typeof listing & { token_mint_explorer_url?: string };
    expect(linked).not.toBe(listing);
    expect(linked.token_mint_explorer_url).toMatch(/^https:\/\/explorer\.solana\.com\/address\//);
    expect(Object.keys(linked)).toEqual([...Object.keys(listing), 'token_mint_explorer_url']);
    expect(linked.packages).toBe(packages);
    expect(JSON.stringify(listing)).toBe(snapshot);
  });
});
