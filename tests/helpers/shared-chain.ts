/**
 * The localnet a vitest worker slot shares among its chain suites (./chain-broker.ts starts it and
 * says what a suite may assume on it). Vitest-only: it reads the broker's URL with `inject`.
 */
import { inject } from 'vitest';
import { rpcCall, type Localnet, type LocalnetClock } from '../../server/scripts/localnet-process';
import { createChain } from '../../server/src/chain/index';
import { chainOptionsFromDataDir } from '../../server/src/chain/keys';
import type { SharedChainInfo } from './chain-broker';
import { startBootstrappedChain, type BootstrappedChain } from './localnet';

/**
 * The bootstrapped localnet of this worker slot (started by the chain broker on first use, stopped at
 * the end of the run; `stop()` only lets go of it). Without the broker (a run without
 * tests/helpers/global-setup.ts) the suite gets a fresh chain of its own.
 */
export async function sharedBootstrappedChain(suite: string): Promise<BootstrappedChain> {
  const broker = inject('chainBroker');
  if (!broker) return startBootstrappedChain(suite);
  const res = await fetch(`${broker}/chain/${process.env.VITEST_POOL_ID ?? '1'}`, { method: 'POST' });
  if (!res.ok) throw new Error(`the shared localnet did not start: ${res.status} ${await res.text()}`);
  const { rpcUrl, wsUrl, dataDir, boot } = (await res.json()) as SharedChainInfo;
  const localnet: Localnet = {
    rpcUrl,
    wsUrl,
    async stop() {
      throw new Error('the shared localnet belongs to the chain broker: a suite that stops its chain starts its own');
    },
    async advanceClock(seconds: number) {
      await rpcCall(rpcUrl, 'localnet_advanceClock', [Math.floor(seconds)]);
    },
    getClock: () => rpcCall<LocalnetClock>(rpcUrl, 'localnet_getClock'),
  };
  return {
    localnet,
    dataDir,
    boot,
    chain: createChain(chainOptionsFromDataDir(dataDir, rpcUrl)!),
    async stop() {},
  };
}
