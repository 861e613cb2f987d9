/**
 * The main job, `npm start`: everything Bazaar needs on one machine, then the HTTP server.
 *
 * With no configuration (embedded defaults, no external services):
 *  1. the embedded PostgreSQL (PGlite) under DATA_DIR/pglite, migrated at start-up (server main);
 *  2. the localnet (programs/localnet, built with cargo on first use; ledger snapshots in
 *     DATA_DIR/ledger so chain state survives restarts together with the database) on
 *     127.0.0.1:SOLANA_RPC_PORT (default 8899; websocket on the next port);
 *  3. the idempotent dev bootstrap (server/scripts/bootstrap-localnet.ts): dev keys in
 *     DATA_DIR/keys, a test USDC mint, the escrow config, DATA_DIR/chain.json;
 *  4. the server (server/src/main.ts) on PORT (default 3000).
 * Then it builds the web app when stale (web/, served at /app/; server/scripts/web-build.ts) and prints the URLs (API, web app, /docs, RPC) and where the dev keys live.
 * On the embedded localnet the dev admin key's wallet (DATA_DIR/keys/admin.json) is made an operator admin
 * after the migrations (the `npm run admin:grant` path, audit actor `dev-admin`): `npm run demo:operator`
 * signs in with it. Against another RPC nobody is made an admin (`npm run admin:grant` does it).
 *
 * With configuration: DATABASE_URL=postgres://... uses a real PostgreSQL server; SOLANA_RPC_URL=...
 * uses any Solana RPC instead of the localnet (no localnet is started; the escrow program id, the
 * currencies and the service keypair then come from ESCROW_PROGRAM_ID, CURRENCIES and
 * SERVICE_KEYPAIR_PATH, or from a DATA_DIR/chain.json written by `CHAIN_BOOTSTRAP=1 npm start`,
 * which runs the same bootstrap against that RPC: the service key must hold SOL there).
 * Every other variable is the server's (server/src/config.ts); npm start only turns ACTIONS_ENABLED on by default
 * (Solana Actions / blinks, README "Share a listing as a blink").
 *
 * Dev defaults: with the embedded localnet (no SOLANA_RPC_URL) the server allows browser origins and SIWS
 * domains on localhost / 127.0.0.1 at any port unless CORS_ORIGINS / SIWS_DOMAINS say otherwise
 * (config.ts `dev`); against another RPC everything is explicit, as in production.
 *
 * Start-up failures with a known cause print one line naming the variable to change (server/src/startup.ts):
 * PORT taken (checked before the localnet starts), SOLANA_RPC_PORT taken, cargo missing, DATA_DIR a file
 * or not writable, DATABASE_URL unreachable, a bad value. The banner's `npm run demo` line carries the
 * BAZAAR_URL / DATA_DIR the demo needs when they differ from its defaults.
 *
 * SIGINT/SIGTERM (handlers installed before anything starts, server/src/lifecycle.ts): the server
 * drains and closes the database, then the localnet snapshots its ledger and exits; exit 0 within
 * SHUTDOWN_TIMEOUT_MS, else 1. A signal during start-up waits for the step in progress and stops what
 * was started. If the localnet dies on its own the server is stopped too (exit code 1).
 */
import { existsSync } from 'node:fs';
import { LAMPORTS_PER_SOL } from '@solana/web3.js';
import { createConnection, sponsorKeypair } from '../src/chain/index.js';
import { join } from 'node:path';
import { loadStartConfig, loadToolConfig, scriptEnvFor, type Config, type StartConfig } from '../src/config.js';
import { Lifecycle, StartAborted } from '../src/lifecycle.js';
import { announcedOrigin } from '../src/http/docs.js';
import { clientIpNote } from '../src/http/proxy-warning.js';
import { createLogger } from '../src/logger.js';
import { main as startServer } from '../src/main.js';
import { withSystemActor } from '../src/lib/request-context.js';
import { grantRoleToWallet } from '../src/modules/auth/roles.js';
import { ensureDataDir, ensureHttpPortFree, ensureLocalnetPortsFree, loadServerConfig, probeDatabase, reportStartupFailure } from '../src/startup.js';
import { adminPublicKeyFor, bootstrapLocalnet } from './bootstrap-localnet.js';
import { localnetNeedsBuild, startLocalnet, type Localnet } from './localnet-process.js';
import { ensureWebApp, webAppNeedsBuild } from './web-build.js';
import { WEB_APP_DIR } from '../src/http/web-app.js';

const say = (line: string) => process.stderr.write(`[bazaar] ${line}\n`);

let start: StartConfig;
let early: Config;
const env = { ...process.env };
try {
  start = loadStartConfig(env);
  ensureDataDir(start.dataDir);
  env.DATA_DIR = start.dataDir;
  // the deadline, log level and listener only: the server reads its full configuration after the chain bootstrap
  early = loadServerConfig(env);
} catch (err) {
  reportStartupFailure(err);
  process.exit(1);
}
const dataDir = start.dataDir;
/** embedded defaults: the localnet runs here, so local browser origins and SIWS domains are allowed */
const dev = !start.solanaRpcUrl;
// npm start's default: the Solana Actions (blinks) are served unless ACTIONS_ENABLED says otherwise (the server's own default is off)
env.ACTIONS_ENABLED = String(start.actionsEnabled);

/** `VAR=value` safe for a POSIX shell. */
const shellWord = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

const lifecycle = new Lifecycle(createLogger(early.logLevel), early.shutdownTimeoutMs);
lifecycle.installSignalHandlers((code) => {
  say(`stopped (exit code ${code})`);
  process.exit(code);
});

async function run() {
  const started = Date.now();
  let localnet: Localnet | null = null;
  // fail before the localnet and the bootstrap (minutes on a cold cache) rather than after them
  await ensureHttpPortFree(early.port, early.host);
  if (early.databaseUrl) await probeDatabase(early.databaseUrl);

  if (!start.solanaRpcUrl) {
    const port = start.solanaRpcPort;
    await ensureLocalnetPortsFree(port);
    const build = localnetNeedsBuild() ? ' (building it with cargo first: several minutes on a cold cache)' : '';
    say(`starting the localnet on 127.0.0.1:${port}${build}`);
    const starting = startLocalnet({
      port,
      ledgerDir: join(dataDir, 'ledger'),
      readyTimeoutMs: 120_000,
      // the dev admin key is the escrow's upgrade authority there, so the bootstrap can configure it
      escrowUpgradeAuthority: adminPublicKeyFor(dataDir),
      onExit: (code) => {
        if (lifecycle.isStopping) return;
        say(`the localnet exited on its own (code ${code}); stopping`);
        void lifecycle.stop('localnet exited').finally(() => process.exit(1));
      },
    });
    // registered first, so it runs last: the server stops before the localnet snapshots its ledger
    lifecycle.onStop(async () => {
      const ln = await starting.catch(() => null);
      await ln?.stop();
    });
    localnet = await starting;
    lifecycle.checkpoint();
    env.SOLANA_RPC_URL = localnet.rpcUrl;
  }

  if (localnet || start.chainBootstrap) {
    const boot = await bootstrapLocalnet({ rpcUrl: localnet?.rpcUrl ?? start.solanaRpcUrl!, dataDir, programId: loadToolConfig(env).escrowProgramId });
    say(`chain bootstrap: ${boot.created.length ? `created ${boot.created.join(', ')}` : 'already in place'} (${boot.ms} ms)`);
    for (const w of boot.warnings) say(`warning: ${w}`);
    lifecycle.checkpoint();
  }

  // the reference web app, served at /app/ (built on first use and after its sources or the SDK changed)
  let webApp = true;
  if (webAppNeedsBuild()) {
    say('building the web app (npm run web:build: about 30 s)');
    try {
      ensureWebApp({ quiet: true });
    } catch (e) {
      webApp = existsSync(join(WEB_APP_DIR, 'index.html'));
      say(`warning: the web app did not build${webApp ? '; serving the previous build' : ''}: ${(e as Error).message.split('\n').slice(0, 12).join('\n')}`);
    }
  }
  lifecycle.checkpoint();

  // the first operator admin on the embedded defaults: the dev admin key (DATA_DIR/keys/admin.json), through the
  // admin:grant path, so `npm run demo:operator` and a person trying the operator routes can sign in as an admin
  // with a key already on this machine. Never against another RPC (production-like): there the first admin is
  // `npm run admin:grant`.
  const devAdmin = dev ? adminPublicKeyFor(dataDir) : null;
  const afterMigrate = devAdmin
    ? async (prisma: Parameters<typeof grantRoleToWallet>[0]) => {
        const r = await withSystemActor('dev-admin', () => grantRoleToWallet(prisma, devAdmin, 'admin'));
        if (r.changed) say(`dev admin: ${devAdmin} (${join(dataDir, 'keys', 'admin.json')}) now holds the admin role`);
      }
    : undefined;
  const { server, config } = await startServer(env, { lifecycle, config: loadServerConfig(env, { dev }), ...(afterMigrate ? { afterMigrate } : {}) });
  const addr = server.address();
  // the origin SIWS expects and /openapi.json names: /docs opened there calls the API from its own origin
  const base = announcedOrigin(config, typeof addr === 'object' && addr ? addr.port : config.port);
  const demoEnv = Object.entries(scriptEnvFor({ baseUrl: base, dataDir })).map(([k, v]) => `${k}=${shellWord(v)} `);
  const lines = [
    `Bazaar is up in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `  API        ${base}/api/v1`,
    webApp ? `  Web app    ${base}/app/   (sign in with a Wallet Standard wallet: Phantom, Solflare, Backpack)` : `  Web app    not built (npm run web:build)`,
    `  API docs   ${base}/docs   (OpenAPI: ${base}/openapi.json)`,
    `  health     ${base}/healthz  ${base}/readyz`,
    config.actionsEnabled
      ? `  blinks     ${base}/actions.json   (Solana Actions: share ${base}/app/listings/<id>; README "Share a listing as a blink")`
      : '  blinks     off (ACTIONS_ENABLED=false)',
    config.metrics?.port != null
      ? `  metrics    http://${config.metrics.host}:${config.metrics.port}/metrics   (Prometheus; METRICS_PORT, README "Metrics and traces")`
      : `  metrics    ${config.metrics?.token ? `${base}/metrics with Authorization: Bearer <METRICS_TOKEN>` : 'off (set METRICS_PORT or METRICS_TOKEN)'}`,
    config.solanaRpcUrls && config.solanaRpcUrls.length > 1
      ? `  Solana RPC ${config.solanaRpcUrls.length} providers, in order of preference (SOLANA_RPC_URLS; failover and health checks, README "Several RPC providers"): ${config.solanaRpcUrls.map(rpcHost).join(', ')}`
      : `  Solana RPC ${localnet?.rpcUrl ?? start.solanaRpcUrl}${localnet ? `  (websocket ${localnet.wsUrl}; dev methods localnet_getClock, localnet_advanceClock)` : ''}`,
    `  client IP  ${clientIpNote(config.trustProxy)}`,
    `  database   ${early.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PostgreSQL (PGlite) in ${join(dataDir, 'pglite')}`}`,
    `  dev keys   ${join(dataDir, 'keys')}  (service = platform authority + arbiter, admin, treasury, test USDC mint authority, fee sponsor; never commit them)`,
    `  sponsor    ${await sponsorLine(config)}`,
    `  chain      ${join(dataDir, 'chain.json')}`,
    ...(devAdmin ? [`  operators  the dev admin key ${devAdmin} holds the admin role: ${demoEnv.join('')}npm run demo:operator`] : []),
    `Try it: ${demoEnv.join('')}npm run demo   (stop with Ctrl-C)`,
  ];
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
}

/** The banner's fee sponsorship line: off, or the sponsor's address and balance (README "Fee sponsorship"). */
async function sponsorLine(config: Config): Promise<string> {
  const s = config.feeSponsorship;
  if (!s?.enabled) return 'fee sponsorship off (FEE_SPONSORSHIP=on: buyers with 0 SOL can pay)';
  try {
    const key = sponsorKeypair(s, dataDir).publicKey;
    const lamports = await createConnection(config.solanaRpcUrl).getBalance(key, 'confirmed');
    return `fee sponsorship on: ${key.toBase58()} holds ${(lamports / LAMPORTS_PER_SOL).toFixed(4)} SOL (budget ${s.dailyLamports} lamports/day; gauge bazaar_fee_sponsor_balance_lamports)`;
  } catch (err) {
    return `fee sponsorship on; sponsor balance unreadable: ${(err as Error).message}`;
  }
}

/** host[:port] of an RPC URL: its path and query may carry an API key, which a banner must not print. */
function rpcHost(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.length > 1 || u.search ? '/…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

run().catch((err) => {
  if (err instanceof StartAborted) return; // the signal handler exits once the stop is done
  reportStartupFailure(err, { port: early.port, host: early.host });
  void lifecycle.stop('start-up failed').finally(() => process.exit(1));
});
