/**
 * Dev key files and the bootstrap's chain.json, shared by server/scripts/bootstrap-localnet.ts and
 * the server start-up (config): keys live in DATA_DIR/keys/<name>.json as 64-byte secret-key arrays
 * (solana-keygen format), created with 0600 permissions inside a 0700 directory. DATA_DIR (data/ by
 * default) is git-ignored: never commit keys.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import type { CurrencyInfo } from './types.js';

/** DATA_DIR/chain.json as written by the dev bootstrap. */
export interface ChainFile {
  rpcUrl: string;
  programId: string;
  currencies: Required<CurrencyInfo>[];
  servicePublicKey: string;
  adminPublicKey: string;
  arbiter: string;
  treasury: string;
  usdcMint: string;
  usdcMintAuthority: string;
  feeBps: number;
  defaultReviewWindow: number;
  keysDir: string;
  bootstrappedAt: string;
}

/** Read a keypair file (a JSON array of the 64 secret-key bytes). */
export function readKeypairFile(file: string): Keypair {
  return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(file, 'utf8')) as number[]));
}

/** Load DATA_DIR/keys/<name>.json; create it (0600, directory 0700) when missing. */
export function loadOrCreateKeypair(dataDir: string, name: string): Keypair {
  const dir = join(dataDir, 'keys');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${name}.json`);
  if (existsSync(file)) return readKeypairFile(file);
  const kp = Keypair.generate();
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(Array.from(kp.secretKey)), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return kp;
}

/** DATA_DIR/chain.json, or null before the first bootstrap. */
export function readChainFile(dataDir: string): ChainFile | null {
  const file = join(dataDir, 'chain.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ChainFile) : null;
}

/**
 * createChain options from a bootstrapped DATA_DIR: rpcUrl, programId and currencies from
 * chain.json, the service keypair from keys/service.json. Null when chain.json is missing.
 */
export function chainOptionsFromDataDir(dataDir: string, rpcUrl?: string) {
  const file = readChainFile(dataDir);
  if (!file) return null;
  return {
    rpcUrl: rpcUrl ?? file.rpcUrl,
    programId: file.programId,
    currencies: file.currencies as CurrencyInfo[],
    serviceKeypair: loadOrCreateKeypair(dataDir, 'service'),
  };
}

/**
 * The fee sponsor's keypair (issue 26 item 5): `keypairPath` (FEE_SPONSOR_KEYPAIR_PATH), or, with
 * `defaultKeypair`, DATA_DIR/keys/sponsor.json (created when missing). Throws when the file is unreadable.
 */
export function sponsorKeypair(s: { defaultKeypair: boolean; keypairPath: string }, dataDir: string): Keypair {
  return s.defaultKeypair ? loadOrCreateKeypair(dataDir, 'sponsor') : readKeypairFile(s.keypairPath);
}
