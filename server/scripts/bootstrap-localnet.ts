/**
 * Idempotent dev bootstrap of a Solana RPC (the localnet, or devnet with a funded service key):
 *
 *  1. dev keypairs under DATA_DIR/keys (dir 0700, files 0600; data/ is git-ignored, never commit keys):
 *     service.json (platform authority + arbiter + fee payer), admin.json (escrow config admin: it
 *     must be the program's upgrade authority, so on the localnet `npm start` and the test helpers
 *     create it first and pass it as `--escrow-upgrade-authority`; see `adminPublicKeyFor`),
 *     treasury.json (fee receiver), usdc-mint-authority.json, usdc-mint.json (the test USDC mint's address)
 *  2. airdrops SOL to service and admin when they hold less than 10 SOL, and 5 SOL to the fee sponsor
 *     (sponsor.json, FEE_SPONSORSHIP) when it holds less than 1 SOL
 *  3. the test USDC mint (SPL Token, 6 decimals, freeze authority none) if absent
 *  4. the escrow config (fee 250 bps, default review window 3 days, at most 30 days; delivery
 *     deadlines at most 366 days ahead; allowed mints [test USDC, wSOL])
 *     if absent; an existing config is kept (a mismatch is reported in `warnings`). Before that, a
 *     config or open orders in the layout of an earlier program version (a ledger from before an
 *     in-place upgrade) are migrated with the admin key (migrate_config / migrate_order; on the
 *     localnet the admin is the upgrade authority); `created` lists them
 *  5. the treasury's associated token accounts for both mints
 *  6. DATA_DIR/chain.json: { rpcUrl, programId, currencies, servicePublicKey, adminPublicKey, arbiter,
 *     treasury, usdcMint, usdcMintAuthority, feeBps, defaultReviewWindow, keysDir, bootstrappedAt }
 *
 * CLI: `npm run chain:bootstrap` (env SOLANA_RPC_URL default http://127.0.0.1:SOLANA_RPC_PORT, DATA_DIR
 * default ./data, ESCROW_PROGRAM_ID default the IDL address; server/src/config.ts loadToolConfig). Faucet: `npm run chain:bootstrap -- faucet <wallet> <usdc>`.
 * After an in-place program upgrade: `npm run chain:bootstrap -- migrate [max_review_window_s max_delivery_window_s]`
 * (signed by DATA_DIR/keys/admin.json, the upgrade authority; windows default to 30 and 366 days).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import {
  MINT_SIZE,
  NATIVE_MINT,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import escrowIdl from '@bazaar/escrow-idl';
import { createChain, createConnection } from '../src/chain/index.js';
import { parseUnits } from '../src/lib/money.js';
import { sendAndConfirm } from '../src/chain/tx.js';
import { type ChainFile, loadOrCreateKeypair, readChainFile } from '../src/chain/keys.js';
import type { CurrencyInfo } from '../src/chain/types.js';
import { loadToolConfig } from '../src/config.js';
import type { Connection } from '@solana/web3.js';

export { type ChainFile, loadOrCreateKeypair, readChainFile };

export const TEST_USDC_DECIMALS = 6;
export const DEFAULT_FEE_BPS = 250;
export const DEFAULT_REVIEW_WINDOW_S = 3 * 24 * 3600;
/** Longest review window the dev config accepts (seconds). */
export const DEFAULT_MAX_REVIEW_WINDOW_S = 30 * 24 * 3600;
/** Longest delivery window the dev config accepts (seconds): listings take up to 365 days, plus one. */
export const DEFAULT_MAX_DELIVERY_WINDOW_S = 366 * 24 * 3600;
const MIN_BALANCE = 10n * BigInt(LAMPORTS_PER_SOL);
const AIRDROP_LAMPORTS = 100 * LAMPORTS_PER_SOL;

export interface BootstrapResult extends ChainFile {
  /** what this run created (empty on a re-run) */
  created: string[];
  warnings: string[];
  ms: number;
}

export const KEY_NAMES = ['service', 'admin', 'treasury', 'usdc-mint-authority', 'usdc-mint', 'sponsor'] as const;
export type KeyName = (typeof KEY_NAMES)[number];

async function waitSignature(connection: Connection, signature: string, timeoutMs = 30_000) {
  const start = Date.now();
  for (;;) {
    const st = (await connection.getSignatureStatuses([signature])).value[0];
    if (st?.err) throw new Error(`airdrop ${signature} failed: ${JSON.stringify(st.err)}`);
    if (st && st.confirmationStatus !== 'processed') return;
    if (Date.now() - start > timeoutMs) throw new Error(`airdrop ${signature} not confirmed in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Airdrop `lamports` to `to` when its balance is below `min`. Returns true when it airdropped. */
export async function ensureSol(connection: Connection, to: PublicKey, min = MIN_BALANCE, lamports = AIRDROP_LAMPORTS): Promise<boolean> {
  const balance = BigInt(await connection.getBalance(to, 'confirmed'));
  if (balance >= min) return false;
  const sig = await connection.requestAirdrop(to, lamports);
  await waitSignature(connection, sig);
  return true;
}

/**
 * The dev admin key of `dataDir` (created when missing), base58: pass it to `startLocalnet` as
 * `escrowUpgradeAuthority` so the bootstrap may initialise the escrow config there.
 */
export function adminPublicKeyFor(dataDir: string): string {
  return loadOrCreateKeypair(resolve(dataDir), 'admin').publicKey.toBase58();
}

export async function bootstrapLocalnet(opts: { rpcUrl: string; dataDir: string; programId?: string }): Promise<BootstrapResult> {
  const started = Date.now();
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const created: string[] = [];
  const warnings: string[] = [];
  const keys = Object.fromEntries(KEY_NAMES.map((n) => [n, loadOrCreateKeypair(dataDir, n)])) as Record<KeyName, Keypair>;
  const programId = opts.programId ?? (escrowIdl as { address: string }).address;
  const connection = createConnection(opts.rpcUrl);

  // 2. SOL for the payers
  // the fee sponsor (FEE_SPONSORSHIP, issue 26 item 5) is a key of its own: its balance caps what sponsorship costs
  const [svcAir, adminAir, sponsorAir] = await Promise.all([
    ensureSol(connection, keys.service.publicKey),
    ensureSol(connection, keys.admin.publicKey, BigInt(LAMPORTS_PER_SOL), 5 * LAMPORTS_PER_SOL),
    ensureSol(connection, keys.sponsor.publicKey, BigInt(LAMPORTS_PER_SOL), 5 * LAMPORTS_PER_SOL),
  ]);
  if (svcAir) created.push('airdrop:service');
  if (adminAir) created.push('airdrop:admin');
  if (sponsorAir) created.push('airdrop:sponsor');

  // 3. test USDC mint
  const usdcMint = keys['usdc-mint'].publicKey;
  const mintInfo = await connection.getAccountInfo(usdcMint, 'confirmed');
  if (!mintInfo) {
    const lamports = await connection.getMinimumBalanceForRentExemption(MINT_SIZE);
    const tx = new Transaction().add(
      SystemProgram.createAccount({
        fromPubkey: keys.service.publicKey,
        newAccountPubkey: usdcMint,
        lamports,
        space: MINT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeMint2Instruction(usdcMint, TEST_USDC_DECIMALS, keys['usdc-mint-authority'].publicKey, null, TOKEN_PROGRAM_ID),
    );
    await sendAndConfirm(connection, tx, [keys.service, keys['usdc-mint']], { errors: { action: 'creating the test USDC mint' } });
    created.push('usdc-mint');
  } else if (!mintInfo.owner.equals(TOKEN_PROGRAM_ID)) {
    warnings.push(`account ${usdcMint.toBase58()} exists but is not an SPL Token mint`);
  }

  const currencies: Required<CurrencyInfo>[] = [
    { code: 'USDC', mint: usdcMint.toBase58(), decimals: TEST_USDC_DECIMALS, tokenProgram: TOKEN_PROGRAM_ID.toBase58() },
    { code: 'SOL', mint: NATIVE_MINT.toBase58(), decimals: 9, tokenProgram: TOKEN_PROGRAM_ID.toBase58() },
  ];
  const chain = createChain({ rpcUrl: opts.rpcUrl, serviceKeypair: keys.service, programId, currencies });

  // 4. escrow config; accounts an earlier version of the program wrote (a ledger from before an upgrade)
  // are migrated first: on the dev localnet the admin key is the program's upgrade authority
  const legacy = await chain.escrow.legacyAccounts();
  if (legacy.config || legacy.orders.length) {
    const migrated = await chain.escrow.migrateLegacyAccounts(keys.admin, {
      maxReviewWindow: DEFAULT_MAX_REVIEW_WINDOW_S,
      maxDeliveryWindow: DEFAULT_MAX_DELIVERY_WINDOW_S,
    });
    if (migrated.config) created.push('escrow-config-migrated');
    for (const order of migrated.orders) created.push(`escrow-order-migrated:${order}`);
  }
  const cfg = await chain.escrow.fetchConfig();
  if (!cfg) {
    await chain.escrow.initializeConfig({
      admin: keys.admin,
      platformAuthority: keys.service.publicKey.toBase58(),
      arbiter: keys.service.publicKey.toBase58(),
      treasury: keys.treasury.publicKey.toBase58(),
      feeBps: DEFAULT_FEE_BPS,
      defaultReviewWindow: DEFAULT_REVIEW_WINDOW_S,
      maxReviewWindow: DEFAULT_MAX_REVIEW_WINDOW_S,
      maxDeliveryWindow: DEFAULT_MAX_DELIVERY_WINDOW_S,
      allowedMints: currencies.map((c) => c.mint),
    });
    created.push('escrow-config');
  } else {
    if (cfg.platformAuthority !== keys.service.publicKey.toBase58()) {
      warnings.push(`escrow config platform_authority is ${cfg.platformAuthority}, not this data dir's service key`);
    }
    for (const c of currencies) {
      if (!cfg.allowedMints.includes(c.mint)) warnings.push(`escrow config does not allow mint ${c.code} ${c.mint}`);
    }
  }
  const finalCfg = cfg ?? (await chain.escrow.fetchConfig());
  const treasury = new PublicKey(finalCfg?.treasury ?? keys.treasury.publicKey);

  // 5. treasury token accounts (idempotent create in one transaction when any is missing)
  const treasuryAtas = currencies.map((c) => getAssociatedTokenAddressSync(new PublicKey(c.mint), treasury, true, new PublicKey(c.tokenProgram)));
  const existing = await connection.getMultipleAccountsInfo(treasuryAtas, 'confirmed');
  const missing = currencies.filter((_, i) => !existing[i]);
  if (missing.length) {
    const tx = new Transaction().add(
      ...missing.map((c) =>
        createAssociatedTokenAccountIdempotentInstruction(
          keys.service.publicKey,
          getAssociatedTokenAddressSync(new PublicKey(c.mint), treasury, true, new PublicKey(c.tokenProgram)),
          treasury,
          new PublicKey(c.mint),
          new PublicKey(c.tokenProgram),
        ),
      ),
    );
    await sendAndConfirm(connection, tx, [keys.service], { errors: { action: 'creating treasury token accounts' } });
    created.push(...missing.map((c) => `treasury-ata:${c.code}`));
  }

  const file: ChainFile = {
    rpcUrl: opts.rpcUrl,
    programId,
    currencies,
    servicePublicKey: keys.service.publicKey.toBase58(),
    adminPublicKey: keys.admin.publicKey.toBase58(),
    arbiter: finalCfg?.arbiter ?? keys.service.publicKey.toBase58(),
    treasury: treasury.toBase58(),
    usdcMint: usdcMint.toBase58(),
    usdcMintAuthority: keys['usdc-mint-authority'].publicKey.toBase58(),
    feeBps: finalCfg?.feeBps ?? DEFAULT_FEE_BPS,
    defaultReviewWindow: finalCfg?.defaultReviewWindow ?? DEFAULT_REVIEW_WINDOW_S,
    keysDir: join(dataDir, 'keys'),
    bootstrappedAt: new Date().toISOString(),
  };
  const tmp = join(dataDir, `chain.json.${process.pid}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`);
  renameSync(tmp, join(dataDir, 'chain.json'));
  return { ...file, created, warnings, ms: Date.now() - started };
}

/**
 * Faucet: mint `amountBaseUnits` test USDC to `toWallet`'s associated token account (created when
 * missing; the service pays, the usdc-mint-authority signs). Needs a bootstrapped DATA_DIR.
 */
export async function mintTestUsdc(dataDir: string, rpcUrl: string, toWallet: string, amountBaseUnits: bigint) {
  const file = readChainFile(resolve(dataDir));
  if (!file) throw new Error(`${dataDir}/chain.json missing: run the bootstrap first`);
  const service = loadOrCreateKeypair(resolve(dataDir), 'service');
  const authority = loadOrCreateKeypair(resolve(dataDir), 'usdc-mint-authority');
  const connection = createConnection(rpcUrl);
  const mint = new PublicKey(file.usdcMint);
  const owner = new PublicKey(toWallet);
  const ata = getAssociatedTokenAddressSync(mint, owner, true, TOKEN_PROGRAM_ID);
  const tx = new Transaction().add(
    createAssociatedTokenAccountIdempotentInstruction(service.publicKey, ata, owner, mint, TOKEN_PROGRAM_ID),
    createMintToCheckedInstruction(mint, ata, authority.publicKey, amountBaseUnits, TEST_USDC_DECIMALS, [], TOKEN_PROGRAM_ID),
  );
  const res = await sendAndConfirm(connection, tx, [service, authority], { errors: { action: 'minting test USDC' } });
  return { ...res, tokenAccount: ata.toBase58() };
}

/**
 * After an in-place upgrade of the escrow program (`anchor upgrade` / `solana program deploy` over the
 * same id): migrates the config and every open order an earlier version wrote (EscrowClient
 * `migrateLegacyAccounts`), signed by DATA_DIR/keys/admin.json, which must be the program's upgrade
 * authority. `windows` (seconds) fill a first-release config, which has none. Returns what it migrated.
 */
export async function migrateEscrowAccounts(
  dataDir: string,
  rpcUrl: string,
  programId: string | undefined,
  windows: { maxReviewWindow?: number; maxDeliveryWindow?: number },
) {
  const admin = loadOrCreateKeypair(resolve(dataDir), 'admin');
  const chain = createChain({
    rpcUrl,
    serviceKeypair: admin,
    programId: programId ?? (escrowIdl as { address: string }).address,
    currencies: [],
  });
  return chain.escrow.migrateLegacyAccounts(admin, windows);
}

async function main() {
  const tool = loadToolConfig(process.env);
  const rpcUrl = tool.solanaRpcUrl ?? tool.localnetRpcUrl;
  const dataDir = tool.dataDir;
  const [cmd, wallet, amount] = process.argv.slice(2);
  if (cmd === 'migrate') {
    const seconds = (v: string | undefined) => (v === undefined ? undefined : Number.parseInt(v, 10));
    const res = await migrateEscrowAccounts(dataDir, rpcUrl, tool.escrowProgramId, {
      maxReviewWindow: seconds(wallet) ?? DEFAULT_MAX_REVIEW_WINDOW_S,
      maxDeliveryWindow: seconds(amount) ?? DEFAULT_MAX_DELIVERY_WINDOW_S,
    });
    console.log(JSON.stringify(res, null, 2));
    return;
  }
  if (cmd === 'faucet') {
    if (!wallet || !amount) throw new Error('usage: bootstrap-localnet.ts faucet <wallet> <usdc amount, e.g. 100.5>');
    const res = await mintTestUsdc(dataDir, rpcUrl, wallet, parseUnits(amount, TEST_USDC_DECIMALS));
    console.log(JSON.stringify(res, null, 2));
    return;
  }
  const res = await bootstrapLocalnet({ rpcUrl, dataDir, programId: tool.escrowProgramId });
  console.log(JSON.stringify(res, null, 2));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
