/**
 * Network: which Solana cluster the service runs on, the RPC URL clients can reach, block-explorer link
 * templates that work for that cluster, and whether Solana Pay links work there. Clients build explorer
 * links and decide whether to offer a Solana Pay button from this, instead of guessing the cluster or
 * its port (issue 23: explorer links were built for 127.0.0.1:8899 while the chain ran on another port).
 */
import { z } from 'zod';
import { c, EXPLORER_LINKS_DOC, named } from './common.js';
import { access } from './access.js';
import { routeErrors } from './problems.js';

/** Cluster names, as wallets and explorers spell them; `localnet` = a cluster on this machine or network. */
export const CLUSTERS = ['mainnet-beta', 'devnet', 'testnet', 'localnet'] as const;
export const Cluster = z.enum(CLUSTERS);
export type Cluster = z.infer<typeof Cluster>;

export const NetworkInfo = named(
  'NetworkInfo',
  z.object({
    cluster: Cluster.describe('The Solana cluster the service settles on'),
    rpc_url: z
      .string()
      .url()
      .describe(
        'JSON-RPC URL of that cluster as a browser reaches it (SOLANA_PUBLIC_RPC_URL, else the RPC URL the service ' +
          'uses, port included); wallets and explorers read the chain there',
      ),
    // an RFC 6570 URI template (level 1), not a URI: `{` and `}` are not URI characters (RFC 3986), so no format: uri
    explorer_tx_url_template: z
      .string()
      .regex(/^https:\/\/[^\s]*\{signature\}[^\s]*$/)
      .describe(
        'Block-explorer link of a transaction as an RFC 6570 URI template (level 1; not itself a URI): replace `{signature}` (base58). For a localnet it names the RPC URL: ' +
          'Solana Explorer with cluster=custom&customUrl=<rpc_url>',
      ),
    explorer_address_url_template: z
      .string()
      .regex(/^https:\/\/[^\s]*\{address\}[^\s]*$/)
      .describe('Block-explorer link of an account (wallet, mint, escrow) as an RFC 6570 URI template (level 1; not itself a URI): replace `{address}` (base58)'),
    solana_pay_supported: z
      .boolean()
      .describe(
        'Whether wallets accept this service\'s Solana Pay transaction-request links: they need an https link (PUBLIC_BASE_URL) ' +
          'and a cluster they can reach (no localnet)',
      ),
    solana_pay_unsupported_reason: z
      .string()
      .nullable()
      .describe('Why Solana Pay links do not work here, in words to show a user; null when they do'),
    actions_enabled: z
      .boolean()
      .describe('Solana Actions (blinks) are served here: `/actions.json` and `/api/actions/...` (operator setting ACTIONS_ENABLED)'),
  }),
  'The Solana cluster this service runs on and how clients link to it',
);
export type NetworkInfo = z.infer<typeof NetworkInfo>;

const getNetwork = routeErrors(access.public(), []);

export const network = c.router({
  getNetwork: {
    method: 'GET',
    path: '/network',
    summary: 'Cluster, RPC URL, explorer links and Solana Pay support',
    description:
      'Public (no credential). The Solana cluster the service runs on, the RPC URL a browser can reach, explorer URL ' +
      'templates for transactions (`{signature}`) and accounts (`{address}`) that open that cluster (a localnet via ' +
      'Solana Explorer\'s custom cluster with the RPC URL, port included), and whether Solana Pay links work there ' +
      '(not on a localnet, nor without an https PUBLIC_BASE_URL: `solana_pay_unsupported_reason` says why). Nothing ' +
      'secret: the same for every caller (an RPC URL named here or in a link has its credentials stripped: user info, ' +
      'query, a key-like path segment). ' +
      EXPLORER_LINKS_DOC +
      '.',
    responses: { 200: NetworkInfo, ...getNetwork.responses },
    metadata: getNetwork.metadata,
  },
});
