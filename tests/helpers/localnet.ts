/**
 * Test harness for `bazaar-localnet`: the launcher lives beside the main job (`npm start` uses it
 * too), see server/scripts/localnet-process.ts. `startBootstrappedChain` adds what most chain suites
 * need on top: a throw-away DATA_DIR, the dev bootstrap (keys, test USDC, escrow config) and a chain
 * client acting as the service. `sharedBootstrappedChain` gives the same, on the localnet this worker
 * slot shares with the other chain suites (./shared-chain.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminPublicKeyFor, bootstrapLocalnet, type BootstrapResult } from '../../server/scripts/bootstrap-localnet';
import { startLocalnet, type Localnet } from '../../server/scripts/localnet-process';
import { createChain, type ChainClient } from '../../server/src/chain/index';
import { chainOptionsFromDataDir } from '../../server/src/chain/keys';

export * from '../../server/scripts/localnet-process';

export interface BootstrappedChain {
  localnet: Localnet;
  /** temporary DATA_DIR holding keys/ and chain.json (removed by `stop`) */
  dataDir: string;
  boot: BootstrapResult;
  /** chain client signing as the service keypair (platform authority + arbiter) */
  chain: ChainClient;
  /** stop the localnet and remove `dataDir` */
  stop(): Promise<void>;
}

/** A fresh localnet, bootstrapped into a temporary DATA_DIR named after `suite`. */
export async function startBootstrappedChain(suite: string): Promise<BootstrappedChain> {
  const dataDir = mkdtempSync(join(tmpdir(), `bazaar-${suite}-`));
  // the test-only programs (the CPI caller) are loaded on every test chain, never by npm start
  const localnet = await startLocalnet({ escrowUpgradeAuthority: adminPublicKeyFor(dataDir), testPrograms: true });
  const boot = await bootstrapLocalnet({ rpcUrl: localnet.rpcUrl, dataDir });
  const chain = createChain(chainOptionsFromDataDir(dataDir, localnet.rpcUrl)!);
  return {
    localnet,
    dataDir,
    boot,
    chain,
    async stop() {
      await localnet.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
