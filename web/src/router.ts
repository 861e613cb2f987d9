/**
 * Hash routes (`#/orders/123?x=1`): the server serves one index.html at /app/, so the route lives in
 * the URL's fragment. This is the location hook wouter's <Router> takes (`hook`, `searchHook`): the
 * path is the fragment before `?`, the query string what follows it.
 */
import { useSyncExternalStore } from 'preact/compat';
import { focusNextHeading } from './ui.js';

const subscribe = (cb: () => void) => {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
};
const hash = () => window.location.hash;
const split = (h: string): [string, string] => {
  const [path = '/', qs = ''] = h.replace(/^#/, '').split('?');
  return [path || '/', qs];
};

/** Go to a route, e.g. `navigate('/orders/1')`; the same route renders again (its data is re-read). */
export function navigate(to: string): void {
  const target = `#${to.startsWith('/') ? to : `/${to}`}`;
  if (window.location.hash === target) {
    focusNextHeading();
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  }
  else window.location.hash = target;
}

/** wouter location hook: [path, navigate]. */
export function useHashPath(): [string, (to: string) => void] {
  return [split(useSyncExternalStore(subscribe, hash))[0], navigate];
}

/** wouter search hook: the query string after the fragment's `?`. */
export function useHashSearch(): string {
  return split(useSyncExternalStore(subscribe, hash))[1];
}
