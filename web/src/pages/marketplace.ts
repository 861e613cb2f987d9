/** Marketplace: full-text search with category, sort and cursor paging, and the categories with counts. */
import type { Listing } from '@bazaar/client-sdk';
import { client, ok } from '../api.js';
import { busy, field, go, h, short, type Page } from '../dom.js';

const SORTS = { relevance: 'Relevance', newest: 'Newest', price_asc: 'Price, low to high', price_desc: 'Price, high to low', rating: 'Seller rating' } as const;

/** One result: title (link to the listing), price, category, seller. */
export function listingCard(l: Listing): HTMLElement {
  return h(
    'li',
    { class: 'card' },
    h('h3', {}, h('a', { href: `#/listings/${l.listing_id}` }, l.title)),
    h('p', { class: 'price' }, `${l.price} ${l.currency}`),
    h('p', { class: 'meta' }, `${l.category} · ${l.duration} day(s) · seller ${short(l.seller_wallet)} · ${l.status}`),
  );
}

export const marketplacePage: Page = async ({ query }) => {
  const q = query.get('q') ?? '';
  const category = query.get('category') ?? '';
  const sort = (query.get('sort') ?? 'relevance') as keyof typeof SORTS;
  const categories = ok(await client.marketplace.listCategories(), 200).data;

  const input = h('input', { type: 'search', name: 'q', value: q, placeholder: 'logo, video edit, …' });
  const catSelect = h(
    'select',
    { name: 'category' },
    h('option', { value: '' }, 'All categories'),
    ...categories.map((c) => h('option', { value: c.slug, selected: c.slug === category }, `${c.name} (${c.listing_count})`)),
  );
  const sortSelect = h('select', { name: 'sort' }, ...Object.entries(SORTS).map(([v, t]) => h('option', { value: v, selected: v === sort }, t)));
  const form = h(
    'form',
    { role: 'search', class: 'search' },
    field('Search', input),
    field('Category', catSelect),
    field('Sort by', sortSelect),
    h('button', { type: 'submit' }, 'Search'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const next = new URLSearchParams();
    if (input.value.trim()) next.set('q', input.value.trim());
    if (catSelect.value) next.set('category', catSelect.value);
    if (sortSelect.value !== 'relevance') next.set('sort', sortSelect.value);
    go(`#/?${next}`);
  });

  const results = h('ul', { class: 'cards', 'aria-label': 'Listings' });
  const more = h('button', { type: 'button' }, 'Load more');
  let cursor: string | null | undefined;
  const load = async () => {
    const page = ok(
      await client.marketplace.searchListings({
        query: { ...(q ? { query: q } : {}), ...(category ? { category } : {}), sort, limit: 20, ...(cursor ? { cursor } : {}) },
      }),
      200,
    );
    results.append(...page.data.map(listingCard));
    cursor = page.next_cursor;
    more.hidden = !cursor;
    if (!results.children.length) results.append(h('li', {}, 'No listings match.'));
  };
  more.addEventListener('click', busy(more, load));
  await load();

  const chips = h(
    'ul',
    { class: 'chips', 'aria-label': 'Categories' },
    ...categories.map((c) =>
      h('li', {}, h('a', { href: `#/?category=${c.slug}`, 'aria-current': c.slug === category ? 'true' : null }, `${c.name} ${c.listing_count}`)),
    ),
  );
  return h('section', {}, h('h1', {}, q ? `Results for “${q}”` : 'Marketplace'), form, h('h2', { class: 'sr-only' }, 'Categories'), chips, h('h2', {}, 'Listings'), results, more);
};
