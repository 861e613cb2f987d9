/**
 * The multi-replica harness of `npm run test:replicas` (tests/replicas.nginx.ts) and `npm run test:failover`
 * (tests/failover.pgaf.ts): replicas as `npm run start:server` processes, nginx in front of them, wallets
 * funded on the localnet.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { stopProcessGroup } from './process-group.js';
import { chmodSync, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { createAssociatedTokenAccountIdempotentInstruction, createMintToCheckedInstruction, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { loadOrCreateKeypair, readChainFile, TEST_USDC_DECIMALS } from '../../server/scripts/bootstrap-localnet.js';
import { eventually } from './eventually.js';

const REPO = join(import.meta.dirname, '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Run `fn` over `items`, at most `limit` at a time. */
export async function pool<T, R>(items: T[], limit: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

export interface Replica {
  name: string;
  port: number;
  child: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
}

/** `npm run start:server` in its own process group (npm's `sh -c` does not pass signals on). */
export function startReplica(name: string, port: number, env: Record<string, string>, dir: string, cleanups: Array<() => Promise<void> | void>): Replica {
  const logFile = join(dir, `${name}.log`);
  const out = createWriteStream(logFile);
  const child = spawn('npm', ['run', '-s', 'start:server'], { cwd: REPO, env: { ...process.env, ...env, PORT: String(port) }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const replica = { name, port, child, logFile, exited };
  // the whole group, even when npm itself is gone: the server under it may still run
  cleanups.push(() => stopProcessGroup(child.pid));
  return replica;
}

export async function waitReady(url: string, what: string, ms = 120_000): Promise<void> {
  await eventually(() => fetch(url).then((r) => r.ok, () => false), { what: `${what} ready (${url})`, timeoutMs: ms, intervalMs: 250 });
}

export function nginxConfig(dir: string, port: number, upstreams: number[]): string {
  for (const d of ['client_body', 'proxy', 'logs']) mkdirSync(join(dir, d), { recursive: true });
  // as root the workers run as nobody: let them use the temp dirs
  for (const d of ['client_body', 'proxy']) chmodSync(join(dir, d), 0o777);
  return `
worker_processes 1;
error_log ${dir}/logs/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/proxy;
  uwsgi_temp_path ${dir}/proxy;
  scgi_temp_path ${dir}/proxy;
  log_format upstream '$status $request_method $uri $upstream_addr';
  upstream bazaar {
${upstreams.map((p) => `    server 127.0.0.1:${p};`).join('\n')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    access_log ${dir}/logs/access.log upstream;
    location / {
      proxy_pass http://bazaar;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_next_upstream off;
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`;
}

/** Wait until `sig` is confirmed (polling: no websocket subscription left open when the localnet stops). */
export async function waitConfirmed(connection: Connection, sig: string): Promise<void> {
  const st = await eventually(
    async () => {
      const st = (await connection.getSignatureStatuses([sig])).value[0];
      return st && (st.err || st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized') ? st : null;
    },
    { what: `transaction ${sig} confirmed`, timeoutMs: 30_000, intervalMs: 100 },
  );
  if (st.err) throw new Error(`transaction ${sig} failed: ${JSON.stringify(st.err)}`);
}

/** A batch of wallets: SOL for fees and rent, test USDC (the dev faucet keys of `dataDir`), 20 per transaction. */
export async function fundWallets(connection: Connection, dataDir: string, owners: PublicKey[], usdcBaseUnits: bigint): Promise<void> {
  const chainFile = readChainFile(dataDir)!;
  const service = loadOrCreateKeypair(dataDir, 'service');
  const authority = loadOrCreateKeypair(dataDir, 'usdc-mint-authority');
  const mint = new PublicKey(chainFile.usdcMint);
  const faucet = Keypair.generate();
  const sig = await connection.requestAirdrop(faucet.publicKey, owners.length * 0.1 * LAMPORTS_PER_SOL + LAMPORTS_PER_SOL);
  await waitConfirmed(connection, sig);
  const batches: PublicKey[][] = [];
  for (let i = 0; i < owners.length; i += 5) batches.push(owners.slice(i, i + 5));
  await pool(batches, 4, async (batch) => {
    const tx = new Transaction();
    for (const owner of batch) {
      const ata = getAssociatedTokenAddressSync(mint, owner, true, TOKEN_PROGRAM_ID);
      tx.add(
        SystemProgram.transfer({ fromPubkey: faucet.publicKey, toPubkey: owner, lamports: 0.1 * LAMPORTS_PER_SOL }),
        createAssociatedTokenAccountIdempotentInstruction(service.publicKey, ata, owner, mint, TOKEN_PROGRAM_ID),
        createMintToCheckedInstruction(mint, ata, authority.publicKey, usdcBaseUnits, TEST_USDC_DECIMALS, [], TOKEN_PROGRAM_ID),
      );
    }
    tx.feePayer = service.publicKey;
    tx.recentBlockhash = (await connection.getLatestBlockhash('confirmed')).blockhash;
    tx.sign(service, authority, faucet);
    const s = await connection.sendRawTransaction(tx.serialize());
    await waitConfirmed(connection, s);
  });
}

