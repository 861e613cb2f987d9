/** Sign in: every Wallet Standard wallet that can sign in, one button each (SIWS, see wallet.ts). */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { navigate } from '../router.js';
import { ActionButton, PageHeading, say } from '../ui.js';
import { loginWallets, onWalletsChange, signIn } from '../wallet.js';

/** Whether an error means "sign in first" (no session, or it ended). */
export const isSignInNeeded = (e: unknown) => e instanceof ApiError && e.status === 401;

/** What a page that needs a wallet shows to a visitor without one. */
export function SignInPrompt() {
  const back = encodeURIComponent(window.location.hash || '#/');
  return (
    <section>
      <PageHeading text="Sign in to continue" />
      <p>Your orders, balances and selling need a signed-in wallet (Sign In With Solana: no transaction, no fee).</p>
      <p>
        <a href={`#/sign-in?next=${back}`} class="button primary">
          Sign in with a wallet
        </a>
      </p>
    </section>
  );
}

export function SignInPage({ query }: { query: URLSearchParams }) {
  const [wallets, setWallets] = useState(loginWallets);
  useEffect(() => onWalletsChange(() => setWallets(loginWallets())), []);
  const next = query.get('next') ?? '#/';
  return (
    <section>
      <PageHeading text="Sign in" />
      <p>Sign In With Solana: your wallet signs a one-time message for this site; no transaction, no fee.</p>
      <ul class="wallets">
        {wallets.length ? (
          wallets.map((w) => (
            <li key={w.name}>
              <ActionButton
                work={async () => {
                  say(`Waiting for ${w.name}: approve the sign-in message in the wallet…`);
                  const s = await signIn(w);
                  say(`Signed in as ${s.wallet}.`, 'info', true);
                  navigate((next.startsWith('#/sign-in') ? '#/' : next).replace(/^#/, ''));
                }}
              >
                <img src={w.icon} alt="" width={24} height={24} /> Sign in with {w.name}
              </ActionButton>
            </li>
          ))
        ) : (
          <li>No Solana wallet found in this browser. Install Phantom, Solflare or Backpack, then reload.</li>
        )}
      </ul>
    </section>
  );
}
