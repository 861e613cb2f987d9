/**
 * The `X-Blockchain-Ids` value of this service: the CAIP-2 id of its cluster (SIWS_CHAIN_ID, as GET /network
 * names it). Mainnet, devnet and testnet have well-known ids; a localnet's comes from its genesis hash, read
 * once from the RPC (getGenesisHash) and kept; a failed read is retried on the next request (the guard
 * answers 503 meanwhile).
 */
import { clusterOf } from '../../modules/network/index.js';
import { blockchainId } from './common.js';

/** `() => Promise<CAIP-2 id>` for `siwsChainId`, memoized once it succeeded. */
export function clusterBlockchainId(siwsChainId: string, chain: unknown): () => Promise<string> {
  const cluster = clusterOf(siwsChainId);
  if (cluster !== 'localnet') {
    const id = blockchainId(cluster);
    return async () => id;
  }
  const connection = (chain as { connection?: { getGenesisHash(): Promise<string> } } | null)?.connection;
  let known: string | null = null;
  return async () => {
    if (known) return known;
    if (!connection) throw new Error('no RPC connection to read the localnet genesis hash from');
    known = blockchainId(cluster, await connection.getGenesisHash());
    return known;
  };
}
