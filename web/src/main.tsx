/**
 * Bazaar reference web app: Preact components (the React API through preact/compat), wouter routes over
 * the URL's hash, and one TanStack Query cache for every read (queries.ts). The shell: the header with
 * the session, the busy bar (any read or action in flight), the status region (cleared on navigation),
 * the news of the signed-in user (new sales and messages, live.ts), and the page of the route, whose
 * heading takes the keyboard focus when it arrives (ui.tsx, PageHeading).
 */
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { QueryClientProvider, useIsFetching, useIsMutating } from '@tanstack/react-query';
import { Suspense, lazy } from 'preact/compat';
import { Route, Router, Switch, useLocation } from 'wouter-preact';
import { onSessionChange, restoreSession, session, signOut, type Session } from './api.js';
import { followMine, type News } from './live.js';
import { queryClient, useMyRoles, type OperatorRole } from './queries.js';
import { navigate, useHashPath, useHashSearch } from './router.js';
import { StatusRegion, clearNoticeOnNavigation, say } from './ui.js';
import { BalancesPage } from './pages/balances.js';
import { ListingFormPage } from './pages/listing-form.js';
import { ListingPage } from './pages/listing.js';
import { MarketplacePage } from './pages/marketplace.js';
import { OrderPage } from './pages/order.js';
import { OrdersPage } from './pages/orders.js';
import { SignInPage, SignInPrompt } from './pages/sign-in.js';

// conversations and custom offers (issue 24): a chunk of their own, loaded when first opened
const ConversationsPage = lazy(() => import('./pages/conversations.js').then((m) => ({ default: m.ConversationsPage })));
const ConversationPage = lazy(() => import('./pages/conversations.js').then((m) => ({ default: m.ConversationPage })));
// the operator pages (issue 25): lazy chunks, so a shopper's first load does not carry them; the reports
// page (with its chart library) is a chunk of its own
const ModerationPage = lazy(() => import('./pages/operator.js').then((m) => ({ default: m.ModerationPage })));
const DisputeDeskPage = lazy(() => import('./pages/operator.js').then((m) => ({ default: m.DisputeDeskPage })));
const AuditLogPage = lazy(() => import('./pages/operator.js').then((m) => ({ default: m.AuditLogPage })));
const ReportsPage = lazy(() => import('./pages/reports.js').then((m) => ({ default: m.ReportsPage })));
const loading = <p class="loading">Loading…</p>;

/** The operator pages: route, navigation label, the role that opens it. */
const OPERATOR_PAGES: { path: string; label: string; role: OperatorRole; page: () => preact.JSX.Element }[] = [
  { path: '/operator/moderation', label: 'Moderation', role: 'moderator', page: () => <ModerationPage /> },
  { path: '/operator/disputes', label: 'Dispute desk', role: 'arbiter', page: () => <DisputeDeskPage /> },
  { path: '/operator/audit', label: 'Audit log', role: 'admin', page: () => <AuditLogPage /> },
  { path: '/operator/reports', label: 'Reports', role: 'admin', page: () => <ReportsPage /> },
];

/** An operator page: the sign-in prompt without a session; a plain refusal without the role; else the page (loaded on demand). */
function OperatorRoute({ role, label, page }: { role: OperatorRole; label: string; page: () => preact.JSX.Element }) {
  const s = useSession();
  const roles = useMyRoles(!!s);
  const me = queryClient.getQueryState(['me']);
  if (!s) return <SignInPrompt />;
  if (!roles.includes(role)) {
    if (me?.status !== 'success' && me?.status !== 'error') return loading;
    return (
      <section>
        <h1 tabIndex={-1} ref={(el) => el?.focus()}>
          {label}
        </h1>
        <p>This page is for users holding the {role} role. An admin grants it.</p>
      </section>
    );
  }
  return <Suspense fallback={loading}>{page()}</Suspense>;
}

function useSession(): Session | null {
  const [s, set] = useState(session);
  useEffect(() => onSessionChange(set), []);
  return s;
}

/** A page that needs a wallet: the sign-in prompt without one. */
const signedIn = (page: () => preact.JSX.Element) => () => (session() ? page() : <SignInPrompt />);

function SessionBox() {
  const s = useSession();
  if (!s) return <a href="#/sign-in">Sign in</a>;
  return (
    <span class="who">
      <span title={s.wallet}>
        Signed in as {s.wallet.slice(0, 4)}…{s.wallet.slice(-4)}
        <span class="wallet-name"> ({s.walletName})</span>
      </span>{' '}
      <button
        type="button"
        onClick={() =>
          void signOut().then(() => {
            queryClient.clear();
            say('Signed out.', 'info', true);
            navigate('/sign-in');
          })
        }
      >
        Sign out
      </button>
    </span>
  );
}

/** New sales, payments and messages of the signed-in user, as they arrive (a live region). */
function NewsFeed() {
  const s = useSession();
  const [news, setNews] = useState<{ id: number; text: string; href: string }[]>([]);
  useEffect(() => {
    if (!s) return;
    let n = 0;
    const add = (text: string, href: string) => setNews((all) => [...all.slice(-2), { id: ++n, text, href }]);
    return followMine(s.wallet, (e: News) => {
      if (e.kind === 'sale') add(`New sale: “${e.order.listing?.title ?? 'a listing'}”. The buyer pays into escrow next.`, `#/orders/${e.order.order_id}`);
      else if (e.kind === 'paid') add('An order of yours was paid: the money is in escrow, you can start the work.', `#/orders/${e.order.order_id}`);
      else if (e.message.order_id) add(`New message from the ${e.message.sender_role}.`, `#/orders/${e.message.order_id}`);
    });
  }, [s?.wallet]);
  return (
    <div class="news" aria-live="polite" data-testid="news">
      {news.map((x) => (
        <p key={x.id} class="notice">
          <a href={x.href}>{x.text}</a>{' '}
          <button type="button" aria-label="Dismiss" onClick={() => setNews((all) => all.filter((y) => y.id !== x.id))}>
            ×
          </button>
        </p>
      ))}
    </div>
  );
}

/** The thin bar at the top while any read or action is in flight; <main> is marked busy meanwhile. */
function useBusy(): boolean {
  return useIsFetching() + useIsMutating() > 0;
}

function Shell() {
  const [path] = useLocation();
  const search = useHashSearch();
  const busy = useBusy();
  const query = new URLSearchParams(search);
  const current = (href: string) => (path === href ? 'page' : undefined);
  const roles = useMyRoles(!!useSession());
  const operatorPages = OPERATOR_PAGES.filter((p) => roles.includes(p.role));
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header>
        <a class="brand" href="#/">
          Bazaar
        </a>
        <nav aria-label="Main">
          <a href="#/" aria-current={current('/')}>
            Marketplace
          </a>
          <a href="#/sell" aria-current={current('/sell')}>
            Sell
          </a>
          <a href="#/orders" aria-current={current('/orders')}>
            My orders
          </a>
          <a href="#/conversations" aria-current={current('/conversations')}>
            Messages
          </a>
          <a href="#/balances" aria-current={current('/balances')}>
            Balances
          </a>
        </nav>
        {operatorPages.length ? (
          <nav aria-label="Operator">
            {operatorPages.map((p) => (
              <a href={`#${p.path}`} aria-current={current(p.path)}>
                {p.label}
              </a>
            ))}
          </nav>
        ) : null}
        <div id="session" class="session">
          <SessionBox />
        </div>
      </header>
      <div class={`busy-bar${busy ? ' on' : ''}`} aria-hidden="true" />
      <StatusRegion />
      <NewsFeed />
      <main id="main" tabIndex={-1} aria-busy={busy ? 'true' : undefined}>
        <Switch>
          <Route path="/">{() => <MarketplacePage query={query} />}</Route>
          <Route path="/sign-in">{() => <SignInPage query={query} />}</Route>
          <Route path="/sell">{signedIn(() => <ListingFormPage />)}</Route>
          <Route path="/listings/:id/edit">{(p: { id: string }) => (session() ? <ListingFormPage key={p.id} id={p.id} /> : <SignInPrompt />)}</Route>
          <Route path="/listings/:id">{(p: { id: string }) => <ListingPage key={p.id} id={p.id} />}</Route>
          <Route path="/orders">{signedIn(() => <OrdersPage />)}</Route>
          <Route path="/orders/:id">{(p: { id: string }) => (session() ? <OrderPage key={p.id} id={p.id} /> : <SignInPrompt />)}</Route>
          <Route path="/conversations">{signedIn(() => <Suspense fallback={loading}><ConversationsPage /></Suspense>)}</Route>
          <Route path="/conversations/:id">
            {(p: { id: string }) => (session() ? <Suspense fallback={loading}><ConversationPage key={p.id} id={p.id} /></Suspense> : <SignInPrompt />)}
          </Route>
          {OPERATOR_PAGES.map((p) => (
            <Route path={p.path}>{() => <OperatorRoute role={p.role} label={p.label} page={p.page} />}</Route>
          ))}
          <Route path="/balances">{signedIn(() => <BalancesPage />)}</Route>
          <Route>
            <NotFound />
          </Route>
        </Switch>
      </main>
    </>
  );
}

function NotFound() {
  useEffect(() => {
    document.title = 'Not found · Bazaar';
  }, []);
  return (
    <section>
      <h1 tabIndex={-1} ref={(el) => el?.focus()}>
        Not found
      </h1>
      <p>
        This address leads nowhere. <a href="#/">Back to the marketplace</a>
      </p>
    </section>
  );
}

function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <Router hook={useHashPath} searchHook={useHashSearch} hrefs={(href: string) => `#${href}`}>
        <Shell />
      </Router>
    </QueryClientProvider>
  );
}

restoreSession();
// a navigation clears old messages (the new page's heading takes the focus: ui.tsx PageHeading)
window.addEventListener('hashchange', () => clearNoticeOnNavigation());
// another user, or none: nothing read for the previous one may show
onSessionChange(() => queryClient.clear());
render(<App />, document.getElementById('app')!);

