/**
 * The SDK as a third party gets it: `npm pack` of @bazaar/contract, @bazaar/escrow-client and
 * @bazaar/client-sdk (the SDK's prepack builds all three dist/), the tarballs installed into a throw-away Vite + TypeScript app in a temp directory outside
 * the repository (the rest from the npm registry, pinned), which also uses zod 4 itself. The app
 * typechecks under `moduleResolution` bundler and nodenext (skipLibCheck off, so the packages' declaration
 * files are checked too), runs in Node from the installed packages, and `vite build` bundles three pages:
 * (a) one that lists listings, (b) one that logs in with a wallet and lists listings, (c) (a) on
 * `@bazaar/client-sdk/lite`. Their sizes are printed (raw and gzip, zlib default level as Vite reports); the
 * listing-only page must not contain the SIWS login code nor tweetnacl, the login page no tweetnacl (a wallet
 * signs), the lite page none of the contract's schemas. The SDK ships one type
 * system, the contract's: no OpenAPI-generated types file. `@bazaar/client-sdk/verify` (the fund-transaction
 * check on the Codama Kit client, issue 26) typechecks and runs from the installed packages too.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Versions of the throw-away app's own dependencies (pinned; rollup as the root's override). */
const APP_DEPS = { zod: '4.6.7' };
const APP_DEV_DEPS = { typescript: '5.9.3', vite: '7.3.8' };
const APP_OVERRIDES = { rollup: '4.67.4' };

/** Texts that only tweetnacl / the SIWS message builder contain (error messages and the message header). */
const TWEETNACL_MARKERS = ['bad secret key size', 'bad seed size'];
const SIWS_MARKER = 'wants you to sign in with your Solana account';
/** Texts that only the contract's schemas carry (a problem type's title, a field's description). */
const SCHEMA_MARKERS = ['Revision limit reached', 'Escrow program instruction'];

const FILES: Record<string, string> = {
  'src/list.ts': `import { createBazaarClient, isProblem } from '@bazaar/client-sdk';

const client = createBazaarClient({ baseUrl: 'http://localhost:3000' });

/** What a marketplace page shows: titles and prices of a search. */
export async function listTitles(query: string): Promise<string[]> {
  const res = await client.marketplace.searchListings({ query: { query, limit: 10 } });
  if (res.status === 200) return res.body.data.map((l) => \`\${l.title}: \${l.price} \${l.currency}\`);
  if (isProblem(res.body)) throw new Error(\`\${res.body.status} \${res.body.type}\`);
  return [];
}

// the client is typed: a wrong query type does not compile
// @ts-expect-error limit is a number
void client.marketplace.searchListings({ query: { limit: 'ten' } });
`,
  'src/main-list.ts': `import { listTitles } from './list.js';

void listTitles('logo').then((titles) => console.log(titles));
`,
  'src/main-lite.ts': `import { createBazaarClient, isProblem } from '@bazaar/client-sdk/lite';
import type { Listing } from '@bazaar/client-sdk';

const client = createBazaarClient({ baseUrl: 'http://localhost:3000' });

/** The listing page of (a) on the lite client: the same typed calls, no schemas in the bundle. */
export async function listTitles(query: string): Promise<string[]> {
  const res = await client.marketplace.searchListings({ query: { query, limit: 10 } });
  if (res.status === 200) return res.body.data.map((l: Listing) => \`\${l.title}: \${l.price} \${l.currency}\`);
  if (isProblem(res.body)) throw new Error(\`\${res.body.status} \${res.body.type}\`);
  return [];
}

// @ts-expect-error limit is a number, as with the full client
void client.marketplace.searchListings({ query: { limit: 'ten' } });
// @ts-expect-error no response validation without the schemas
export const refused = () => createBazaarClient({ baseUrl: 'http://localhost:3000', validateResponse: true });

void listTitles('logo').then((titles) => console.log(titles));
`,
  'src/main-login.ts': `import { createBazaarClient } from '@bazaar/client-sdk';
import { loginWithWallet, type MessageSigner } from '@bazaar/client-sdk/login';

declare global {
  interface Window {
    /** A wallet adapter: { publicKey, signMessage }. */
    wallet: MessageSigner;
  }
}

const client = createBazaarClient({ baseUrl: 'http://localhost:3000' });
void loginWithWallet(client, window.wallet).then(async ({ user, expiresAt }) => {
  console.log(user.wallet, expiresAt.toISOString());
  const res = await client.marketplace.searchListings({ query: { query: 'logo', limit: 10 } });
  if (res.status === 200) for (const l of res.body.data) console.log(l.title, l.price, l.currency);
});
`,
  // the app's own zod is 4: its API (z.email) next to the SDK's types
  'src/zod4.ts': `import { z } from 'zod';
import type { CreateListingBody, Listing, Problem } from '@bazaar/client-sdk';

export const ContactForm = z.object({ email: z.email(), listing: z.string().min(1) });
export type ContactForm = z.infer<typeof ContactForm>;
export const draft: CreateListingBody = { title: 'Logo design', description: 'Three concepts.', price: 25, currency: 'USDC', category: 'design', duration: 5 };
export const titleOf = (l: Listing): string => l.title;
export const isNotFound = (p: Problem): boolean => p.type === 'https://bazaar.dev/problems/not-found';
`,
  // the fund-transaction check before a wallet signs (issue 26): typed on the contract's Order
  'src/verify.ts': `import type { CreateOrderResponse } from '@bazaar/client-sdk';
import { FundTransactionMismatchError, verifyFundTransaction, type FundMismatchCode } from '@bazaar/client-sdk/verify';

/** null when the order's fund transaction commits to exactly that order, else why not. */
export async function refusal(order: CreateOrderResponse): Promise<FundMismatchCode | null> {
  if (!order.payment) return null;
  try {
    await verifyFundTransaction(order, order.payment);
    return null;
  } catch (err) {
    if (err instanceof FundTransactionMismatchError) return err.code;
    throw err;
  }
}
`,
  'node-check.mjs': `import { createBazaarClient, problemTypeUri } from '@bazaar/client-sdk';
import { FundTransactionMismatchError, verifyFundTransaction } from '@bazaar/client-sdk/verify';
import { ESCROW_PROGRAM_ADDRESS } from '@bazaar/escrow-client';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { buildSignInMessage } from '@bazaar/client-sdk/login';
import { createBazaarClient as createLiteClient } from '@bazaar/client-sdk/lite';

const calls = [];
const fetch = async (url, init) => {
  calls.push(\`\${init.method} \${url}\`);
  return new Response(JSON.stringify({ data: [{ slug: 'design', name: 'Design', listing_count: 1 }] }), {
    headers: { 'content-type': 'application/json' },
  });
};
const client = createBazaarClient({ baseUrl: 'http://bazaar.test', fetch });
const res = await client.marketplace.listCategories();
const lite = await createLiteClient({ baseUrl: 'http://bazaar.test', fetch }).marketplace.listCategories();
const signer = keypairSigner(new Uint8Array(32).fill(1));
const message = buildSignInMessage({
  domain: 'bazaar.test', address: signer.publicKey, statement: 'Sign in', uri: 'http://bazaar.test', version: '1',
  chainId: 'localnet', nonce: 'abcdefgh12345678', issuedAt: '2026-01-31T12:00:00.000Z', expirationTime: '2026-01-31T12:05:00.000Z',
});
const signature = await signer.signMessage(message);
const order = { order_id: '0d8f3c1e-7b2a-4c5d-9e6f-a1b2c3d4e5f6', buyer_wallet: ESCROW_PROGRAM_ADDRESS, seller_wallet: ESCROW_PROGRAM_ADDRESS, payment_mint: ESCROW_PROGRAM_ADDRESS, review_window_seconds: 0, payment_expires_at: '2026-01-31T12:00:00.000Z',
  milestones: [{ index: 1, milestone_id: '0d8f3c1e-7b2a-4c5d-9e6f-a1b2c3d4e5f6', status: 'awaiting_payment', amount_base_units: '1', delivery_deadline: '2026-02-03T12:00:00.000Z',
    payment_expires_at: '2026-01-31T12:00:00.000Z', escrow_account_address: ESCROW_PROGRAM_ADDRESS, vault_address: ESCROW_PROGRAM_ADDRESS, revisions_included: 0 }] };
const refused = await verifyFundTransaction(order, { transaction: 'AAAA' }).catch((e) => e instanceof FundTransactionMismatchError && e.code);
console.log(JSON.stringify({ status: res.status, slug: res.body.data[0].slug, lite: [lite.status, lite.body.data[0].slug], calls, type: problemTypeUri('not-found'), signature: signature.length, refused }));
`,
  'list.html': '<!doctype html><html><body><script type="module" src="/src/main-list.ts"></script></body></html>\n',
  'lite.html': '<!doctype html><html><body><script type="module" src="/src/main-lite.ts"></script></body></html>\n',
  'login.html': '<!doctype html><html><body><script type="module" src="/src/main-login.ts"></script></body></html>\n',
  'vite.config.ts': `import { defineConfig } from 'vite';

const page = process.env.PAGE ?? 'list';
export default defineConfig({ build: { outDir: \`dist-\${page}\`, emptyOutDir: true, rollupOptions: { input: \`\${page}.html\` } } });
`,
};

const tsconfig = (moduleKind: 'ESNext' | 'NodeNext', resolution: 'bundler' | 'NodeNext') =>
  JSON.stringify(
    {
      compilerOptions: {
        target: 'ES2022',
        module: moduleKind,
        moduleResolution: resolution,
        lib: ['ES2022', 'DOM'],
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: false,
      },
      include: ['src'],
    },
    null,
    2,
  );

let dir = '';
const packed: { name: string; filename: string; files: { path: string }[] }[] = [];

async function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  try {
    return await run(cmd, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${e.stdout ?? ''}\n${e.stderr ?? ''}\n${e.message}`);
  }
}

const tsc = (project: string) => sh(process.execPath, [join(dir, 'node_modules/typescript/bin/tsc'), '-p', project], dir);

async function buildPage(page: 'list' | 'login' | 'lite') {
  await sh(process.execPath, [join(dir, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], dir, { PAGE: page });
  const assets = join(dir, `dist-${page}`, 'assets');
  const js = (await readdir(assets)).filter((f) => f.endsWith('.js'));
  const code = Buffer.concat(await Promise.all(js.map((f) => readFile(join(assets, f)))));
  return { code: code.toString('utf8'), raw: code.length, gzip: gzipSync(code).length, chunks: js.length };
}

const kB = (n: number) => `${(n / 1000).toFixed(1)} kB`;

describe('the SDK as an npm package', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bazaar-sdk-app-'));
    // the SDK's prepack builds @bazaar/contract and then the SDK; the contract is then packed from that
    // fresh dist/ without running its own prepack (the same tsc build a second time)
    for (const [ws, scripts] of [['@bazaar/client-sdk', []], ['@bazaar/contract', ['--ignore-scripts']], ['@bazaar/escrow-client', ['--ignore-scripts']]] as const) {
      const { stdout } = await sh('npm', ['pack', '--json', '--pack-destination', dir, '-w', ws, ...scripts], ROOT);
      packed.push(...JSON.parse(stdout.slice(stdout.indexOf('['))));
    }
    const tarball = (name: string) => `file:./${packed.find((p) => p.name === name)!.filename}`;
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify(
        {
          name: 'bazaar-sdk-app',
          private: true,
          type: 'module',
          dependencies: {
            '@bazaar/client-sdk': tarball('@bazaar/client-sdk'),
            '@bazaar/contract': tarball('@bazaar/contract'),
            '@bazaar/escrow-client': tarball('@bazaar/escrow-client'),
            ...APP_DEPS,
          },
          devDependencies: APP_DEV_DEPS,
          overrides: APP_OVERRIDES,
        },
        null,
        2,
      ),
    );
    await mkdir(join(dir, 'src'));
    for (const [file, text] of Object.entries(FILES)) await writeFile(join(dir, file), text);
    await writeFile(join(dir, 'tsconfig.bundler.json'), tsconfig('ESNext', 'bundler'));
    await writeFile(join(dir, 'tsconfig.nodenext.json'), tsconfig('NodeNext', 'NodeNext'));
    await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], dir);
  }, 600_000);

  afterAll(async () => {
    if (dir && !process.env.KEEP_SDK_APP) await rm(dir, { recursive: true, force: true });
  });

  it('packs dist/ with declarations and the README, no sources or tests', () => {
    for (const name of ['@bazaar/contract', '@bazaar/escrow-client', '@bazaar/client-sdk']) {
      const files = packed.find((p) => p.name === name)!.files.map((f) => f.path).sort();
      expect(files, name).toContain('dist/index.js');
      expect(files, name).toContain('dist/index.d.ts');
      expect(files, name).toContain('README.md');
      expect(files.filter((f) => !f.startsWith('dist/') && !['README.md', 'package.json'].includes(f)), name).toEqual([]);
      expect(files.filter((f) => f.includes('.test.')), name).toEqual([]);
    }
    const sdk = packed.find((p) => p.name === '@bazaar/client-sdk')!.files.map((f) => f.path);
    expect(sdk).toEqual(expect.arrayContaining(['dist/login.js', 'dist/login.d.ts', 'dist/keypair.js', 'dist/keypair.d.ts', 'dist/lite.js', 'dist/lite.d.ts', 'dist/verify.js', 'dist/verify.d.ts']));
    // one type system: the contract's; no types generated from openapi.json (client-sdk/README.md "Package layout")
    expect(sdk.filter((f) => /openapi/i.test(f))).toEqual([]);
  });

  it('installs next to the app\'s zod 4: the contract keeps its own zod 3 and ts-rest', async () => {
    const version = async (p: string) => JSON.parse(await readFile(join(dir, 'node_modules', p, 'package.json'), 'utf8')).version;
    expect(await version('zod')).toBe(APP_DEPS.zod);
    const contractZod = await version('@bazaar/contract/node_modules/zod');
    expect(contractZod).toMatch(/^3\./);
  });

  it('typechecks under moduleResolution bundler', async () => {
    await tsc('tsconfig.bundler.json');
  }, 300_000);

  it('typechecks under moduleResolution nodenext', async () => {
    await tsc('tsconfig.nodenext.json');
  }, 300_000);

  it('runs in Node from the installed packages (client, lite, keypair, login and verify entry points)', async () => {
    const { stdout } = await sh(process.execPath, ['node-check.mjs'], dir);
    expect(JSON.parse(stdout)).toEqual({
      status: 200,
      slug: 'design',
      lite: [200, 'design'],
      calls: ['GET http://bazaar.test/api/v1/categories', 'GET http://bazaar.test/api/v1/categories'],
      type: 'https://bazaar.dev/problems/not-found',
      signature: 64,
      refused: 'malformed',
    });
  });

  it('vite builds a listing page without login code, a login page without tweetnacl and a lite listing page without the schemas; prints their sizes', async () => {
    const list = await buildPage('list');
    const login = await buildPage('login');
    const lite = await buildPage('lite');
    console.log(
      `[sdk bundle sizes] (a) lists listings: ${kB(list.raw)} raw, ${kB(list.gzip)} gzip; ` +
        `(b) logs in and lists listings: ${kB(login.raw)} raw, ${kB(login.gzip)} gzip; ` +
        `(c) (a) on /lite: ${kB(lite.raw)} raw, ${kB(lite.gzip)} gzip (vite 7.3.8, ${list.chunks}+${login.chunks}+${lite.chunks} chunk(s))`,
    );
    for (const marker of SCHEMA_MARKERS) {
      expect(list.code, `the contract's schemas in the listing page (${marker})`).toContain(marker);
      expect(lite.code, `the contract's schemas in the lite listing page (${marker})`).not.toContain(marker);
    }
    expect(lite.code, 'the lite page calls the search route').toContain('/api/v1/marketplace/search');
    for (const marker of TWEETNACL_MARKERS) {
      expect(list.code, `tweetnacl in the listing page (${marker})`).not.toContain(marker);
      expect(login.code, `tweetnacl in the login page (${marker})`).not.toContain(marker);
    }
    expect(list.code, 'SIWS login code in the listing page').not.toContain(SIWS_MARKER);
    expect(login.code, 'the login page signs in').toContain(SIWS_MARKER);
  }, 300_000);
});
