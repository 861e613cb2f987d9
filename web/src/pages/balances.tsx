/** Balances of the signed-in wallet, read from the chain by the service (and custodial lines when enabled). */
import { useQuery } from '@tanstack/react-query';
import { client, ok } from '../api.js';
import { formatAmount } from '../format.js';
import { Address, ErrorBox, Loading, PageHeading } from '../ui.js';

export function BalancesPage() {
  const q = useQuery({ queryKey: ['balances'], queryFn: async () => ok(await client.wallet.getBalances(), 200) });
  if (q.error) return <ErrorBox heading="Balances" error={q.error} retry={() => void q.refetch()} />;
  if (!q.data) return <Loading what="Reading your balances" />;
  const b = q.data;
  return (
    <section>
      <PageHeading text="Balances" />
      <p>
        Wallet <Address value={b.wallet} label="wallet address" />
      </p>
      <table>
        <caption>Per currency: the amount, the exact base units, where it is held</caption>
        <thead>
          <tr>
            <th scope="col">Currency</th>
            <th scope="col">Amount</th>
            <th scope="col">Base units</th>
            <th scope="col">Source</th>
          </tr>
        </thead>
        <tbody>
          {b.balances.map((x) => (
            <tr data-currency={x.currency} data-mint={x.mint ?? 'native'} data-source={x.source}>
              <th scope="row">
                {x.mint ? (
                  <>
                    {x.currency} <Address value={x.mint} label={`${x.currency} mint`} />
                  </>
                ) : (
                  `${x.currency} (native)`
                )}
              </th>
              <td class="num">{formatAmount(x.amount_base_units, x.decimals, x.currency)}</td>
              <td class="num mono" data-testid="base-units">
                {x.amount_base_units}
              </td>
              <td>{x.source === 'chain' ? 'your wallet' : 'held by the service'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
