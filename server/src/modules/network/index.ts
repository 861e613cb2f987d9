/**
 * Network information (GET /network, contract/src/network.contract.ts): the cluster the service settles
 * on, the RPC URL browsers reach, explorer link templates for that cluster and whether Solana Pay links
 * work there. Pure: computed once from the configuration; nothing secret (the RPC URL given is the public
 * one, SOLANA_PUBLIC_RPC_URL, when the service's own carries a key).
 */
import type { Cluster, NetworkInfo } from '@bazaar/contract';
import { clusterOf, createExplorer, EXPLORER, explorerQuery, linkableRpcUrl } from '../../lib/explorer.js';

export interface NetworkSettings {
  /** SIWS_CHAIN_ID: `mainnet`, `devnet`, `testnet`, `localnet`, bare or `solana:` prefixed */
  siwsChainId: string;
  /** the RPC URL the service uses (SOLANA_RPC_URL, or the embedded localnet's with its port) */
  solanaRpcUrl: string;
  /** SOLANA_PUBLIC_RPC_URL: the URL browsers reach the same cluster at, when not solanaRpcUrl */
  solanaPublicRpcUrl?: string;
  /** PUBLIC_BASE_URL: Solana Pay links point at it; wallets fetch https links only */
  publicBaseUrl: string;
  /** ACTIONS_ENABLED: the Solana Actions are served (absent: off) */
  actionsEnabled?: boolean;
}

// the cluster name and the explorer query live with the explorer links (lib/explorer.ts); re-exported for callers here
export { clusterOf, explorerQuery };

/** Why wallets refuse this service's Solana Pay links, or null when they accept them. */
export function solanaPayRefusal(cluster: Cluster, publicBaseUrl: string): string | null {
  if (cluster === 'localnet') {
    return 'This service runs on a local test network that mobile wallets cannot reach, and wallets accept only https Solana Pay links: pay with a browser wallet instead.';
  }
  if (!publicBaseUrl.startsWith('https://')) {
    return 'Wallets accept only https Solana Pay links and this service is not served over https: pay with a browser wallet instead.';
  }
  return null;
}

/** GET /network's body for these settings. */
export function networkInfo(s: NetworkSettings): NetworkInfo {
  const { cluster, query } = createExplorer(s);
  // the service's own URL only without what may be a credential (an API key must not be published)
  const rpcUrl = s.solanaPublicRpcUrl ?? linkableRpcUrl(s.solanaRpcUrl);
  const refusal = solanaPayRefusal(cluster, s.publicBaseUrl);
  return {
    cluster,
    rpc_url: rpcUrl,
    explorer_tx_url_template: `${EXPLORER}/tx/{signature}${query}`,
    explorer_address_url_template: `${EXPLORER}/address/{address}${query}`,
    solana_pay_supported: refusal === null,
    solana_pay_unsupported_reason: refusal,
    actions_enabled: s.actionsEnabled ?? false,
  };
}
