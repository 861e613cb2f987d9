/**
 * The app's small shared components: the status message (one live region), headings that take the
 * keyboard focus when a page arrives, busy buttons, labelled fields with their error, amounts, times
 * with a live countdown, shortened addresses with the full one in a title and a copy button, a party
 * (name or short address, rating, review count), and the error box with its next step.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'preact/compat';
import { formatAmount, formatCountdown, formatRelative, formatTime, short } from './format.js';
import { plain } from './errors.js';
import { useUser, type PartySummary } from './queries.js';

// ---- the status message (announced by screen readers; cleared on navigation) ----

type Notice = { text: string; kind: 'info' | 'error'; carry: boolean } | null;
let notice: Notice = null;
const noticeListeners = new Set<() => void>();
/**
 * Announce a message in the status region; `error` marks it as an error; `null` clears it. A message
 * said by an action that then navigates (`carry`) stays for the page it leads to, and no longer.
 */
export function say(text: string | null, kind: 'info' | 'error' = 'info', carry = false): void {
  notice = text ? { text, kind, carry } : null;
  for (const l of noticeListeners) l();
}
/** Called by the router on each navigation: yesterday's messages go. */
export function clearNoticeOnNavigation(): void {
  if (notice?.carry) notice = { ...notice, carry: false };
  else say(null);
}
export function StatusRegion() {
  const n = useSyncExternalStore(
    (cb) => (noticeListeners.add(cb), () => noticeListeners.delete(cb)),
    () => notice,
  );
  return (
    <p id="status" class={`status ${n?.kind ?? ''}`} role="status" aria-live="polite">
      {n?.text ?? ''}
    </p>
  );
}

// ---- focus: a new page's heading takes the focus (WCAG 2.4.3), once per navigation ----

/** The route (hash) whose page heading last took the focus; null: the next heading takes it anyway. */
let focusedFor: string | null = null;
/** The next page heading that mounts takes the focus (a navigation to the same route, a retry). */
export function focusNextHeading(): void {
  focusedFor = null;
}

/** The page's <h1>: sets the document title; takes the keyboard focus when the page just arrived. */
export function PageHeading({ children, text }: { children?: ComponentChildren; text: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  // a layout effect: the focus moves in the same task the heading appears in (no moment without it)
  useLayoutEffect(() => {
    document.title = `${text} · Bazaar`;
    // the first heading of a route takes the focus (a page may render "Loading" first, without one)
    if (ref.current && focusedFor !== window.location.hash) {
      focusedFor = window.location.hash;
      ref.current.focus();
    }
  }, [text]);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children ?? text}
    </h1>
  );
}

/** Move the keyboard focus to `el` (tabindex -1 added), e.g. the new state after an action. */
export function focusOn(el: HTMLElement | null | undefined): void {
  if (!el) return;
  if (!el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
  el.focus();
}

// ---- busy and errors ----

/** What a page shows while its data loads: a busy indicator (announced), no stale content. */
export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <section aria-busy="true">
      <p class="loading" role="status">
        <span class="spinner" aria-hidden="true" /> {what}…
      </p>
    </section>
  );
}

/** An error in plain words, with Retry when retrying may help (network failure, busy service). */
export function ErrorBox({ error, retry, heading }: { error: unknown; retry?: () => void; heading?: string }) {
  const p = plain(error);
  return (
    <section>
      {heading ? <PageHeading text={heading} /> : null}
      <div class="error-box" role="alert">
        <p>{p.message}</p>
        {p.retry && retry ? (
          <button type="button" onClick={() => (focusNextHeading(), retry())}>
            Try again
          </button>
        ) : null}
        {p.status === 404 || p.slug === 'validation-error' ? <a href="#/">Back to the marketplace</a> : null}
      </div>
    </section>
  );
}

/**
 * A button that runs `work`: disabled and marked busy while it runs; an error goes to `onError` (a
 * form's field errors) or the status region.
 */
export function ActionButton(
  props: Omit<JSX.ButtonHTMLAttributes<HTMLButtonElement>, 'onClick'> & { work: () => Promise<void>; onError?: (e: unknown) => void },
) {
  const { work, onError, children, ...rest } = props;
  const [busy, setBusy] = useState(false);
  const run = async () => {
    if (busy) return;
    setBusy(true);
    try {
      await work();
    } catch (e) {
      if (onError) onError(e);
      else say(plain(e).message, 'error');
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" {...rest} disabled={busy || rest.disabled} aria-busy={busy ? 'true' : undefined} onClick={() => void run()}>
      {children}
    </button>
  );
}

/** A labelled field (`<label for>`), its hint and its error both linked as the control's description. */
export function Field({ id, label, hint, error, children }: { id: string; label: string; hint?: string; error?: string; children: ComponentChildren }) {
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children}
      {hint ? <small id={`${id}-hint`}>{hint}</small> : null}
      {error ? (
        <small id={`${id}-error`} class="field-error">
          {error}
        </small>
      ) : null}
    </div>
  );
}
/** The aria attributes of a control inside <Field>. */
export const described = (id: string, hint?: string, error?: string) => ({
  id,
  'aria-describedby': [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined,
  'aria-invalid': error ? ('true' as const) : undefined,
});

// ---- numbers, times, addresses, people ----

export const Amount = ({ base, decimals, currency }: { base: string | bigint; decimals: number; currency: string }) => (
  <span class="amount">{formatAmount(base, decimals, currency)}</span>
);

/** Re-render every `ms` (for countdowns and relative times). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/** A time in the user's zone, with the relative time ("in 3 hours"). */
export function Time({ iso }: { iso: string | null | undefined }) {
  const now = useNow(30_000);
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso}>
      {formatTime(iso)} ({formatRelative(iso, now)})
    </time>
  );
}

/** A live countdown to `iso` ("14:32 left"); its text is hidden from the live region's chatter. */
export function Countdown({ to }: { to: string }) {
  const now = useNow(1000);
  return (
    <time class="countdown" dateTime={to} data-testid="countdown">
      {formatCountdown(to, now)}
    </time>
  );
}

/** "7xKX…gAsU" with the full address as its title and a button that copies it. */
export function Address({ value, label = 'address' }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <span class="address">
      <span class="mono" title={value}>
        {short(value)}
      </span>
      <button
        type="button"
        class="copy"
        aria-label={`Copy the full ${label} ${value}`}
        onClick={() =>
          void navigator.clipboard?.writeText(value).then(
            () => setCopied(true),
            () => say(`The ${label} is ${value}`),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </span>
  );
}

/** Stars and review count: "★ 4.5 · 12 reviews", "no reviews yet". */
export function Rating({ average, count }: { average: number | null | undefined; count: number | null | undefined }) {
  if (!count || average == null) return <span class="rating">no reviews yet</span>;
  return (
    <span class="rating">
      <span aria-hidden="true">★</span> {average.toFixed(1)}
      <span class="sr-only"> out of 5</span> · {count} review{count === 1 ? '' : 's'}
    </span>
  );
}

/**
 * The other party of an order or a listing's seller: display name (or short address), rating and review
 * count; the summary the API sends when it has one, else the user's public profile.
 */
export function Party({ wallet, summary, testId }: { wallet: string; summary?: PartySummary | null; testId?: string }) {
  const profile = useUser(wallet, !summary);
  const name = summary?.display_name ?? profile.data?.display_name ?? null;
  const average = summary ? summary.rating.average : profile.data?.reputation.average;
  const count = summary ? summary.rating.review_count : profile.data?.reputation.count;
  return (
    <span class="party" data-testid={testId}>
      {name ? <bdi class="name">{name}</bdi> : null} <Address value={wallet} label="wallet address" />{' '}
      {summary || profile.data ? <Rating average={average} count={count} /> : null}
    </span>
  );
}

/** Plain text with its http(s) links made clickable (nothing else is interpreted). */
export function Linkified({ text }: { text: string }) {
  const parts = text.split(/(https?:\/\/[^\s<>"']+)/g);
  return (
    <>
      {parts.map((p, i) =>
        i % 2 ? (
          <a href={p} target="_blank" rel="noopener noreferrer nofollow">
            {p}
          </a>
        ) : (
          p
        ),
      )}
    </>
  );
}
