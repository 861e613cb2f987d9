/** Balances of the signed-in wallet, read from the chain by the service (and custodial lines when enabled). */
import { client, ok } from '../api.js';
import { h, type Page } from '../dom.js';

export const balancesPage: Page = async () => {
  const b = ok(await client.wallet.getBalances(), 200);
  return h(
    'section',
    {},
    h('h1', {}, 'Balances'),
    h('p', { class: 'mono' }, `Wallet ${b.wallet}`),
    h(
      'table',
      {},
      h('caption', {}, 'Per currency: UI amount, exact base units, where it is held'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Currency'), h('th', { scope: 'col' }, 'Amount'), h('th', { scope: 'col' }, 'Base units'), h('th', { scope: 'col' }, 'Mint'), h('th', { scope: 'col' }, 'Source'))),
      h(
        'tbody',
        {},
        ...b.balances.map((x) =>
          h(
            'tr',
            { 'data-currency': x.currency, 'data-mint': x.mint ?? 'native', 'data-source': x.source },
            h('th', { scope: 'row' }, x.mint ? x.currency : `${x.currency} (native)`),
            h('td', { class: 'num' }, String(x.ui_amount)),
            h('td', { class: 'num', 'data-testid': 'base-units' }, x.amount_base_units),
            h('td', { class: 'mono' }, x.mint ?? '—'),
            h('td', {}, x.source),
          ),
        ),
      ),
    ),
  );
};
