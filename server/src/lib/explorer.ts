/**
 * Block-explorer links (issue 26 item 4): the one place that turns a transaction signature or an account address
 * (a mint, an escrow account) into a Solana Explorer URL for the configured cluster, and the one place that adds
 * those links to the API's answers.
 *
 * Cluster forms (Solana Explorer): mainnet-beta has no query; devnet and testnet `?cluster=devnet|testnet`; a
 * localnet (or any custom RPC) `?cluster=custom&customUrl=<rpc url, URL-encoded>`: the explorer then reads that RPC
 * from the visitor's browser. The RPC URL named in a link is SOLANA_PUBLIC_RPC_URL when set (the operator's public
 * one), else the service's SOLANA_RPC_URL; either way with its credentials stripped (`linkableRpcUrl`): a link is
 * shown to anyone, copied, logged, so an API key in the user info, the query or a key-like path segment never
 * appears in it.
 *
 * Naming rule of the link fields (contract docs, common.ts `EXPLORER_LINKS_DOC`): an object that describes a
 * transaction (it has `signature`) gets `explorer_url`; a flat field `x_signature` gets `x_explorer_url`; a mint
 * `mint` / `x_mint` gets `mint_explorer_url` / `x_mint_explorer_url`; an address field `x_address` (a mint or an
 * account) gets `x_explorer_url` (`token_mint_address` -> `token_mint_explorer_url`). A null value gets a null link.
 */
import type { Cluster } from '@bazaar/contract';

export type ExplorerKind = 'tx' | 'address';

/** Where the links point: the cluster and the RPC URL a custom cluster names. */
export interface ExplorerSettings {
  /** SIWS_CHAIN_ID (`mainnet`, `devnet`, `testnet`, `localnet`, bare or `solana:` prefixed) */
  siwsChainId: string;
  /** the RPC URL the service uses (SOLANA_RPC_URL, or the embedded localnet's with its port) */
  solanaRpcUrl: string;
  /** SOLANA_PUBLIC_RPC_URL: the URL browsers reach the same cluster at, when not solanaRpcUrl */
  solanaPublicRpcUrl?: string;
}

export const EXPLORER = 'https://explorer.solana.com';

/** The cluster name explorers and wallets use for a SIWS chain id (`mainnet` -> `mainnet-beta`). */
export function clusterOf(siwsChainId: string): Cluster {
  const bare = siwsChainId.replace(/^solana:/, '');
  return bare === 'mainnet' ? 'mainnet-beta' : (bare as Cluster);
}

/** A path segment that looks like an access token (QuickNode, Alchemy, ... put the key in the path): 20+ URL-safe characters with letters and digits. */
function keyLike(segment: string): boolean {
  return /^[A-Za-z0-9_-]{20,}$/.test(segment) && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment);
}

/**
 * `rpcUrl` without anything that may be a credential: user info (`user:pass@`), the query (`?api-key=...`), the
 * fragment, and the path when a segment of it looks like a key (`/v2/<key>`). What is left names the host (and port)
 * of the cluster, which is what the explorer's custom cluster and a browser need from a public node. Throws on a
 * string that is not an absolute URL.
 */
export function linkableRpcUrl(rpcUrl: string): string {
  const u = new URL(rpcUrl);
  u.username = '';
  u.password = '';
  u.search = '';
  u.hash = '';
  if (u.pathname.split('/').some(keyLike)) u.pathname = '/';
  return u.toString().replace(/\/$/, '');
}

/**
 * Solana Explorer's query for `cluster`: none for mainnet-beta, `?cluster=devnet|testnet`, and for a localnet
 * `?cluster=custom&customUrl=<rpc url, credentials stripped, URL-encoded>`.
 */
export function explorerQuery(cluster: Cluster, rpcUrl: string): string {
  if (cluster === 'mainnet-beta') return '';
  if (cluster === 'localnet') return `?cluster=custom&customUrl=${encodeURIComponent(linkableRpcUrl(rpcUrl))}`;
  return `?cluster=${cluster}`;
}

/** The link builder for one configuration: `explorerUrl(kind, value)`, and the RPC URL its custom-cluster links name. */
export interface Explorer {
  /** Solana Explorer URL of a transaction (`tx`, base58 signature) or an account (`address`, base58) on the configured cluster. */
  explorerUrl(kind: ExplorerKind, value: string): string;
  readonly cluster: Cluster;
  /** the query string every link carries (GET /network's templates end with it) */
  readonly query: string;
}

export function createExplorer(s: ExplorerSettings): Explorer {
  const cluster = clusterOf(s.siwsChainId);
  const query = explorerQuery(cluster, s.solanaPublicRpcUrl ?? s.solanaRpcUrl);
  return {
    cluster,
    query,
    explorerUrl: (kind, value) => `${EXPLORER}/${kind}/${encodeURIComponent(value)}${query}`,
  };
}

const BASE58_SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * The link field a field named `key` gets under the naming rule (module comment), and what it links to; null when
 * `key` is not a signature, mint or linked address field.
 */
export function explorerSibling(key: string): { field: string; kind: ExplorerKind } | null {
  if (key === 'signature') return { field: 'explorer_url', kind: 'tx' };
  if (key.endsWith('_signature')) return { field: `${key.slice(0, -'_signature'.length)}_explorer_url`, kind: 'tx' };
  if (key === 'mint' || key.endsWith('_mint')) return { field: `${key}_explorer_url`, kind: 'address' };
  if (LINKED_ADDRESSES.has(key)) return { field: `${key.slice(0, -'_address'.length)}_explorer_url`, kind: 'address' };
  return null;
}

/** Address fields (besides mints) that get a link: the ones the web app opens on the explorer. */
const LINKED_ADDRESSES = new Set(['token_mint_address', 'escrow_account_address']);

/**
 * `body` with the explorer links of every signature, mint and linked address field in it (recursively, arrays
 * included; plain objects only, anything with a prototype of its own is left as it is), under the naming rule. A
 * value that is not a base58 signature / address (a base64 ed25519 signature of a login, say) gets no link; a null
 * value gets a null link; a link field already set is kept. `body` is not changed: objects and arrays that get a link
 * (or hold one that does) are copied, the others are returned as they are (shared with `body`: do not mutate the result).
 */
export function withExplorerLinks<T>(body: T, explorer: Pick<Explorer, 'explorerUrl'>): T {
  // issue 28 item 1: every /api/v1 answer goes through here, so the walk allocates only where it adds a link: an
  // object or array in which nothing changes is returned as it is (categories, most of a listing), a changed one
  // is copied (its keys in their order, then its links)
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const w = walk(v[i]);
        if (w !== v[i] && !out) out = v.slice(0, i);
        if (out) out.push(w);
      }
      return out ?? v;
    }
    if (!v || typeof v !== 'object') return v;
    // plain JSON objects only: a Date, a Decimal or anything else with its own toJSON is serialized as it is
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) return v;
    const o = v as Record<string, unknown>;
    let out: Record<string, unknown> | null = null;
    let links: Record<string, unknown> | null = null;
    for (const k of Object.keys(o)) {
      const x = o[k];
      const w = walk(x);
      if (w !== x) (out ??= { ...o })[k] = w;
      const sibling = siblingOf(k);
      if (!sibling) continue;
      if (x === null) (links ??= {})[sibling.field] = null;
      else if (typeof x === 'string' && (sibling.kind === 'tx' ? BASE58_SIGNATURE : BASE58_ADDRESS).test(x)) (links ??= {})[sibling.field] = explorer.explorerUrl(sibling.kind, x);
    }
    if (!links) return out ?? o;
    out ??= { ...o };
    for (const k of Object.keys(links)) if (!(k in out)) out[k] = links[k];
    return out;
  };
  return walk(body) as T;
}

/** explorerSibling, remembered per key (at most SIBLING_CACHE_MAX keys: bodies may hold keys a client chose). */
const siblings = new Map<string, ReturnType<typeof explorerSibling>>();
const SIBLING_CACHE_MAX = 4096;
function siblingOf(key: string): ReturnType<typeof explorerSibling> {
  let s = siblings.get(key);
  if (s === undefined) {
    s = explorerSibling(key);
    if (siblings.size < SIBLING_CACHE_MAX) siblings.set(key, s);
  }
  return s;
}
