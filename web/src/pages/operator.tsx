/**
 * The operator pages (issue 25), one lazy chunk loaded when an operator first opens one of them:
 *
 * - Moderation (moderator): the report queue grouped by target, oldest first, with counts per reason and the
 *   reports themselves; dismiss a target's reports, take a listing down or restore it, suspend / ban /
 *   reinstate an account, each with a reason the affected user receives.
 * - Dispute desk (arbiter): open disputes oldest first with the attention flag, both sides' evidence (file
 *   links with their SHA-256, each submission's hash), the order's messages, and the ruling: the buyer's
 *   share and a written rationale that both parties receive.
 * - Audit log (admin): filters, cursor pages (newest first), and a verify button that walks the hash chain.
 *
 * The service checks the role on every request; the app shows these pages only to holders (main.tsx).
 */
import './operator.css';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { AuditVerification, DisputeCase, ReportGroup } from '@bazaar/client-sdk';
import { client, ok } from '../api.js';
import { plain } from '../errors.js';
import { formatTime, short } from '../format.js';
import { queryClient } from '../queries.js';
import { ActionButton, Address, ErrorBox, Field, Loading, PageHeading, Time, described, say } from '../ui.js';

type Input = JSX.TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, Event>;
const val = (e: Input) => e.currentTarget.value;

/** A reason field and the error the service gave for it (the reason is required: 1..1000 characters). */
function useReason(): [string, (s: string) => void, string | undefined, (e: unknown) => void, () => string] {
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | undefined>();
  const onError = (e: unknown) => {
    if ((e as { silent?: boolean }).silent) return; // take() said it on the field
    const p = plain(e);
    setError(p.fields.reason ?? p.message);
  };
  const take = () => {
    const r = reason.trim();
    if (!r) {
      const m = 'Write the reason: the affected user receives it.';
      setError(m);
      throw Object.assign(new Error(m), { silent: true });
    }
    setError(undefined);
    return r;
  };
  return [reason, setReason, error, onError, take];
}

// ---------------------------------------------------------------- moderation

function ReportGroupCard({ g }: { g: ReportGroup }) {
  const [reason, setReason, error, onError, take] = useReason();
  const id = `reason-${g.target_type}-${g.target_id}`;
  const what = g.target_type === 'listing' ? `Listing “${g.listing_title ?? g.target_id}”` : `User ${short(g.target_wallet)}`;
  const done = async (text: string) => {
    setReason('');
    say(text, 'info');
    await queryClient.invalidateQueries({ queryKey: ['moderation'] });
  };
  const wallet = { wallet: g.target_wallet };
  return (
    <li class="card" data-testid="report-group" data-target={g.target_id} data-target-type={g.target_type}>
      <h2 class="h3">
        {g.target_type === 'listing' ? (
          <>
            Listing “<bdi>{g.listing_title ?? g.target_id}</bdi>”
          </>
        ) : (
          <>User {short(g.target_wallet)}</>
        )}
      </h2>
      <p class="meta">
        {g.report_count} open report{g.report_count === 1 ? '' : 's'} ·{' '}
        {Object.entries(g.reasons)
          .map(([r, n]) => `${r.replace(/_/g, ' ')} ${n}`)
          .join(', ')}{' '}
        · oldest <Time iso={g.oldest_report_at} />
        {g.taken_down ? <strong> · {g.target_type === 'listing' ? 'taken down' : 'suspended or banned'}</strong> : null}
      </p>
      <p class="meta">
        {g.target_type === 'listing' ? 'Seller' : 'Wallet'} <Address value={g.target_wallet} label="wallet address" />
        {g.target_type === 'listing' ? (
          <>
            {' '}
            · <a href={`#/listings/${g.target_id}`}>open the listing</a>
          </>
        ) : null}
      </p>
      <ul class="reports">
        {g.reports.map((r) => (
          <li>
            <strong>{r.reason.replace(/_/g, ' ')}</strong> by <span class="mono" title={r.reporter_wallet}>{short(r.reporter_wallet)}</span>,{' '}
            <Time iso={r.created_at} />
            {r.text ? <blockquote dir="auto">{r.text}</blockquote> : null}
          </li>
        ))}
      </ul>
      <Field id={id} label={`Reason for your decision on ${what}`} hint="The affected user receives it (1 to 1000 characters)." error={error}>
        <textarea {...described(id, 'x', error)} rows={2} maxLength={1000} value={reason} onInput={(e) => setReason(val(e))} />
      </Field>
      <div class="row-actions">
        <ActionButton
          onError={onError}
          work={async () => {
            const n = ok(await client.moderation.dismissReports({ params: { target_type: g.target_type, target_id: g.target_id }, body: { reason: take() } }), 200);
            await done(`${n.dismissed} report${n.dismissed === 1 ? '' : 's'} dismissed.`);
          }}
        >
          Dismiss the reports
        </ActionButton>
        {g.target_type === 'listing' ? (
          g.taken_down ? (
            <ActionButton
              onError={onError}
              work={async () => {
                ok(await client.moderation.restoreListing({ params: { listing_id: g.target_id }, body: { reason: take() } }), 200);
                await done('The listing is restored.');
              }}
            >
              Restore the listing
            </ActionButton>
          ) : (
            <ActionButton
              class="danger"
              onError={onError}
              work={async () => {
                ok(await client.moderation.takeDownListing({ params: { listing_id: g.target_id }, body: { reason: take() } }), 200);
                await done('The listing is taken down: it left search and cannot be ordered. The seller was told why.');
              }}
            >
              Take the listing down
            </ActionButton>
          )
        ) : (
          <>
            <ActionButton
              class="danger"
              onError={onError}
              work={async () => {
                ok(await client.moderation.suspendUser({ params: wallet, body: { reason: take() } }), 200);
                await done('The account is suspended until reinstated.');
              }}
            >
              Suspend the account
            </ActionButton>
            <ActionButton
              class="danger"
              onError={onError}
              work={async () => {
                ok(await client.moderation.banUser({ params: wallet, body: { reason: take() } }), 200);
                await done('The account is banned.');
              }}
            >
              Ban the account
            </ActionButton>
          </>
        )}
      </div>
    </li>
  );
}

/** Act on a listing or an account directly (restore a taken-down listing, reinstate an account, suspend until a date). */
function DirectActions() {
  const [target, setTarget] = useState('');
  const [until, setUntil] = useState('');
  const [reason, setReason, error, onError, take] = useReason();
  const [targetError, setTargetError] = useState<string | undefined>();
  const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
  const listing = () => {
    const t = target.trim();
    if (!isUuid(t)) {
      setTargetError('A listing id looks like 0b6f…-…: copy it from the listing’s address.');
      throw Object.assign(new Error('not a listing id'), { silent: true });
    }
    setTargetError(undefined);
    return { listing_id: t };
  };
  const wallet = () => {
    const t = target.trim();
    if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(t)) {
      setTargetError('A wallet address is 32 to 44 base58 characters.');
      throw Object.assign(new Error('not a wallet'), { silent: true });
    }
    setTargetError(undefined);
    return { wallet: t };
  };
  const fail = onError;
  const done = async (text: string) => {
    setReason('');
    say(text);
    await queryClient.invalidateQueries({ queryKey: ['moderation'] });
  };
  return (
    <section aria-labelledby="direct-h">
      <h2 id="direct-h">A listing or an account</h2>
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <Field id="direct-target" label="Listing id or wallet address" error={targetError}>
          <input {...described('direct-target', undefined, targetError)} value={target} onInput={(e) => setTarget(val(e))} autoComplete="off" spellcheck={false} />
        </Field>
        <Field id="direct-reason" label="Reason" hint="The affected user receives it (1 to 1000 characters)." error={error}>
          <textarea {...described('direct-reason', 'x', error)} rows={2} maxLength={1000} value={reason} onInput={(e) => setReason(val(e))} />
        </Field>
        <Field id="direct-until" label="Suspend until (optional)" hint="Empty: until reinstated.">
          <input type="datetime-local" {...described('direct-until', 'x')} value={until} onInput={(e) => setUntil(val(e))} />
        </Field>
        <div class="row-actions">
          <ActionButton onError={fail} work={async () => (ok(await client.moderation.takeDownListing({ params: listing(), body: { reason: take() } }), 200), done('The listing is taken down.'))}>
            Take listing down
          </ActionButton>
          <ActionButton onError={fail} work={async () => (ok(await client.moderation.restoreListing({ params: listing(), body: { reason: take() } }), 200), done('The listing is restored.'))}>
            Restore listing
          </ActionButton>
          <ActionButton
            onError={fail}
            work={async () => {
              const s = ok(
                await client.moderation.suspendUser({ params: wallet(), body: { reason: take(), ...(until ? { until: new Date(until).toISOString() } : {}) } }),
                200,
              );
              await done(`The account is suspended ${s.until ? `until ${formatTime(s.until)}` : 'until reinstated'}.`);
            }}
          >
            Suspend account
          </ActionButton>
          <ActionButton onError={fail} work={async () => (ok(await client.moderation.banUser({ params: wallet(), body: { reason: take() } }), 200), done('The account is banned.'))}>
            Ban account
          </ActionButton>
          <ActionButton onError={fail} work={async () => (ok(await client.moderation.reinstateUser({ params: wallet(), body: { reason: take() } }), 200), done('The account is reinstated.'))}>
            Reinstate account
          </ActionButton>
        </div>
      </form>
    </section>
  );
}

export function ModerationPage() {
  const [kind, setKind] = useState<'' | 'listing' | 'user'>('');
  const q = useInfiniteQuery({
    queryKey: ['moderation', 'queue', kind],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      ok(await client.moderation.listReportQueue({ query: { limit: 20, ...(pageParam ? { cursor: pageParam } : {}), ...(kind ? { target_type: kind } : {}) } }), 200),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  if (q.error) return <ErrorBox heading="Moderation" error={q.error} retry={() => void q.refetch()} />;
  const groups = q.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <section>
      <PageHeading text="Moderation" />
      <p>Reported listings and users, the one waiting longest first. A report decides nothing: you do, with a reason the user receives.</p>
      <Field id="queue-kind" label="Show">
        <select id="queue-kind" value={kind} onChange={(e) => setKind(val(e) as typeof kind)}>
          <option value="">listings and users</option>
          <option value="listing">listings only</option>
          <option value="user">users only</option>
        </select>
      </Field>
      <h2>Queue</h2>
      {!q.data ? (
        <Loading what="Reading the queue" />
      ) : groups.length === 0 ? (
        <p class="empty">No open reports.</p>
      ) : (
        <ul class="cards orders" aria-label="Reported targets">
          {groups.map((g) => (
            <ReportGroupCard key={`${g.target_type}:${g.target_id}`} g={g} />
          ))}
        </ul>
      )}
      {q.hasNextPage ? (
        <button type="button" onClick={() => void q.fetchNextPage()}>
          Load more
        </button>
      ) : null}
      <DirectActions />
    </section>
  );
}

// ---------------------------------------------------------------- dispute desk

function DisputeCard({ c }: { c: DisputeCase }) {
  const d = c.dispute;
  const [percent, setPercent] = useState('50');
  const [rationale, setRationale] = useState('');
  const [errors, setErrors] = useState<{ share?: string; rationale?: string }>({});
  const id = d.dispute_id;
  const pct = Number(percent);
  const bps = Math.round(pct * 100);
  const submit = async () => {
    const e: typeof errors = {};
    if (!(percent.trim() !== '' && pct >= 0 && pct <= 100)) e.share = 'A percent from 0 (all to the seller) to 100 (all back to the buyer).';
    if (rationale.trim().length < 20) e.rationale = 'Write the reasons of your ruling: at least 20 characters. Both parties receive them.';
    setErrors(e);
    if (e.share || e.rationale) {
      document.getElementById(e.share ? `share-${id}` : `rationale-${id}`)?.focus();
      return;
    }
    ok(await client.disputes.ruleDispute({ params: { dispute_id: id }, body: { buyer_bps: bps, rationale: rationale.trim() } }), 200);
    say(`Dispute over “${c.listing_title}” resolved: ${pct} % to the buyer. Both parties received your rationale.`, 'info');
    await queryClient.invalidateQueries({ queryKey: ['disputes'] });
  };
  const onError = (e: unknown) => {
    const p = plain(e);
    if (p.fields.rationale) setErrors({ rationale: p.fields.rationale });
    else if (p.fields.buyer_bps) setErrors({ share: p.fields.buyer_bps });
    else say(p.message, 'error');
  };
  return (
    <li class="card" data-testid="dispute" data-dispute={id} data-attention={String(d.needs_attention)}>
      <h2 class="h3">
        Dispute over “<bdi>{c.listing_title}</bdi>”{d.milestone_index > 1 ? `, milestone ${d.milestone_index}` : ''}
      </h2>
      {d.needs_attention ? <p class="attention">Needs attention: open longer than the service’s limit without a ruling.</p> : null}
      <dl>
        <dt>At stake</dt>
        <dd>
          {d.at_stake.amount} {d.at_stake.currency}
        </dd>
        <dt>Reason</dt>
        <dd>
          {d.reason_code.replace(/_/g, ' ')}
          {d.reason ? (
            <>
              : <bdi dir="auto">{d.reason}</bdi>
            </>
          ) : null}{' '}
          (opened by the {d.opened_by ?? 'chain'})
        </dd>
        <dt>Opened</dt>
        <dd>
          <Time iso={d.opened_at} />
        </dd>
        <dt>Evidence until</dt>
        <dd>
          <Time iso={d.evidence_due_at} /> {d.evidence_open ? '(open)' : '(closed)'}
        </dd>
        <dt>Buyer</dt>
        <dd>
          <Address value={c.buyer_wallet} label="buyer wallet" />
        </dd>
        <dt>Seller</dt>
        <dd>
          <Address value={c.seller_wallet} label="seller wallet" />
        </dd>
        <dt>Order</dt>
        <dd>
          <a href={`#/orders/${d.order_id}`}>open the order</a>
        </dd>
      </dl>
      <div class="sides">
        {(['buyer', 'seller'] as const).map((party) => {
          const ev = d.evidence.filter((e) => e.party === party);
          return (
            <section aria-label={`The ${party}’s evidence`} data-testid={`evidence-${party}`}>
              <h3>The {party}’s evidence</h3>
              {ev.length === 0 ? <p class="meta">None submitted.</p> : null}
              {ev.map((e) => (
                <article class="evidence">
                  <p class="meta">
                    <Time iso={e.submitted_at} />
                  </p>
                  <p class="description" dir="auto">
                    {e.text}
                  </p>
                  {e.files.length ? (
                    <ul>
                      {e.files.map((f) => (
                        <li>
                          <a href={f.url} target="_blank" rel="noopener noreferrer nofollow">
                            {f.name}
                          </a>
                          {f.size_bytes != null ? ` (${f.size_bytes} bytes)` : ''}
                          <br />
                          SHA-256 <code class="mono hash">{f.sha256}</code>
                        </li>
                      ))}
                    </ul>
                  ) : null}
                  <p class="meta">
                    Submission hash <code class="mono hash">{e.content_hash}</code>
                  </p>
                </article>
              ))}
            </section>
          );
        })}
      </div>
      <details>
        <summary>The order’s messages ({c.messages.length}{c.more_messages ? '+' : ''})</summary>
        <ul class="messages">
          {c.messages.map((m) => (
            <li>
              <p class="meta">
                {m.sender_role}, <Time iso={m.created_at} />
              </p>
              <p class="body" dir="auto">
                {m.body}
              </p>
            </li>
          ))}
        </ul>
      </details>
      <form class="stack" onSubmit={(e) => e.preventDefault()} aria-label={`Ruling on “${c.listing_title}”`}>
        <Field id={`share-${id}`} label="Buyer’s share (percent)" hint={`0: all to the seller; 100: all back to the buyer. ${bps} basis points.`} error={errors.share}>
          <input
            type="number"
            inputMode="decimal"
            min={0}
            max={100}
            step={0.01}
            {...described(`share-${id}`, 'x', errors.share)}
            value={percent}
            onInput={(e) => setPercent(val(e))}
          />
        </Field>
        <Field id={`rationale-${id}`} label="Rationale" hint="20 to 3800 characters; both parties receive it, and it is posted in the order’s conversation." error={errors.rationale}>
          <textarea {...described(`rationale-${id}`, 'x', errors.rationale)} rows={4} maxLength={3800} value={rationale} onInput={(e) => setRationale(val(e))} />
        </Field>
        <ActionButton class="primary" work={submit} onError={onError}>
          Resolve the dispute
        </ActionButton>
      </form>
    </li>
  );
}

export function DisputeDeskPage() {
  const [attention, setAttention] = useState<'' | 'true' | 'false'>('');
  const q = useInfiniteQuery({
    queryKey: ['disputes', 'queue', attention],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      ok(await client.disputes.listDisputeQueue({ query: { limit: 10, ...(pageParam ? { cursor: pageParam } : {}), ...(attention ? { attention } : {}) } }), 200),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  if (q.error) return <ErrorBox heading="Dispute desk" error={q.error} retry={() => void q.refetch()} />;
  const cases = q.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <section>
      <PageHeading text="Dispute desk" />
      <p>Open disputes, the oldest first, with both sides’ evidence and the order’s messages. Check each file against its SHA-256 before relying on it.</p>
      <Field id="attention" label="Show">
        <select id="attention" value={attention} onChange={(e) => setAttention(val(e) as typeof attention)}>
          <option value="">every open dispute</option>
          <option value="true">only those that need attention</option>
          <option value="false">only those that do not</option>
        </select>
      </Field>
      {!q.data ? (
        <Loading what="Reading the open disputes" />
      ) : cases.length === 0 ? (
        <p class="empty">No open dispute.</p>
      ) : (
        <ul class="cards orders" aria-label="Open disputes">
          {cases.map((c) => (
            <DisputeCard key={c.dispute.dispute_id} c={c} />
          ))}
        </ul>
      )}
      {q.hasNextPage ? (
        <button type="button" onClick={() => void q.fetchNextPage()}>
          Load more
        </button>
      ) : null}
    </section>
  );
}

// ---------------------------------------------------------------- audit log

const ACTOR_TYPES = ['user', 'api_key', 'pat', 'system'] as const;
type AuditFilters = { actor_type: string; actor_id: string; action: string; resource_type: string; resource_id: string; from: string; to: string };
const NO_FILTERS: AuditFilters = { actor_type: '', actor_id: '', action: '', resource_type: '', resource_id: '', from: '', to: '' };

function Verify() {
  const [result, setResult] = useState<AuditVerification | null>(null);
  return (
    <section aria-labelledby="verify-h" class="state">
      <h2 id="verify-h">Tamper check</h2>
      <p>Walks every entry and checks its hash and its link to the one before.</p>
      <ActionButton work={async () => setResult(ok(await client.audit.verifyAuditLog(), 200))}>Verify the chain</ActionButton>
      <p role="status" data-testid="verify-result" data-ok={result ? String(result.ok) : undefined}>
        {!result
          ? ''
          : result.ok
            ? `The chain is intact: ${result.checked} entries checked${result.head ? `, head #${result.head.seq} ${short(result.head.hash)}` : ''}.`
            : `The chain is broken at entry #${result.first_broken!.seq} (${result.first_broken!.reason === 'hash_mismatch' ? 'the entry was edited' : 'an entry before it was deleted, inserted or edited'}); ${result.checked} entries checked before it.`}
      </p>
    </section>
  );
}

export function AuditLogPage() {
  const [draft, setDraft] = useState<AuditFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const query = Object.fromEntries(
    Object.entries(filters)
      .filter(([, v]) => v)
      .map(([k, v]) => [k, k === 'from' || k === 'to' ? new Date(v).toISOString() : v.trim()]),
  );
  const q = useInfiniteQuery({
    queryKey: ['audit', query],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) => ok(await client.audit.listAuditLog({ query: { limit: 25, ...query, ...(pageParam ? { cursor: pageParam } : {}) } as never }), 200),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const field = (k: keyof AuditFilters, label: string, type = 'text') => (
    <Field id={`f-${k}`} label={label}>
      <input id={`f-${k}`} type={type} value={draft[k]} onInput={(e) => setDraft({ ...draft, [k]: val(e) })} autoComplete="off" />
    </Field>
  );
  const entries = q.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <section>
      <PageHeading text="Audit log" />
      <p>Every operator action and every money movement, newest first, hash-chained.</p>
      <Verify />
      <form
        class="search"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        <Field id="f-actor_type" label="Actor type">
          <select id="f-actor_type" value={draft.actor_type} onChange={(e) => setDraft({ ...draft, actor_type: val(e) })}>
            <option value="">any</option>
            {ACTOR_TYPES.map((a) => (
              <option value={a}>{a}</option>
            ))}
          </select>
        </Field>
        {field('actor_id', 'Actor id')}
        {field('action', 'Action (e.g. listing.taken_down)')}
        {field('resource_type', 'Resource type')}
        {field('resource_id', 'Resource id')}
        {field('from', 'From', 'datetime-local')}
        {field('to', 'To', 'datetime-local')}
        <button type="submit" class="primary">
          Filter
        </button>
        <button type="button" onClick={() => (setDraft(NO_FILTERS), setFilters(NO_FILTERS))}>
          Clear
        </button>
      </form>
      {q.error ? (
        <ErrorBox error={q.error} retry={() => void q.refetch()} />
      ) : !q.data ? (
        <Loading what="Reading the audit log" />
      ) : entries.length === 0 ? (
        <p class="empty">No entry matches.</p>
      ) : (
        <ol class="audit" aria-label="Audit entries">
          {entries.map((a) => (
            <li class="card" data-testid="audit-entry" data-action={a.action}>
              <p>
                <strong>#{a.seq}</strong> <time dateTime={a.created_at}>{formatTime(a.created_at)}</time>: <span class="mono">{a.action}</span> on{' '}
                {a.resource_type} <span class="mono" title={a.resource_id}>{short(a.resource_id)}</span>
              </p>
              <p class="meta">
                by {a.actor_type} <span class="mono" title={a.actor_id}>{short(a.actor_id)}</span>
                {a.request_id ? <> · request <span class="mono">{short(a.request_id)}</span></> : null}
                {a.signature ? <> · tx <span class="mono" title={a.signature}>{short(a.signature)}</span></> : null}
                {' '}· hash <span class="mono" title={a.hash}>{short(a.hash)}</span>
              </p>
              {a.before || a.after ? (
                <details>
                  <summary>Before and after</summary>
                  <pre class="json">{JSON.stringify({ before: a.before, after: a.after }, null, 2)}</pre>
                </details>
              ) : null}
            </li>
          ))}
        </ol>
      )}
      {q.hasNextPage ? (
        <button type="button" onClick={() => void q.fetchNextPage()}>
          Older entries
        </button>
      ) : null}
    </section>
  );
}
