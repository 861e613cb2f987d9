/**
 * Create a listing (`#/sell`: its NFT is minted to the seller's wallet) or edit one
 * (`#/listings/:id/edit`). The service's validation errors (problem `errors[]`) are shown on their field.
 */
import { useRef, useState } from 'preact/hooks';
import { newIdempotencyKey } from '@bazaar/client-sdk/lite';
import { client, ok } from '../api.js';
import { plain } from '../errors.js';
import { decimalToBaseUnits } from '../format.js';
import { queryClient, useCategories, useCurrencies, useListing } from '../queries.js';
import { navigate } from '../router.js';
import { ActionButton, ErrorBox, Field, Loading, PageHeading, described, focusOn, say } from '../ui.js';

export function ListingFormPage({ id }: { id?: string }) {
  const listing = useListing(id);
  const categories = useCategories();
  const currencies = useCurrencies();
  const [errors, setErrors] = useState<Record<string, string>>({});
  const form = useRef<HTMLFormElement>(null);
  /** the Idempotency-Key of the create request for the body last submitted */
  const attempt = useRef<{ fingerprint: string; key: string }>();
  const error = listing.error ?? categories.error ?? currencies.error;
  if (error) return <ErrorBox heading={id ? 'Edit listing' : 'Sell a service'} error={error} retry={() => void Promise.all([listing.refetch(), categories.refetch(), currencies.refetch()])} />;
  if ((id && !listing.data) || !categories.data || !currencies.data) return <Loading />;
  const editing = listing.data ?? null;
  const statusEditable = !!editing && ['available', 'unlisted'].includes(editing.status);

  const fail = (e: unknown) => {
    const p = plain(e);
    setErrors(p.fields);
    say(p.message, 'error');
    // the first field in error takes the focus (once it is marked: after the render)
    setTimeout(() => focusOn(form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')));
  };
  const save = async () => {
    const f = new FormData(form.current!);
    const get = (k: string) => String(f.get(k) ?? '');
    const currency = editing?.currency ?? get('currency');
    const decimals = currencies.data.find((c) => c.code === currency)?.decimals ?? 6;
    const local: Record<string, string> = {};
    const base = decimalToBaseUnits(get('price'), decimals);
    if (base === null || base <= 0n) local.price = `Enter a price above 0 with at most ${decimals} decimals, e.g. 25 or 2.5.`;
    if (get('title').trim().length < 3) local.title = 'At least 3 characters.';
    if (!get('description').trim()) local.description = 'Describe what the buyer gets.';
    setErrors(local);
    if (Object.keys(local).length) {
      say('Please correct the marked fields.', 'error');
      setTimeout(() => focusOn(form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')));
      return;
    }
    const common = { title: get('title'), description: get('description'), price: Number(get('price')), category: get('category'), duration: Number(get('duration')) };
    if (editing) {
      const body = { ...common, ...(statusEditable ? { status: get('status') as 'available' | 'unlisted' } : {}) };
      const saved = ok(await client.listings.updateListing({ params: { listing_id: editing.listing_id }, body }), 200);
      queryClient.setQueryData(['listing', saved.listing_id], saved);
      void queryClient.invalidateQueries({ queryKey: ['search'] });
      say('Listing saved.', 'info', true);
      navigate(`/listings/${saved.listing_id}`);
    } else {
      say('Creating the listing and minting its token…');
      const body = { ...common, currency };
      // one Idempotency-Key per body: a second submit (double click, retry after a lost answer) returns
      // the first listing instead of minting a second token; an edited form is a new request
      const fingerprint = JSON.stringify(body);
      if (attempt.current?.fingerprint !== fingerprint) attempt.current = { fingerprint, key: newIdempotencyKey() };
      const created = ok(await client.listings.createListing({ headers: { 'idempotency-key': attempt.current.key }, body }), 201);
      queryClient.setQueryData(['listing', created.listing_id], created);
      void queryClient.invalidateQueries({ queryKey: ['search'] });
      void queryClient.invalidateQueries({ queryKey: ['categories'] });
      say('Listed: its token was minted to your wallet.', 'info', true);
      navigate(`/listings/${created.listing_id}`);
    }
  };
  const priceHint = editing ? `in ${editing.currency}` : 'in the currency below, e.g. 25 = 25 USDC';
  const title = editing ? `Edit “${editing.title}”` : 'Sell a service';
  return (
    <section>
      <PageHeading text={title}>{editing ? <>Edit “<bdi>{editing.title}</bdi>”</> : title}</PageHeading>
      <form ref={form} class="stack" noValidate onSubmit={(e) => e.preventDefault()}>
        <Field id="l-title" label="Title" hint="3 to 120 characters" error={errors.title}>
          <input {...described('l-title', '3 to 120 characters', errors.title)} name="title" required minLength={3} maxLength={120} value={editing?.title} />
        </Field>
        <Field id="l-description" label="Description" error={errors.description}>
          <textarea {...described('l-description', undefined, errors.description)} name="description" required maxLength={5000} rows={5}>
            {editing?.description ?? ''}
          </textarea>
        </Field>
        <Field id="l-price" label="Price" hint={priceHint} error={errors.price}>
          <input {...described('l-price', priceHint, errors.price)} name="price" required inputMode="decimal" autoComplete="off" value={editing ? String(editing.price.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20 })) : ''} />
        </Field>
        <Field id="l-currency" label="Currency" error={errors.currency}>
          <select {...described('l-currency', undefined, errors.currency)} name="currency" disabled={!!editing}>
            {currencies.data.map((c) => (
              <option value={c.code} selected={c.code === editing?.currency}>
                {c.code}
              </option>
            ))}
          </select>
        </Field>
        <Field id="l-category" label="Category" error={errors.category}>
          <select {...described('l-category', undefined, errors.category)} name="category">
            {categories.data.map((c) => (
              <option value={c.slug} selected={c.slug === editing?.category}>
                {c.name}
              </option>
            ))}
          </select>
        </Field>
        <Field id="l-duration" label="Delivery time (days)" error={errors.duration}>
          <input {...described('l-duration', undefined, errors.duration)} name="duration" type="number" required min={1} max={365} step={1} value={editing?.duration ?? 3} />
        </Field>
        {statusEditable ? (
          <Field id="l-status" label="Status">
            <select id="l-status" name="status">
              <option value="available" selected={editing?.status === 'available'}>
                Available
              </option>
              <option value="unlisted" selected={editing?.status === 'unlisted'}>
                Unlisted
              </option>
            </select>
          </Field>
        ) : null}
        <ActionButton class="primary" type="submit" work={save} onError={fail}>
          {editing ? 'Save changes' : 'Create listing'}
        </ActionButton>
      </form>
    </section>
  );
}
