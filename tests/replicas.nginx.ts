/**
 * `npm run test:replicas`: two replicas of the service behind nginx (round robin) on ONE PostgreSQL
 * database and ONE localnet, driven through the load balancer with the client SDK (issue 14).
 *
 *   PostgreSQL  TEST_DATABASE_URL (a throw-away database is created on it and dropped), else a server of
 *               its own started from Debian's postgresql (initdb in a temp dir, a free port)
 *   localnet    one, bootstrapped into a temp DATA_DIR that both replicas share (keys, chain.json)
 *   replicas    two `npm run start:server` on free ports, same DATABASE_URL and JWT_SECRET
 *   nginx       Debian's nginx-light, config generated in a temp dir (`nginx -p dir -c nginx.conf`), no
 *               root needed; access log with the upstream of every request
 *
 * Then, through nginx: N (default 50) concurrent full order lifecycles (the buyer pays from their own
 * wallet: signs the fund transaction and sends it to the chain itself; the leader's payment watcher
 * detects it; the seller delivers; the buyer confirms; each createOrder is sent twice with its
 * Idempotency-Key and must return the same order, whichever replica answers), then the login rate limit per wallet address (verify_login requests it did not sign).
 * Checks (each one test): every order completed exactly once; no chain action sent twice (every escrow
 * account has exactly three transactions on chain: fund, mark_delivered, release; and one confirmed
 * intent per action in the database); both replicas served traffic; one replica held the leader lease
 * and only it started the background loops; the (N+1)st login of one wallet across both replicas is 429;
 * the leader killed with SIGKILL is replaced by the other replica within the lease TTL.
 *
 * Prints `N passed, N failed` last; exit code 0 only when all passed. Env: TEST_DATABASE_URL, REPLICAS_ORDERS
 * (default 50), NGINX (default /usr/sbin/nginx), CARGO_TARGET_DIR (the localnet build).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import pg from 'pg';
import { createBazaarClient, newIdempotencyKey, withRetryAfter, type BazaarClient } from '@bazaar/client-sdk';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';
import { adminPublicKeyFor, bootstrapLocalnet } from '../server/scripts/bootstrap-localnet.js';
import { startLocalnet, type Localnet } from '../server/scripts/localnet-process.js';
import { eventually } from './helpers/eventually.js';
import { fundWallets, nginxConfig, pool, startReplica, waitConfirmed, waitReady } from './helpers/replicas.js';
import { freePort } from './helpers/ports.js';
import { checkRun } from './helpers/check-run.js';

const N = Number(process.env.REPLICAS_ORDERS ?? 50);
const SELLERS = 5;
const ADDRESS_LIMIT = 10;
const NGINX = process.env.NGINX ?? '/usr/sbin/nginx';
const { sec, log, check, allOk, cleanups, run } = checkRun('replicas', 360_000, 'the two-replica test');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));



/** PostgreSQL: TEST_DATABASE_URL, else a server of our own. Returns the base URL (an admin database). */
async function postgresServer(): Promise<string> {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  const bins = readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`).filter((b) => existsSync(`${b}/initdb`));
  const bin = bins.sort().at(-1);
  if (!bin) throw new Error('no TEST_DATABASE_URL and no PostgreSQL server installed (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'bazaar-replicas-pg-'));
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string) => {
    const r = asRoot ? spawnSync('su', ['postgres', '-c', cmd], { encoding: 'utf8' }) : spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr || r.stdout}`);
  };
  if (asRoot) chownSync(dir, Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()), Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()));
  run(`${bin}/initdb -D ${dir} -A trust -U postgres >/dev/null`);
  run(`${bin}/pg_ctl -D ${dir} -o '-p ${port} -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=100' -l ${dir}/log -w start >/dev/null`);
  cleanups.push(() => {
    spawnSync(asRoot ? 'su' : 'sh', asRoot ? ['postgres', '-c', `${bin}/pg_ctl -D ${dir} -m fast stop`] : ['-c', `${bin}/pg_ctl -D ${dir} -m fast stop`]);
    rmSync(dir, { recursive: true, force: true });
  });
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

async function freshDatabase(base: string): Promise<string> {
  const name = `bazaar_replicas_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  cleanups.push(async () => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.end();
  });
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bazaar-replicas-'));
  chmodSync(work, 0o755);
  cleanups.push(() => {
    if (allOk()) rmSync(work, { recursive: true, force: true });
    else console.log(`[replicas] logs kept in ${work}`);
  });
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);

  log('PostgreSQL and a fresh database');
  const databaseUrl = await freshDatabase(await postgresServer());

  log('localnet (one, bootstrapped)');
  const localnet: Localnet = await startLocalnet({ escrowUpgradeAuthority: adminPublicKeyFor(dataDir) });
  cleanups.push(() => localnet.stop());
  await bootstrapLocalnet({ rpcUrl: localnet.rpcUrl, dataDir });
  const connection = new Connection(localnet.rpcUrl, 'confirmed');

  const [lbPort, portA, portB] = [await freePort(), await freePort(), await freePort()];
  const base = `http://127.0.0.1:${lbPort}`;
  const env = {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    SOLANA_RPC_URL: localnet.rpcUrl,
    JWT_SECRET: randomBytes(32).toString('hex'),
    PUBLIC_BASE_URL: base,
    SIWS_DOMAINS: `127.0.0.1:${lbPort}`,
    TRUST_PROXY: '1',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    AUTH_RATE_LIMIT_PER_MINUTE: '100000',
    AUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: String(ADDRESS_LIMIT),
    ORDER_WATCHER_INTERVAL_MS: '500',
    ORDER_MAX_UNPAID_PER_BUYER: '3',
    // the N buyers all reach nginx from 127.0.0.1: the per-network hold limit would stop the lifecycles
    ORDER_MAX_UNPAID_PER_IP: String(N),
    LEADER_LEASE_TTL_MS: '10000',
    LEADER_LEASE_RENEW_MS: '2000',
    DB_POOL_MAX: '8',
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000',
  };
  log(`replicas on ${portA} and ${portB} (both migrate the database at start: at the same time)`);
  const replicas = [startReplica('replica-a', portA, env, work, cleanups), startReplica('replica-b', portB, env, work, cleanups)];
  await Promise.all(replicas.map((r) => waitReady(`http://127.0.0.1:${r.port}/readyz`, r.name)));

  log(`nginx on ${lbPort}`);
  const nginxDir = join(work, 'nginx');
  mkdirSync(nginxDir);
  chmodSync(nginxDir, 0o755);
  writeFileSync(join(nginxDir, 'nginx.conf'), nginxConfig(nginxDir, lbPort, [portA, portB]));
  const nginx = spawn(NGINX, ['-p', nginxDir, '-c', join(nginxDir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'inherit', 'inherit'] });
  cleanups.push(async () => {
    nginx.kill('SIGQUIT');
    await new Promise((r) => (nginx.exitCode !== null ? r(null) : nginx.once('exit', r)));
  });
  await waitReady(`${base}/healthz`, 'nginx');
  check('two replicas and nginx started on one PostgreSQL and one localnet', true, `replicas :${portA} :${portB}, nginx :${lbPort}`);

  // --- N concurrent order lifecycles through nginx ----------------------------------------------
  log(`${SELLERS} sellers log in and create ${N} listings`);
  const client = () => createBazaarClient({ baseUrl: base });
  const sellers = await Promise.all(
    Array.from({ length: SELLERS }, async () => {
      const kp = Keypair.generate();
      const c = client();
      await loginWithWallet(c, keypairSigner(kp.secretKey));
      return { kp, c };
    }),
  );
  const listings = await pool(
    Array.from({ length: N }, (_, i) => i),
    8,
    async (i) => {
      const seller = sellers[i % SELLERS]!;
      const r = await seller.c.listings.createListing({
        body: { title: `Replica test service ${i}`, description: `Listing ${i} of the two-replica test.`, price: 5, currency: 'USDC', category: 'design', duration: 5 },
      });
      if (r.status !== 201) throw new Error(`createListing ${r.status}: ${JSON.stringify(r.body)}`);
      return { id: r.body.listing_id, seller };
    },
  );
  log(`${N} buyers get SOL and test USDC`);
  const buyers = Array.from({ length: N }, () => Keypair.generate());
  await fundWallets(connection, dataDir, buyers.map((b) => b.publicKey), 10_000_000n);

  log(`${N} concurrent lifecycles: login, order, pay from the wallet (sent to the chain), deliver, confirm`);
  const tLife = Date.now();
  let retried503 = 0;
  const lifecycle = async (i: number) => {
    const kp = buyers[i]!;
    const buyer: BazaarClient = client();
    // a login refused with 503 + Retry-After (the database work queue full under the 50-login burst on 2 shared
    // cores: nothing was kept, issue 28 measures it) is tried again after the wait, as any client does; counted
    for (let attempt = 1; ; attempt++) {
      try {
        await loginWithWallet(buyer, keypairSigner(kp.secretKey));
        break;
      } catch (err) {
        if (attempt >= 3 || !/HTTP 503\b/.test(String((err as Error)?.message))) throw err;
        retried503++;
        await new Promise((r) => setTimeout(r, 2_000));
      }
    }
    const key = newIdempotencyKey();
    // a 503 with Retry-After (a lock wait that timed out under 50 concurrent orders: nothing was kept) is retried
    // once with the same Idempotency-Key, as the SDK's withRetryAfter lets any client do; counted and printed
    const ordered = await withRetryAfter(
      async () => {
        const r = await buyer.orders.createOrder({ headers: { 'idempotency-key': key }, body: { listing_id: listings[i]!.id } });
        if (r.status === 503) retried503++;
        return r;
      },
      { statuses: [503], maxWaitSeconds: 5 },
    );
    if (ordered.status !== 201 || !ordered.body.payment) throw new Error(`createOrder ${ordered.status}: ${JSON.stringify(ordered.body)}`);
    const orderId = ordered.body.order_id;
    // the same request again (a client retry, round robin: often the other replica): the same order
    const again = await buyer.orders.createOrder({ headers: { 'idempotency-key': key }, body: { listing_id: listings[i]!.id } });
    if (again.status !== 201 || again.body.order_id !== orderId) throw new Error(`createOrder retry with the same Idempotency-Key: ${again.status} ${JSON.stringify(again.body)}`);
    const tx = Transaction.from(Buffer.from(ordered.body.payment.transaction, 'base64'));
    tx.partialSign(kp);
    const sig = await connection.sendRawTransaction(tx.serialize());
    await waitConfirmed(connection, sig);
    // the leader's payment watcher sees the escrow; any replica answers the read
    await eventually(
      async () => {
        const o = await buyer.orders.getOrder({ params: { order_id: orderId } });
        return o.status === 200 && o.body.status === 'in_progress';
      },
      { what: `order ${orderId} seen funded (in_progress)`, timeoutMs: 60_000, intervalMs: 200 },
    );
    const delivered = await listings[i]!.seller.c.orders.deliverOrder({ params: { order_id: orderId } });
    if (delivered.status !== 200 || delivered.body.status !== 'delivered') throw new Error(`deliver ${delivered.status}: ${JSON.stringify(delivered.body)}`);
    const confirmed = await buyer.orders.confirmOrder({ params: { order_id: orderId } });
    if (confirmed.status !== 200 || confirmed.body.status !== 'completed') throw new Error(`confirm ${confirmed.status}: ${JSON.stringify(confirmed.body)}`);
    return { orderId, escrow: confirmed.body.escrow_account_address, fundSig: sig };
  };
  const settled = await Promise.allSettled(Array.from({ length: N }, (_, i) => lifecycle(i)));
  const done = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const errors = settled.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error)?.message ?? s.reason)] : []));
  check(`${N} concurrent lifecycles completed through nginx`, done.length === N, `${done.length}/${N} in ${((Date.now() - tLife) / 1000).toFixed(1)} s (503 retried: ${retried503})${errors.length ? `; first error: ${errors[0]}` : ''}`);

  // --- every order completed once, no chain action sent twice -------------------------------------
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const orders = await db.query<{ id: string; status: string }>(`SELECT id::text, status FROM orders`);
  const intents = await db.query<{ order_id: string; action: string; status: string; n: string }>(
    `SELECT order_id::text, action, status, count(*)::text AS n FROM chain_intents WHERE order_id IS NOT NULL GROUP BY 1, 2, 3`,
  );
  const completedOnce = orders.rows.length === N && orders.rows.every((o) => o.status === 'completed');
  const events = await db.query<{ resource_id: string; n: string }>(`SELECT resource_id::text, count(*)::text AS n FROM events WHERE type = 'order.completed' GROUP BY 1`);
  check(
    'every order completed exactly once',
    completedOnce && events.rows.length === N && events.rows.every((e) => e.n === '1'),
    `${orders.rows.filter((o) => o.status === 'completed').length}/${orders.rows.length} orders completed, ${events.rows.length} order.completed events (one each: ${events.rows.every((e) => e.n === '1')})`,
  );
  const perOrder = new Map<string, string[]>();
  for (const r of intents.rows) for (let k = 0; k < Number(r.n); k++) perOrder.set(r.order_id, [...(perOrder.get(r.order_id) ?? []), `${r.action}:${r.status}`]);
  // one confirmed intent per action and order (the fund transaction the buyer sent is recorded too)
  const patterns = new Set([...perOrder.values()].map((list) => list.sort().join(',')));
  const intentsOk =
    perOrder.size === N &&
    [...perOrder.values()].every((list) => {
      const actions = list.map((x) => x.split(':')[0]);
      return list.every((x) => x.endsWith(':confirmed')) && new Set(actions).size === actions.length && actions.includes('mark_delivered') && actions.includes('release');
    });
  const onChain = await pool(done, 8, async (d) => (await connection.getSignaturesForAddress(new PublicKey(d.escrow), { limit: 20 }, 'confirmed')).length);
  const chainOk = onChain.every((n) => n === 3);
  check(
    'no chain action sent twice',
    intentsOk && chainOk && done.length === N,
    `intents per order: ${[...patterns].join(' | ')} (${intentsOk ? 'one confirmed intent per action' : 'DUPLICATES OR FAILURES'}); transactions per escrow account on chain: ${[...new Set(onChain)].join('/')} (fund, mark_delivered, release)`,
  );

  // --- both replicas served; one leader ran the loops -----------------------------------------------
  const access = readFileSync(join(nginxDir, 'logs', 'access.log'), 'utf8').trim().split('\n');
  const per = (p: number) => access.filter((l) => l.endsWith(`127.0.0.1:${p}`)).length;
  const [servedA, servedB] = [per(portA), per(portB)];
  check('both replicas served traffic (nginx round robin)', servedA > access.length * 0.3 && servedB > access.length * 0.3, `${access.length} requests: ${servedA} by :${portA}, ${servedB} by :${portB}`);
  const lease = await db.query<{ holder: string; term: string }>(`SELECT holder, term::text FROM leader_leases WHERE name = 'background-loops'`);
  const won = replicas.map((r) => (readFileSync(r.logFile, 'utf8').match(/leader lease won/g) ?? []).length);
  check('exactly one replica held the leader lease and ran the background loops', lease.rows.length === 1 && won.filter((n) => n > 0).length === 1 && won.reduce((a, b) => a + b) === 1, `holder ${lease.rows[0]?.holder} (term ${lease.rows[0]?.term}); "leader lease won" per replica: ${won.join(', ')}`);

  // --- the login rate limit is global ---------------------------------------------------------------
  const wallet = Keypair.generate().publicKey.toBase58();
  const served: string[] = [];
  const statuses: number[] = [];
  // verify_login requests the wallet did not sign (a garbage signature) are what the address limit counts
  const unsigned = JSON.stringify({ address: wallet, signed_message: Buffer.from('not signed').toString('base64'), signature: Buffer.alloc(64, 7).toString('base64') });
  for (let i = 0; i <= ADDRESS_LIMIT; i++) {
    const r = await fetch(`${base}/api/v1/auth/verify_login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: unsigned });
    statuses.push(r.status);
    served.push(r.headers.get('x-upstream') ?? '?');
    await r.arrayBuffer();
  }
  const expected = [...Array(ADDRESS_LIMIT).fill(401), 429];
  check(
    `the login rate limit is global: the ${ADDRESS_LIMIT + 1}th unsigned verify_login naming one wallet across both replicas is 429`,
    JSON.stringify(statuses) === JSON.stringify(expected) && new Set(served.slice(0, ADDRESS_LIMIT)).size === 2,
    `statuses ${statuses.join(',')}; served by ${[...new Set(served)].join(' and ')}`,
  );

  // --- the leader dies (kill -9): the other replica takes the loops over within the lease TTL --------
  const leaderIdx = won.findIndex((n) => n > 0);
  if (leaderIdx >= 0) {
    const dead = replicas[leaderIdx]!;
    const heir = replicas[1 - leaderIdx]!;
    const killedAt = Date.now();
    process.kill(-dead.child.pid!, 'SIGKILL');
    await dead.exited;
    const ttl = Number(env.LEADER_LEASE_TTL_MS);
    let tookMs = -1;
    while (Date.now() - killedAt < ttl + 10_000) {
      if (/leader lease won/.test(readFileSync(heir.logFile, 'utf8'))) {
        tookMs = Date.now() - killedAt;
        break;
      }
      await sleep(100);
    }
    const after = await db.query<{ holder: string; term: string }>(`SELECT holder, term::text FROM leader_leases WHERE name = 'background-loops'`);
    check(
      'the leader killed (SIGKILL): the other replica takes the background loops over within the lease TTL',
      tookMs >= 0 && tookMs <= ttl + Number(env.LEADER_LEASE_RENEW_MS) && after.rows[0]?.term === '2',
      `took ${tookMs} ms (TTL ${ttl} ms, renewal ${env.LEADER_LEASE_RENEW_MS} ms); new holder ${after.rows[0]?.holder}, term ${after.rows[0]?.term}`,
    );
  }
  await db.end();
}

run(main);
