/**
 * `npm run web:wallet [-- --name seller] [-- --headless]`: try the web app by hand without a wallet
 * extension. Opens Chromium (/usr/bin/chromium, CHROMIUM_PATH overrides) on the web app of the running
 * service (BAZAAR_URL + /app/) with the test wallet of server/scripts/test-wallet.ts injected: a fresh
 * keypair, funded on the service's chain (2 SOL airdrop, 100 test USDC minted with the dev mint
 * authority in DATA_DIR/keys), that the app lists as "Bazaar Test Wallet" beside real wallets. Run it
 * twice (e.g. `--name seller` and `--name buyer`) to play both sides of a purchase. The key stays in
 * memory: close the window (or Ctrl-C) and it is gone.
 *
 * Only for a development chain: the test USDC mint authority must be the service's dev key (`npm start`
 * with the embedded localnet, or CHAIN_BOOTSTRAP=1).
 */
import { existsSync } from 'node:fs';
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { chromium } from 'playwright-core';
import { loadToolConfig } from '../src/config.js';
import { ensureSol, mintTestUsdc, readChainFile } from './bootstrap-localnet.js';
import { installTestWallet } from './test-wallet.js';

const args = process.argv.slice(2);
const name = args.includes('--name') ? args[args.indexOf('--name') + 1]! : 'test';
const headless = args.includes('--headless');

async function run() {
  const tool = loadToolConfig(process.env);
  const CHROMIUM = tool.chromiumPath;
  const chain = readChainFile(tool.dataDir);
  if (!chain) throw new Error(`${tool.dataDir}/chain.json is missing: start the service first (npm start), with the same DATA_DIR`);
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`);
  const rpcUrl = tool.solanaRpcUrl ?? chain.rpcUrl;
  const keypair = Keypair.generate();
  const address = keypair.publicKey.toBase58();
  await ensureSol(new Connection(rpcUrl, 'confirmed'), keypair.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
  await mintTestUsdc(tool.dataDir, rpcUrl, address, 100_000_000n);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless,
    args: ['--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...(headless ? ['--no-sandbox'] : [])],
  });
  const context = await browser.newContext({ viewport: null });
  await installTestWallet(context, keypair, rpcUrl);
  const page = await context.newPage();
  await page.goto(`${tool.baseUrl}/app/`);
  console.log(`test wallet "${name}": ${address} (2 SOL, 100 USDC) in ${headless ? 'headless ' : ''}Chromium at ${tool.baseUrl}/app/`);
  console.log(headless ? 'Ctrl-C to stop' : 'close the window (or Ctrl-C) to stop');
  const stop = () => void browser.close().finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  browser.once('disconnected', () => process.exit(0));
}

run().catch((err) => {
  console.error(`web:wallet: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
