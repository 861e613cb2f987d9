/**
 * The data the pages read, through one TanStack Query cache (`queryClient`): each read has a key, so a
 * page shows what is cached at once and refreshes it, an action or a live event invalidates exactly
 * what changed (`['order', id]`, `['orders']`, `['messages', id]`), and two pages asking for the same
 * thing (the seller's profile, the currencies) make one request.
 */
import { QueryClient, useQuery } from '@tanstack/react-query';
import type { Listing, NetworkInfo, Order, PublicUser } from '@bazaar/client-sdk';
import { API_ORIGIN, ApiError, client, ok } from './api.js';
import { DEFAULT_DECIMALS } from './format.js';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // a client error (4xx) does not get better by asking again; a network failure or a 5xx may
      retry: (count, e) => count < 2 && !(e instanceof ApiError && e.status < 500),
      refetchOnWindowFocus: false,
    },
  },
});

export const useCurrencies = () =>
  useQuery({ queryKey: ['currencies'], queryFn: async () => ok(await client.marketplace.listCurrencies(), 200).data, staleTime: 600_000 });

export const useCategories = () =>
  useQuery({ queryKey: ['categories'], queryFn: async () => ok(await client.marketplace.listCategories(), 200).data, staleTime: 60_000 });

/** code -> decimals: the service's currencies, else the defaults (SOL 9, USDC 6). */
export function useDecimals(): (code: string) => number {
  const { data } = useCurrencies();
  return (code) => data?.find((c) => c.code === code)?.decimals ?? DEFAULT_DECIMALS[code] ?? 0;
}

export const useListing = (id: string | undefined) =>
  useQuery({
    queryKey: ['listing', id],
    enabled: !!id,
    queryFn: async (): Promise<Listing> => ok(await client.listings.getListing({ params: { listing_id: id! } }), 200),
  });

/** An order as GET /orders/{id} returns it: with its listing, both parties, its next step and review. */
export type RichOrder = Order;
/** A party of an order: wallet, display name, rating (OrderParty). */
export type PartySummary = Order['seller'];

export const useOrder = (id: string) =>
  useQuery({
    queryKey: ['order', id],
    queryFn: async (): Promise<RichOrder> => ok(await client.orders.getOrder({ params: { order_id: id } }), 200),
    // the fallback when a proxy cuts the event stream (live.ts): a slow poll
    refetchInterval: 15_000,
  });

export const useUser = (wallet: string | undefined, enabled = true) =>
  useQuery({
    queryKey: ['user', wallet],
    enabled: !!wallet && enabled,
    staleTime: 60_000,
    queryFn: async (): Promise<PublicUser> => ok(await client.users.getUser({ params: { wallet: wallet! } }), 200),
  });

/** The service's chain: cluster, RPC URL, explorer link templates, whether Solana Pay works (GET /network, public). */
/** A listing's Solana Action card (GET /api/actions/listings/{id}, the blink clients' view); null when the service serves no actions. */
export interface ActionCard {
  icon: string;
  title: string;
  description: string;
  label: string;
  disabled?: boolean;
  error?: { message: string };
  links?: { actions: Array<{ label: string; href: string }> };
}

export const useListingAction = (id: string, enabled: boolean) =>
  useQuery({
    queryKey: ['listing-action', id],
    // only where the service serves actions (GET /network `actions_enabled`): no 404 in the console elsewhere
    enabled,
    queryFn: async (): Promise<ActionCard | null> => {
      const res = await fetch(`${API_ORIGIN}/api/actions/listings/${id}`, { headers: { Accept: 'application/json' }, cache: 'no-cache' });
      // 404 for the listing's page (actions off: ACTIONS_ENABLED); any other failure is shown as an error
      if (res.status === 404) return null;
      if (!res.ok) throw new Error(((await res.json().catch(() => null)) as { message?: string } | null)?.message ?? `HTTP ${res.status}`);
      return (await res.json()) as ActionCard;
    },
  });

export const useNetwork = () =>
  useQuery({
    queryKey: ['network'],
    staleTime: Infinity,
    queryFn: async (): Promise<NetworkInfo> => ok(await client.network.getNetwork(), 200),
  });

/**
 * FALLBACK for a server older than issue 26 item 4: the API's answers carry the explorer links themselves
 * (`explorer_url`, `token_mint_explorer_url`, `escrow_account_explorer_url`, ...), which the pages use first. Explorer
 * link of an address or transaction on the service's cluster: the server's templates (`{address}`, `{signature}`)
 * when it states them, else VITE_SOLANA_CLUSTER / VITE_SOLANA_RPC_URL (default the localnet of `npm start`,
 * http://127.0.0.1:8899).
 */
export function explorerUrl(net: NetworkInfo | null | undefined, kind: 'address' | 'tx', value: string): string {
  if (net) {
    return kind === 'address'
      ? net.explorer_address_url_template.replace('{address}', encodeURIComponent(value))
      : net.explorer_tx_url_template.replace('{signature}', encodeURIComponent(value));
  }
  const path = `https://explorer.solana.com/${kind}/${value}`;
  const cluster = import.meta.env.VITE_SOLANA_CLUSTER;
  if (cluster) return `${path}?cluster=${cluster}`;
  const rpc = import.meta.env.VITE_SOLANA_RPC_URL ?? 'http://127.0.0.1:8899';
  return `${path}?cluster=custom&customUrl=${encodeURIComponent(rpc)}`;
}

/** The operator roles a user may hold (contract OPERATOR_ROLES). */
export type OperatorRole = 'admin' | 'moderator' | 'arbiter';

/**
 * The signed-in user's operator roles (`roles` of GET /user/me), read on every sign-in and kept a minute:
 * the operator pages and their navigation entries show only for the roles held. Empty while signed out or
 * loading. The service checks the role on every request anyway (a revoked role is refused at once); this
 * only decides what the app offers.
 */
export const useMyRoles = (signedIn: boolean): readonly OperatorRole[] => {
  const q = useQuery({
    queryKey: ['me'],
    enabled: signedIn,
    staleTime: 60_000,
    queryFn: async () => ok(await client.users.getMe(), 200),
  });
  return signedIn ? (q.data?.roles ?? []) : [];
};
