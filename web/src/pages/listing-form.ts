/** Create a listing (`#/sell`: its NFT is minted to the seller's wallet) or edit one (`#/listings/:id/edit`). */
import { newIdempotencyKey, type Listing } from '@bazaar/client-sdk';
import { client, ok } from '../api.js';
import { busy, field, go, h, say, type Page } from '../dom.js';

export const listingFormPage: Page = async ({ params }) => {
  const editing: Listing | null = params.id ? ok(await client.listings.getListing({ params: { listing_id: params.id } }), 200) : null;
  const [categories, currencies] = await Promise.all([
    client.marketplace.listCategories().then((r) => ok(r, 200).data),
    client.marketplace.listCurrencies().then((r) => ok(r, 200).data),
  ]);

  const title = h('input', { name: 'title', required: true, minlength: 3, maxlength: 120, value: editing?.title });
  const description = h('textarea', { name: 'description', required: true, maxlength: 5000, rows: 5 }, editing?.description ?? '');
  const price = h('input', { name: 'price', type: 'number', required: true, min: 0, step: 'any', inputmode: 'decimal', value: editing?.price });
  const currency = h(
    'select',
    { name: 'currency', disabled: !!editing },
    ...currencies.map((c) => h('option', { value: c.code, selected: c.code === editing?.currency }, c.code)),
  );
  const category = h(
    'select',
    { name: 'category' },
    ...categories.map((c) => h('option', { value: c.slug, selected: c.slug === editing?.category }, c.name)),
  );
  const duration = h('input', { name: 'duration', type: 'number', required: true, min: 1, max: 365, step: 1, value: editing?.duration ?? 3 });
  const status = h(
    'select',
    { name: 'status' },
    h('option', { value: 'available', selected: editing?.status === 'available' }, 'Available'),
    h('option', { value: 'unlisted', selected: editing?.status === 'unlisted' }, 'Unlisted'),
  );
  const submit = h('button', { type: 'submit', class: 'primary' }, editing ? 'Save changes' : 'Create listing');
  const form = h(
    'form',
    { class: 'stack' },
    field('Title', title),
    field('Description', description),
    field('Price', price, editing ? `in ${editing.currency}` : 'in the currency below (UI units, e.g. 25 = 25 USDC)'),
    field('Currency', currency),
    field('Category', category),
    field('Delivery time (days)', duration),
    editing && ['available', 'unlisted'].includes(editing.status) ? field('Status', status) : null,
    submit,
  );
  /** the Idempotency-Key of the create request for the body last submitted */
  let attempt: { fingerprint: string; key: string } | undefined;
  const save = busy(submit, async () => {
    if (editing) {
      const body = {
        title: title.value,
        description: description.value,
        price: Number(price.value),
        category: category.value,
        duration: Number(duration.value),
        ...(['available', 'unlisted'].includes(editing.status) ? { status: status.value as 'available' | 'unlisted' } : {}),
      };
      const saved = ok(await client.listings.updateListing({ params: { listing_id: editing.listing_id }, body }), 200);
      say('Listing saved.');
      go(`#/listings/${saved.listing_id}`);
    } else {
      say('Creating the listing and minting its token…');
      const body = {
        title: title.value,
        description: description.value,
        price: Number(price.value),
        currency: currency.value,
        category: category.value,
        duration: Number(duration.value),
      };
      // one Idempotency-Key per body: a second submit (double click, retry after a lost answer) returns
      // the first listing instead of minting a second token; an edited form is a new request
      const fingerprint = JSON.stringify(body);
      if (attempt?.fingerprint !== fingerprint) attempt = { fingerprint, key: newIdempotencyKey() };
      const created = ok(await client.listings.createListing({ headers: { 'idempotency-key': attempt.key }, body }), 201);
      say(`Listed; token mint ${created.token_mint_address}.`);
      go(`#/listings/${created.listing_id}`);
    }
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void save();
  });
  return h('section', {}, h('h1', {}, editing ? `Edit “${editing.title}”` : 'Sell a service'), form);
};
