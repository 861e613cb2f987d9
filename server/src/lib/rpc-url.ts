/** Solana RPC endpoint URLs (text only: no connection, no chain client). */

/**
 * The PubSub endpoint web3.js 1.x derives from an RPC URL (its `makeWebsocketUrl`, same rules):
 * `https:` -> `wss:`, anything else -> `ws:`, an explicit port + 1 (8899 -> 8900), path kept.
 * E.g. `http://127.0.0.1:8899` -> `ws://127.0.0.1:8900`, `https://api.devnet.solana.com` ->
 * `wss://api.devnet.solana.com`. Throws on a string that is not an absolute URL.
 */
export function websocketUrlFor(rpcUrl: string): string {
  const m = /^[^:]+:\/\/([^:[]+|\[[^\]]+\])(:\d+)?(.*)/i.exec(rpcUrl);
  if (!m) throw new Error(`not an RPC URL: ${rpcUrl}`);
  const [, host, port, rest] = m;
  const protocol = rpcUrl.startsWith('https:') ? 'wss:' : 'ws:';
  return `${protocol}//${host}${port ? `:${Number(port.slice(1)) + 1}` : ''}${rest}`;
}
