/**
 * My orders, as buyer and as seller: each row names the listing, the other party (name or short
 * address, rating, reviews), the amount, the state in plain words with what happens next and its
 * countdown, and the actions the service allows me now (they open the order, where they are done).
 */
import { useQuery } from '@tanstack/react-query';
import { client, ok } from '../api.js';
import { formatAmount } from '../format.js';
import { useDecimals, type RichOrder } from '../queries.js';
import { ACTION_LABELS, AGREEMENT_ACTIONS, STATUS_WORDS, nextStep, roleOf } from '../status.js';
import { Countdown, ErrorBox, Loading, PageHeading, Party } from '../ui.js';
import { session } from '../api.js';

function OrderRow({ o }: { o: RichOrder }) {
  const decimals = useDecimals();
  const role = roleOf(o, session()?.wallet);
  const title = o.listing.title;
  const next = nextStep(o, role);
  const other = role === 'seller' ? { wallet: o.buyer_wallet, summary: o.buyer } : { wallet: o.seller_wallet, summary: o.seller };
  const actions = o.allowed_actions.filter((a) => a !== 'resolve' && !AGREEMENT_ACTIONS.has(a));
  return (
    <li class="card order-row" data-order={o.order_id} data-status={o.status} data-actions={o.allowed_actions.join(',')}>
      <h3>
        <a href={`#/orders/${o.order_id}`} dir="auto">
          {title}
        </a>
      </h3>
      <p class="meta">
        {role === 'seller' ? 'Buyer' : 'Seller'} <Party wallet={other.wallet} summary={other.summary} /> ·{' '}
        <strong>{formatAmount(o.amount_base_units, decimals(o.currency), o.currency)}</strong>
      </p>
      <p>
        <strong class="status-words">{STATUS_WORDS[o.status]}</strong>
        {next.due && Date.parse(next.due) > Date.now() ? (
          <>
            {' '}
            · <Countdown to={next.due} /> left
          </>
        ) : null}
      </p>
      <p class="next">{next.text}</p>
      {actions.length ? (
        <p class="row-actions">
          {actions.map((a) => (
            <a class="button" href={`#/orders/${o.order_id}`} data-action={a}>
              {ACTION_LABELS[a]}
            </a>
          ))}
        </p>
      ) : null}
    </li>
  );
}

function OrderList({ label, orders, empty }: { label: string; orders: RichOrder[]; empty: string }) {
  if (!orders.length) return <p>{empty}</p>;
  return (
    <ul class="cards orders" aria-label={label}>
      {orders.map((o) => (
        <OrderRow key={o.order_id} o={o} />
      ))}
    </ul>
  );
}

export function OrdersPage() {
  const orders = useQuery({
    queryKey: ['orders'],
    refetchInterval: 30_000,
    queryFn: async () => {
      const [bought, sold] = await Promise.all(
        (['buyer', 'seller'] as const).map(async (role) => ok(await client.orders.listOrders({ query: { role, limit: 50 } }), 200).data as RichOrder[]),
      );
      return { bought: bought!, sold: sold! };
    },
  });
  if (orders.error) return <ErrorBox heading="My orders" error={orders.error} retry={() => void orders.refetch()} />;
  if (!orders.data) return <Loading what="Loading your orders" />;
  return (
    <section>
      <PageHeading text="My orders" />
      <h2>Sold</h2>
      <OrderList label="Orders of my listings" orders={orders.data.sold} empty="No sales yet. New sales show up here as they happen." />
      <h2>Bought</h2>
      <OrderList label="Orders I bought" orders={orders.data.bought} empty="Nothing bought yet." />
    </section>
  );
}
