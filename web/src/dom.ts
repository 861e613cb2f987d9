/**
 * A few DOM helpers instead of a framework: `h()` builds elements, `say()` writes to the page's live
 * status region (screen readers announce it), `short()` abbreviates base58 addresses.
 */
type Child = Node | string | number | null | undefined | false;
type Props = Record<string, string | number | boolean | null | undefined | EventListener>;

/**
 * `h('button', { type: 'button', onclick: fn }, 'Buy')`: attributes by name (false/null/undefined
 * omit them), `on<event>` functions become listeners, strings and numbers become text.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else if (v !== false && v !== null && v !== undefined) el.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
  return el;
}

/**
 * A labelled form field: `<label for>` naming the control (a label wrapped around a select would add
 * the options' text to its name); a hint goes below, linked as the control's description.
 */
let fields = 0;
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || `field-${++fields}`;
  control.id = id;
  const box = h('div', { class: 'field' }, h('label', { for: id }, label), control);
  if (hint) {
    control.setAttribute('aria-describedby', `${id}-hint`);
    box.append(h('small', { id: `${id}-hint` }, hint));
  }
  return box;
}

/** Announce a message in the status region; `error` also marks it as an alert. */
export function say(message: string, kind: 'info' | 'error' = 'info'): void {
  const el = document.getElementById('status')!;
  el.textContent = message;
  el.className = `status ${kind}`;
}

/** "7xKX…gAsU": first and last 4 characters of a base58 address. */
export const short = (address: string): string => `${address.slice(0, 4)}…${address.slice(-4)}`;

/** A date for people, in the browser's locale. */
export const when = (iso: string | null): string => (iso ? new Date(iso).toLocaleString() : '—');

/** Run `work` for a button: disabled while running, errors announced. */
export function busy(button: HTMLButtonElement, work: () => Promise<void>): () => Promise<void> {
  return async () => {
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    try {
      await work();
    } catch (e) {
      say(e instanceof Error ? e.message : String(e), 'error');
    } finally {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    }
  };
}

/** What a page gets: route parameters, the hash's query string, and `onLeave` for cleanups. */
export interface PageContext {
  params: Record<string, string>;
  query: URLSearchParams;
  onLeave(cleanup: () => void): void;
}
/** A page: its content for the route (main.ts renders it into <main>). */
export type Page = (ctx: PageContext) => Promise<Node>;

/** Navigate to a hash route (pages call it after an action); the same route renders again. */
export function go(hash: string): void {
  if (window.location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else window.location.hash = hash;
}
