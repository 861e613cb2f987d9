/** Sign in: every Wallet Standard wallet that can sign in, one button each (SIWS, see wallet.ts). */
import type { Wallet } from '@wallet-standard/base';
import { busy, go, h, say, type Page } from '../dom.js';
import { loginWallets, onWalletsChange, signIn } from '../wallet.js';

export const signInPage: Page = async ({ query, onLeave }) => {
  const list = h('ul', { class: 'wallets' });
  const next = query.get('next') ?? '#/';
  const button = (w: Wallet) => {
    const b = h('button', { type: 'button' }, h('img', { src: w.icon, alt: '', width: 24, height: 24 }), ` Sign in with ${w.name}`);
    b.addEventListener(
      'click',
      busy(b, async () => {
        say(`Waiting for ${w.name}: approve the sign-in message in the wallet…`);
        const s = await signIn(w);
        say(`Signed in as ${s.wallet}.`);
        go(next.startsWith('#/sign-in') ? '#/' : next);
      }),
    );
    return b;
  };
  const fill = () => {
    const found = loginWallets();
    list.replaceChildren(
      ...(found.length
        ? found.map((w) => h('li', {}, button(w)))
        : [h('li', {}, 'No Solana wallet found in this browser. Install Phantom, Solflare or Backpack, then reload.')]),
    );
  };
  fill();
  onLeave(onWalletsChange(fill));
  return h(
    'section',
    {},
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Sign In With Solana: your wallet signs a one-time message for this site; no transaction, no fee.'),
    list,
  );
};
