/**
 * Marketplace: full-text search with category, sort and cursor paging, and the categories with counts.
 * The categories and the first page of results are requested at once (two queries in parallel).
 */
import { useInfiniteQuery } from '@tanstack/react-query';
import { useRef } from 'preact/hooks';
import type { Listing } from '@bazaar/client-sdk';
import { client, ok, session } from '../api.js';
import { formatAmount, formatClock } from '../format.js';
import { useCategories, useDecimals } from '../queries.js';
import { navigate } from '../router.js';
import { ActionButton, Address, ErrorBox, Field, Loading, PageHeading, Rating, focusOn } from '../ui.js';
import { SignInPrompt, isSignInNeeded } from './sign-in.js';

const SORTS = { relevance: 'Relevance', newest: 'Newest', price_asc: 'Price, low to high', price_desc: 'Price, high to low', rating: 'Seller rating' } as const;

/** "Reserved until 14:05 CET" for a listing an unpaid order holds; "Sold", "Unlisted"; null when for sale. */
export function availability(l: Listing): string | null {
  if (l.status === 'available') return null;
  if (l.status === 'reserved') return l.held_until ? `Reserved until ${formatClock(l.held_until)}` : 'Reserved: paid by another buyer';
  return l.status === 'sold' ? 'Sold' : 'Unlisted';
}

/** One result: title (link to the listing), price, category name, seller with rating, availability. */
export function ListingCard({ l, categoryName }: { l: Listing; categoryName: string }) {
  const decimals = useDecimals();
  const held = availability(l);
  return (
    <li class="card" data-listing={l.listing_id}>
      <h3>
        <a href={`#/listings/${l.listing_id}`} dir="auto">
          {l.title}
        </a>
      </h3>
      <p class="price">
        {l.packages.length ? 'from ' : ''}
        {formatAmount(l.price_base_units, decimals(l.currency), l.currency)}
      </p>
      <p class="meta">
        {categoryName} · {l.duration} day{l.duration === 1 ? '' : 's'} · seller <Address value={l.seller_wallet} label="seller address" />{' '}
        <Rating average={l.metadata.seller_rating} count={l.metadata.seller_review_count} />
      </p>
      {held ? <p class="held">{held}</p> : l.stock !== null && l.stock > 1 ? <p class="meta">{l.remaining ?? 0} left</p> : null}
    </li>
  );
}

export function MarketplacePage({ query }: { query: URLSearchParams }) {
  const q = query.get('q') ?? '';
  const category = query.get('category') ?? '';
  const sort = (query.get('sort') ?? 'relevance') as keyof typeof SORTS;
  const categories = useCategories();
  const results = useInfiniteQuery({
    queryKey: ['search', q, category, sort],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      ok(
        await client.marketplace.searchListings({
          query: { ...(q ? { query: q } : {}), ...(category ? { category } : {}), sort, limit: 20, ...(pageParam ? { cursor: pageParam } : {}) },
        }),
        200,
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const list = useRef<HTMLUListElement>(null);
  const error = categories.error ?? results.error;
  if (error) {
    if (isSignInNeeded(error)) return <SignInPrompt />;
    return <ErrorBox heading="Marketplace" error={error} retry={() => void Promise.all([categories.refetch(), results.refetch()])} />;
  }
  if (!categories.data || !results.data) return <Loading what="Loading the marketplace" />;

  const nameOf = (slug: string) => categories.data.find((c) => c.slug === slug)?.name ?? slug;
  const listings = results.data.pages.flatMap((p) => p.data);
  const filtered = !!(q || category);
  const submit = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const next = new URLSearchParams();
    const text = String(f.get('q') ?? '').trim();
    if (text) next.set('q', text);
    if (f.get('category')) next.set('category', String(f.get('category')));
    if (f.get('sort') !== 'relevance') next.set('sort', String(f.get('sort')));
    navigate(`/?${next}`);
  };
  const loadMore = async () => {
    const before = listings.length;
    await results.fetchNextPage();
    // the focus goes to the first new result, not back to the top of the page
    focusOn(list.current?.children[before]?.querySelector('a'));
  };
  return (
    <section>
      <PageHeading text={q ? `Results for “${q}”` : 'Marketplace'} />
      <form role="search" class="search" onSubmit={submit} key={`${q}|${category}|${sort}`}>
        <Field id="search-q" label="Search">
          <input id="search-q" type="search" name="q" value={q} placeholder="logo, video edit, …" />
        </Field>
        <Field id="search-category" label="Category">
          <select id="search-category" name="category">
            <option value="">All categories</option>
            {categories.data.map((c) => (
              <option value={c.slug} selected={c.slug === category}>
                {c.name} ({c.listing_count})
              </option>
            ))}
          </select>
        </Field>
        <Field id="search-sort" label="Sort by">
          <select id="search-sort" name="sort">
            {Object.entries(SORTS).map(([v, t]) => (
              <option value={v} selected={v === sort}>
                {t}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit">Search</button>
      </form>
      <h2 class="sr-only">Categories</h2>
      <ul class="chips" aria-label="Categories">
        {categories.data.map((c) => (
          <li>
            <a href={`#/?category=${encodeURIComponent(c.slug)}`} aria-current={c.slug === category ? 'true' : undefined}>
              {c.name} {c.listing_count}
            </a>
          </li>
        ))}
      </ul>
      <h2>Listings</h2>
      {listings.length ? (
        <ul class="cards" aria-label="Listings" ref={list}>
          {listings.map((l) => (
            <ListingCard key={l.listing_id} l={l} categoryName={nameOf(l.category)} />
          ))}
        </ul>
      ) : filtered ? (
        <div class="empty">
          <p>No listings match. Try other words or all categories.</p>
          <p>
            <a href="#/">Show all listings</a>
          </p>
        </div>
      ) : (
        <div class="empty">
          <p>Nothing is for sale yet. Offer your service first: buyers pay into escrow, and you are paid when they confirm your delivery.</p>
          <p>
            <a class="button primary" href={session() ? '#/sell' : '#/sign-in?next=%23%2Fsell'}>
              Sell a service
            </a>
          </p>
        </div>
      )}
      {results.hasNextPage ? <ActionButton work={loadMore}>Load more</ActionButton> : null}
    </section>
  );
}
