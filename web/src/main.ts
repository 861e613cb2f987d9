/**
 * Bazaar reference web app: a hash router over small page modules. Each page is a function that
 * returns its content (and may register a cleanup, e.g. to stop watching an order); the router puts
 * it into <main>, sets the document title from its <h1> and moves the keyboard focus there, so
 * keyboard and screen-reader users land on the new page.
 */
import './style.css';
import { onSessionChange, restoreSession, session, setSession } from './api.js';
import { go, h, say, short, type Page } from './dom.js';
import { balancesPage } from './pages/balances.js';
import { listingFormPage } from './pages/listing-form.js';
import { listingPage } from './pages/listing.js';
import { marketplacePage } from './pages/marketplace.js';
import { orderPage } from './pages/order.js';
import { ordersPage } from './pages/orders.js';
import { signInPage } from './pages/sign-in.js';

/** Routes: `#/path` patterns; `:name` segments become params. Pages that need a session say so. */
const routes: { pattern: string; page: Page; signedIn: boolean }[] = [
  { pattern: '/', page: marketplacePage, signedIn: true },
  { pattern: '/sign-in', page: signInPage, signedIn: false },
  { pattern: '/sell', page: listingFormPage, signedIn: true },
  { pattern: '/listings/:id', page: listingPage, signedIn: true },
  { pattern: '/listings/:id/edit', page: listingFormPage, signedIn: true },
  { pattern: '/orders', page: ordersPage, signedIn: true },
  { pattern: '/orders/:id', page: orderPage, signedIn: true },
  { pattern: '/balances', page: balancesPage, signedIn: true },
];

function match(path: string) {
  const parts = path.split('/').filter(Boolean);
  for (const r of routes) {
    const want = r.pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    if (want.every((w, i) => (w.startsWith(':') ? ((params[w.slice(1)] = decodeURIComponent(parts[i]!)), true) : w === parts[i]))) {
      return { route: r, params };
    }
  }
  return null;
}


let cleanups: (() => void)[] = [];
let rendering = 0;

async function render(): Promise<void> {
  const mine = ++rendering;
  for (const c of cleanups.splice(0)) c();
  const [path = '/', qs = ''] = window.location.hash.replace(/^#/, '').split('?');
  const main = document.getElementById('main')!;
  const found = match(path || '/');
  let content: Node;
  if (!found) content = h('section', {}, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Back to the marketplace')));
  else if (found.route.signedIn && !session()) {
    const back = encodeURIComponent(window.location.hash || '#/');
    content = h(
      'section',
      {},
      h('h1', {}, 'Sign in to continue'),
      h('p', {}, 'The marketplace, your orders and balances need a signed-in wallet (Sign In With Solana).'),
      h('p', {}, h('a', { href: `#/sign-in?next=${back}`, class: 'button' }, 'Sign in with a wallet')),
    );
  } else {
    try {
      content = await found.route.page({ params: found.params, query: new URLSearchParams(qs), onLeave: (c) => cleanups.push(c) });
    } catch (e) {
      content = h('section', {}, h('h1', {}, 'Something went wrong'), h('p', { role: 'alert' }, e instanceof Error ? e.message : String(e)));
    }
  }
  if (mine !== rendering) return; // a newer navigation won
  main.replaceChildren(content);
  const title = main.querySelector('h1');
  document.title = title ? `${title.textContent} · Bazaar` : 'Bazaar';
  if (title) {
    title.setAttribute('tabindex', '-1');
    title.focus();
  }
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a')) {
    if (a.getAttribute('href') === `#${path || '/'}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function renderSession(): void {
  const s = session();
  const box = document.getElementById('session')!;
  box.replaceChildren(
    s
      ? h(
          'span',
          {},
          h('span', { title: s.wallet }, `Signed in as ${short(s.wallet)} (${s.walletName})`),
          ' ',
          h('button', { type: 'button', onclick: () => (setSession(null), say('Signed out.'), go('#/sign-in')) }, 'Sign out'),
        )
      : h('a', { href: '#/sign-in' }, 'Sign in'),
  );
}

// the skip link focuses <main> instead of changing the route
document.querySelector('.skip')!.addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main')!.focus();
});
restoreSession();
onSessionChange(renderSession);
renderSession();
window.addEventListener('hashchange', () => void render());
void render();
