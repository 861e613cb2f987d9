/**
 * One bootstrapped localnet per vitest worker slot, shared by the chain suites that run in it.
 *
 * The broker runs in vitest's main process (tests/helpers/global-setup.ts starts it and hands its URL
 * to the workers as `inject('chainBroker')`). A suite asks for the chain of its worker slot
 * (`VITEST_POOL_ID`): the first ask starts and bootstraps a localnet, later asks get the same one.
 * Suites of one slot run one after another, so a suite never shares its chain with a suite running
 * at the same time (clock warps and blockhash expiries stay within one suite at a time); on a machine
 * with more cores each slot has its own chain. The main process owns the nodes (their pipes stay
 * drained) and stops them at the end of the run.
 *
 * What a suite on the shared chain may assume: the dev bootstrap (service, admin, treasury keys; test
 * USDC; the escrow config) and nothing else. It uses fresh keypairs (and so fresh token accounts and
 * PDAs) for everything it checks, reads balances as differences where others could pay in (treasury),
 * and reads the chain clock instead of assuming it equals the wall clock (an earlier suite may have
 * moved it forward). Suites that need a chain of their own start one (`startBootstrappedChain`).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { BootstrapResult } from '../../server/scripts/bootstrap-localnet';
import { localnetNeedsBuild } from '../../server/scripts/localnet-process';
import { loadStartConfig } from '../../server/src/config';
import { startBootstrappedChain, type BootstrappedChain } from './localnet';

/**
 * Build the localnet binary when it is missing or stale, without blocking this process: the broker
 * runs in vitest's main process, which must keep answering its workers (startLocalnet's own build
 * check is synchronous). A failed build is left to startLocalnet to report.
 */
async function buildLocalnet(): Promise<void> {
  if (!localnetNeedsBuild()) return;
  const manifest = fileURLToPath(new URL('../../programs/Cargo.toml', import.meta.url));
  const env = { ...process.env, CARGO_TARGET_DIR: loadStartConfig(process.env).cargoTargetDir };
  await new Promise<void>((done) => {
    const cargo = spawn('cargo', ['build', '-p', 'bazaar-localnet', '--manifest-path', manifest], { stdio: 'inherit', env });
    cargo.once('close', () => done());
    cargo.once('error', () => done());
  });
}

/** What the broker answers: enough for a worker to build its own chain client. */
export interface SharedChainInfo {
  rpcUrl: string;
  wsUrl: string;
  /** the DATA_DIR of the bootstrap (keys/, chain.json); removed at the end of the run */
  dataDir: string;
  boot: BootstrapResult;
}

export interface ChainBroker {
  /** `http://127.0.0.1:<port>`; POST /chain/<slot> answers SharedChainInfo */
  url: string;
  /** stop every localnet started and close the broker */
  close(): Promise<void>;
}

export async function startChainBroker(): Promise<ChainBroker> {
  const chains = new Map<string, Promise<BootstrappedChain>>();
  const server: Server = createServer((req, res) => {
    const slot = /^\/chain\/([\w-]{1,32})$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'POST' || !slot) {
      res.writeHead(404).end();
      return;
    }
    let chain = chains.get(slot);
    if (!chain) {
      chain = buildLocalnet().then(() => startBootstrappedChain(`shared-${slot}`));
      chains.set(slot, chain);
      chain.catch(() => chains.delete(slot)); // the next ask tries again
    }
    chain.then(
      (c) => {
        const info: SharedChainInfo = { rpcUrl: c.localnet.rpcUrl, wsUrl: c.localnet.wsUrl, dataDir: c.dataDir, boot: c.boot };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(info));
      },
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String((err as Error)?.stack ?? err)),
    );
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async close() {
      await new Promise<void>((ok) => server.close(() => ok()));
      await Promise.all([...chains.values()].map((c) => c.then((x) => x.stop(), () => undefined)));
    },
  };
}
