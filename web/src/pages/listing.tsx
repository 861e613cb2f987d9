/**
 * A listing: details, the seller (name, rating, reviews), its Token-2022 NFT mint (explorer + metadata
 * JSON), and Buy (or Edit for its seller). A listing an unpaid order holds reads "Reserved until HH:MM"
 * and has no Buy button. Before creating the order the buyer's balances are checked, and what is
 * missing is said in plain words (the service checks again: 409 insufficient-funds).
 */
import { useState } from 'preact/hooks';
import type { Listing, ListingMilestone, ListingPackage } from '@bazaar/client-sdk';
import { newIdempotencyKey } from '@bazaar/client-sdk/lite';
import { API_ORIGIN, client, ok, session } from '../api.js';
import { plain } from '../errors.js';
import { formatAmount } from '../format.js';
import { explorerUrl, queryClient, useCategories, useDecimals, useListing, useListingAction, useNetwork } from '../queries.js';
import { navigate } from '../router.js';
import { ActionButton, ErrorBox, Field, Loading, PageHeading, Party, Time, described, say } from '../ui.js';
import { availability } from './marketplace.js';
import { rememberPayment } from './order.js';
import { SignInPrompt, isSignInNeeded } from './sign-in.js';

/**
 * What the signed-in wallet lacks to buy `l`, in words ("2.5 USDC more (you have 0.5 USDC)"), or null
 * when its chain balances cover the price and it has some SOL for the network fee.
 */
export async function whatIsMissing(l: Listing, priceBaseUnits: string = l.price_base_units): Promise<string | null> {
  const balances = ok(await client.wallet.getBalances(), 200).balances.filter((b) => b.source === 'chain');
  const native = BigInt(balances.find((b) => b.mint === null)?.amount_base_units ?? '0');
  const missing: string[] = [];
  const price = BigInt(priceBaseUnits);
  if (l.currency === 'SOL') {
    const wrapped = BigInt(balances.find((b) => b.currency === 'SOL' && b.mint !== null)?.amount_base_units ?? '0');
    if (native + wrapped < price) missing.push(`${formatAmount(price - native - wrapped, 9, 'SOL')} more (you have ${formatAmount(native + wrapped, 9, 'SOL')}), and a little SOL for the network fee`);
    else if (native + wrapped === price) missing.push('a little SOL for the network fee');
  } else {
    const line = balances.find((b) => b.mint === l.currency_mint);
    const have = BigInt(line?.amount_base_units ?? '0');
    const decimals = line?.decimals ?? 6;
    if (have < price) missing.push(`${formatAmount(price - have, decimals, l.currency)} more (you have ${formatAmount(have, decimals, l.currency)})`);
    if (native === 0n) missing.push('a little SOL for the network fee');
  }
  return missing.length ? `To buy this you need ${missing.join(' and ')}. Add funds to your wallet, then try again.` : null;
}

/**
 * Share a listing as a blink (Solana Actions): the page URL people share (`/app/listings/{id}`, which
 * /actions.json maps to the action), the `solana-action:` link wallets open directly, and the card a blink
 * client renders, as the action endpoint serves it. Absent when the service serves no actions (ACTIONS_ENABLED off).
 */
export function BlinkShare({ id }: { id: string }) {
  const network = useNetwork();
  const card = useListingAction(id, network.data?.actions_enabled === true);
  if (!card.data) return null;
  const c = card.data;
  const page = `${API_ORIGIN}/app/listings/${id}`;
  // spec: `solana-action:<link>`, URL-encoded only when the link has a query string (ours has none)
  const action = `solana-action:${API_ORIGIN}/api/actions/listings/${id}`;
  return (
    <section aria-labelledby="blink" class="blink-share" data-testid="blink-share">
      <h2 id="blink">Share as a blink</h2>
      <p>
        Wallets and social apps that render Solana Actions show this listing as a card people can buy from without visiting
        the marketplace: share <a href={page} data-testid="blink-page">{page}</a>, or open it in a wallet with the{' '}
        <a href={action} data-testid="blink-action-link">
          solana-action: link
        </a>
        .
      </p>
      <figure class="blink-card card" data-testid="blink-card" aria-label="The blink card">
        <img src={c.icon} alt="" width={64} height={64} />
        <div>
          <h3>
            <bdi>{c.title}</bdi>
          </h3>
          <p dir="auto" data-testid="blink-description">{c.description}</p>
          {c.disabled && c.error ? <p class="meta" data-testid="blink-error">{c.error.message}</p> : null}
          <div class="actions">
            {(c.links?.actions ?? [{ label: c.label, href: '' }]).map((a) => (
              <button type="button" disabled title="Buttons work in a blink client (a wallet)" data-testid="blink-button">
                {a.label}
              </button>
            ))}
          </div>
        </div>
      </figure>
    </section>
  );
}

/** Ask the seller about the listing (an inquiry conversation: the seller may answer with a custom offer). */
function AskSeller({ l }: { l: Listing }) {
  const [text, setText] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  return (
    <details class="ask">
      <summary>Ask the seller, or for a custom offer</summary>
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <Field id="inquiry" label="Your message" error={fields.body}>
          <textarea {...described('inquiry', undefined, fields.body)} rows={3} maxLength={4000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </Field>
        <ActionButton
          onError={(e) => {
            const p = plain(e);
            setFields(p.fields);
            say(p.message, 'error');
          }}
          work={async () => {
            const r = ok(await client.chat.createInquiry({ params: { listing_id: l.listing_id }, body: { body: text } }), 201);
            say('Message sent: the seller answers in this conversation.', 'info', true);
            navigate(`/conversations/${r.conversation.conversation_id}`);
          }}
        >
          Send to the seller
        </ActionButton>
      </form>
    </details>
  );
}

function BuyButton({ l, label, pkg }: { l: Listing; label: string; pkg?: ListingPackage }) {
  const [problem, setProblem] = useState<string | null>(null);
  const problemId = pkg ? `buy-problem-${pkg.key}` : 'buy-problem';
  return (
    <div class="buy">
      <ActionButton
        class="primary"
        data-package={pkg?.key}
        aria-describedby={problem ? problemId : undefined}
        onError={(e) => {
          const p = plain(e);
          setProblem(p.message);
          // a listing taken meanwhile: show its new state
          if (p.slug === 'listing-unavailable') void queryClient.invalidateQueries({ queryKey: ['listing', l.listing_id] });
        }}
        work={async () => {
          setProblem(null);
          const missing = await whatIsMissing(l, pkg?.price_base_units);
          if (missing) {
            setProblem(missing);
            return;
          }
          // one key per click: a retried request returns the same order instead of a second one
          const order = ok(await client.orders.createOrder({ headers: { 'idempotency-key': newIdempotencyKey() }, body: { listing_id: l.listing_id, ...(pkg ? { package: pkg.key } : {}) } }), 201);
          rememberPayment(order);
          say('Order created: pay it into escrow.', 'info', true);
          navigate(`/orders/${order.order_id}`);
        }}
      >
        {label}
      </ActionButton>
      {problem ? (
        <p id={problemId} class="error-box" role="alert" data-testid="buy-problem">
          {problem}
        </p>
      ) : null}
    </div>
  );
}

/** The milestones of a package or listing: what is paid into escrow and delivered, step by step. */
function MilestoneTerms({ milestones, money, label }: { milestones: ListingMilestone[]; money: (base: string) => string; label: string }) {
  return (
    <ol class="terms" aria-label={label}>
      {milestones.map((m) => (
        <li>
          <bdi>{m.title}</bdi>: {money(m.amount_base_units)}, {m.delivery_days} day{m.delivery_days === 1 ? '' : 's'}
        </li>
      ))}
    </ol>
  );
}

/** "3 left", "Sold out", "Takes 2 orders at once": the listing's units (capacity, stock, remaining). */
export function unitsLeft(l: Listing): string | null {
  if (l.status === 'sold') return 'Sold out';
  if (l.stock === null) return l.capacity > 1 ? `Unlimited · takes ${l.capacity} orders at once` : null;
  if (l.stock === 1) return null;
  return `${l.remaining ?? 0} left${l.capacity > 1 ? ` · takes ${l.capacity} orders at once` : ''}`;
}

export function ListingPage({ id }: { id: string }) {
  const listing = useListing(id);
  const categories = useCategories();
  const network = useNetwork();
  const decimals = useDecimals();
  if (listing.error) {
    if (isSignInNeeded(listing.error)) return <SignInPrompt />;
    return <ErrorBox heading="Listing not available" error={listing.error} retry={() => void listing.refetch()} />;
  }
  if (!listing.data) return <Loading what="Loading the listing" />;
  const l = listing.data;
  const me = session()?.wallet;
  const price = formatAmount(l.price_base_units, decimals(l.currency), l.currency);
  const held = availability(l);
  const money = (base: string) => formatAmount(base, decimals(l.currency), l.currency);
  const left = unitsLeft(l);
  const canBuy = me !== l.seller_wallet && l.status === 'available' && !!me;
  const category = categories.data?.find((c) => c.slug === l.category)?.name ?? l.metadata.category_name ?? l.category;
  return (
    <article>
      <PageHeading text={l.title}>
        <bdi>{l.title}</bdi>
      </PageHeading>
      <p class="price">{l.packages.length ? `from ${price}` : price}</p>
      {left ? (
        <p class="units" data-testid="units-left">
          {left}
        </p>
      ) : null}
      <p class="description" dir="auto">
        {l.description}
      </p>
      <dl>
        <dt>Category</dt>
        <dd>{category}</dd>
        <dt>Delivery</dt>
        <dd>
          within {l.duration} day{l.duration === 1 ? '' : 's'}
        </dd>
        <dt>Status</dt>
        <dd data-testid="listing-status" data-status={l.status}>
          {held ?? 'For sale'}
        </dd>
        <dt>Seller</dt>
        <dd>
          <Party wallet={l.seller_wallet} testId="seller" />
        </dd>
        <dt>Token</dt>
        <dd>
          <a href={l.token_mint_explorer_url ?? explorerUrl(network.data, 'address', l.token_mint_address)} target="_blank" rel="noopener" data-testid="mint-link" title={l.token_mint_address} data-mint={l.token_mint_address}>
            NFT {l.token_mint_address.slice(0, 4)}…{l.token_mint_address.slice(-4)} on the explorer
          </a>{' '}
          (
          <a href={`${API_ORIGIN}/api/v1/listings/${l.listing_id}/token-metadata.json`} target="_blank" rel="noopener">
            metadata
          </a>
          )
        </dd>
        <dt>Listed</dt>
        <dd>
          <Time iso={l.created_at} />
        </dd>
      </dl>
      {l.packages.length ? (
        <section aria-labelledby="packages">
          <h2 id="packages">Packages</h2>
          <ul class="cards packages">
            {l.packages.map((p) => (
              <li class="card" data-package={p.key}>
                <h3 id={`package-${p.key}`}>
                  <bdi>{p.name}</bdi> · {money(p.price_base_units)}
                </h3>
                <p dir="auto">{p.description}</p>
                <p class="meta">
                  Delivery in {p.delivery_days} day{p.delivery_days === 1 ? '' : 's'} · {p.revisions} revision{p.revisions === 1 ? '' : 's'} included
                </p>
                {p.milestones ? <MilestoneTerms milestones={p.milestones} money={money} label={`Milestones of ${p.name}`} /> : null}
                {canBuy ? <BuyButton l={l} pkg={p} label={`Order this package (${p.name}, ${money(p.price_base_units)})`} /> : null}
              </li>
            ))}
          </ul>
        </section>
      ) : l.milestones ? (
        <section aria-labelledby="listing-milestones">
          <h2 id="listing-milestones">Paid in milestones</h2>
          <p>You fund one milestone at a time; the seller is paid each one when you release it.</p>
          <MilestoneTerms milestones={l.milestones} money={money} label="Milestones" />
        </section>
      ) : null}
      <div class="actions">
        {me === l.seller_wallet ? (
          <a class="button" href={`#/listings/${l.listing_id}/edit`}>
            Edit listing
          </a>
        ) : l.status === 'available' ? (
          me ? (
            l.packages.length ? (
              <AskSeller l={l} />
            ) : (
              <>
                <BuyButton l={l} label={`Buy for ${price}`} />
                <AskSeller l={l} />
              </>
            )
          ) : (
            <a class="button primary" href={`#/sign-in?next=${encodeURIComponent(`#/listings/${l.listing_id}`)}`}>
              Sign in to buy
            </a>
          )
        ) : (
          <p data-testid="unavailable">
            {l.status === 'reserved' && l.held_until
              ? `${held}: another buyer is checking out. It is for sale again if they do not pay by then.`
              : `${held ?? ''}: not for sale now.`}
          </p>
        )}
      </div>
      <BlinkShare id={l.listing_id} />
    </article>
  );
}
