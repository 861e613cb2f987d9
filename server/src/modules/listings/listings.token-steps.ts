/**
 * The chain-then-database steps of listings, made recoverable (README.md "Crash safety"):
 *
 *  - mint: the listing's Token-2022 NFT is minted at a mint address derived from the listing id; the
 *    `mint_listing` intent (the whole listing draft + the attempt's signature and blockhash expiry)
 *    is written after signing and before the send; the listing row is written once the token exists
 *    (`finishMint`: one transaction, idempotent). A request and the recovery pass run the same steps.
 *  - rename: the token's on-chain name follows the listing's title. Every metadata update is an
 *    `update_listing_token` intent written before its send; `syncName` sets the on-chain name to the
 *    title the database holds and confirms the intents only while that title is unchanged.
 *
 * Nothing here decides HTTP answers beyond the DomainErrors it throws (see `pendingMint`).
 */
import { DomainError } from '../../errors.js';
import { AttemptSuperseded } from '../../chain/recorded-send.js';
import type { ListingMintState, TxResult } from '../../chain/types.js';
import type { ListingDraft, ListingIntent, ListingRecord, ListingsDeps } from './listings.types.js';

export const TOKEN_SYMBOL = 'BZR';
/** token-metadata name limit of the chain module (bytes of UTF-8) */
export const TOKEN_NAME_MAX_BYTES = 32;

/** `title` cut to at most 32 characters and 32 UTF-8 bytes, on a code point boundary. */
export function tokenName(title: string): string {
  let out = '';
  let bytes = 0;
  let chars = 0;
  for (const ch of title) {
    const len = Buffer.byteLength(ch, 'utf8');
    if (chars + 1 > TOKEN_NAME_MAX_BYTES || bytes + len > TOKEN_NAME_MAX_BYTES) break;
    out += ch;
    bytes += len;
    chars += 1;
  }
  return out.trimEnd();
}


/** How many times `syncName` re-applies when the title keeps changing under it. */
const SYNC_ROUNDS = 3;

export type MintOutcome = 'confirmed' | 'failed' | 'open';

export function createTokenSteps(deps: Pick<ListingsDeps, 'repo' | 'chain' | 'log' | 'hooks'>) {
  const { repo, chain } = deps;

  /**
   * 503 chain-unavailable for a mint that was sent but whose outcome is unknown: the listing id and
   * mint are disclosed so the client can repeat the request (it resumes this intent) or GET it later.
   */
  function pendingMint(intent: ListingIntent, cause?: unknown): DomainError {
    return new DomainError(
      'chain-unavailable',
      `The token of listing ${intent.listingId} was sent but its outcome is not known yet; the listing appears once the ` +
        'mint is confirmed. Repeat the same request to resume it (it never mints a second token).',
      {
        listing_id: intent.listingId,
        token_mint_address: intent.mint,
        mint_signature: intent.signature,
        ...(cause instanceof DomainError && cause.extensions.program_error ? { program_error: cause.extensions.program_error } : {}),
      },
    );
  }

  /** Write the listing row of a mint that exists on chain (idempotent); 503 if the database fails. */
  async function finish(intent: ListingIntent, minted: { signature: string | null; slot: number | null }): Promise<ListingRecord> {
    const draft = intent.draft!;
    try {
      return await repo.finishMint(intent.id, {
        ...draft,
        tokenMint: intent.mint!,
        mintSignature: minted.signature ?? intent.signature ?? '',
        mintSlot: minted.slot ?? 0,
      });
    } catch (err) {
      deps.log?.error({ err, listingId: intent.listingId, mint: intent.mint, intent_id: intent.id }, 'listing token minted, row not stored yet (recovery will)');
      throw new DomainError(
        'service-unavailable',
        `The token of listing ${intent.listingId} is minted but the listing could not be stored yet; it appears once the ` +
          'database answers again. Repeat the same request to get it.',
        { listing_id: intent.listingId, token_mint_address: intent.mint, mint_signature: intent.signature },
      );
    }
  }

  async function readMint(intent: ListingIntent): Promise<ListingMintState> {
    return chain.readListingMint({ mint: intent.mint!, signature: intent.signature, lastValidBlockHeight: intent.lastValidBlockHeight });
  }

  /**
   * Send one mint attempt: the first one (`intent` null) inserts the intent, a resumed one replaces
   * the attempt of `intent` (compare-and-set on its signature). Returns the listing once stored.
   */
  async function attemptMint(draft: ListingDraft, fingerprint: string, intent: ListingIntent | null): Promise<ListingRecord> {
    let recorded: ListingIntent | null = null;
    let minted: TxResult & { mint: string };
    try {
      minted = await chain.mintListingToken(
        { listingId: draft.id, owner: draft.sellerWallet, name: tokenName(draft.title), symbol: TOKEN_SYMBOL, uri: draft.metadataUri },
        {
          onSigned: async (a) => {
            if (!intent) {
              recorded = await repo.recordMint(draft, fingerprint, a);
              return;
            }
            if (!(await repo.replaceAttempt(intent.id, intent.signature, a))) throw new AttemptSuperseded(`listing intent ${intent.id}`);
            recorded = { ...intent, signature: a.signature, lastValidBlockHeight: a.lastValidBlockHeight, mint: a.mint };
          },
        },
      );
    } catch (err) {
      const sent = recorded as ListingIntent | null;
      if (!sent) {
        // nothing was sent by this attempt
        if (err instanceof AttemptSuperseded && intent) return afterRace(intent);
        throw err;
      }
      // sent: it may have landed (a timeout), been rejected (502), or hit an existing mint (a resumed attempt)
      const state = await readMint(sent).catch(() => null);
      if (state?.state === 'minted') return finish(sent, state);
      if (state?.state === 'absent') {
        await repo.failIntent(sent.id, sent.signature, `mint failed: ${(err as Error).message}`).catch(() => undefined);
        throw err;
      }
      throw pendingMint(sent, err);
    }
    const done = recorded as unknown as ListingIntent;
    await deps.hooks?.afterMint?.({ listingId: draft.id, mint: minted.mint, tx: minted });
    return finish(done, minted);
  }

  /** A concurrent request or the recovery pass moved the intent: report what it became. */
  async function afterRace(intent: ListingIntent): Promise<ListingRecord> {
    const fresh = await repo.getIntent(intent.id);
    if (fresh?.status === 'confirmed') {
      const l = await repo.get(intent.listingId);
      if (l) return l;
    }
    throw pendingMint(fresh ?? intent);
  }

  /**
   * The same create again while its intent is open: the token exists -> store and return it; the
   * attempt may still land -> 503 again; it never will -> a new attempt at the same mint address.
   */
  async function resumeMint(intent: ListingIntent): Promise<ListingRecord> {
    let state: ListingMintState;
    try {
      state = await readMint(intent);
    } catch (err) {
      throw pendingMint(intent, err);
    }
    if (state.state === 'minted') return finish(intent, state);
    if (state.state === 'in_flight') throw pendingMint(intent);
    return attemptMint(intent.draft!, intent.fingerprint!, intent);
  }

  /** Recovery of one open mint intent: finish it when the token exists, retire it when it never will. */
  async function settleMint(intent: ListingIntent): Promise<MintOutcome> {
    const state = await readMint(intent);
    if (state.state === 'minted') {
      await repo.finishMint(intent.id, {
        ...intent.draft!,
        tokenMint: intent.mint!,
        mintSignature: state.signature ?? intent.signature ?? '',
        mintSlot: state.slot ?? 0,
      });
      deps.log?.info({ listing_id: intent.listingId, mint: intent.mint, intent_id: intent.id }, 'listing recovery: minted token stored');
      return 'confirmed';
    }
    if (state.state === 'in_flight') return 'open';
    const retired = await repo.failIntent(intent.id, intent.signature, 'the mint never landed (rejected, or its blockhash expired)');
    if (retired) deps.log?.warn({ listing_id: intent.listingId, intent_id: intent.id }, 'listing recovery: mint never landed, intent retired');
    return retired ? 'failed' : 'open';
  }

  /**
   * Set the token's on-chain name to the title the database holds, then confirm `intentIds` (and the
   * intents of the updates sent here) while that title is unchanged; repeat if it changed meanwhile.
   * Returns false when the title kept changing (the intents stay open for the next pass).
   * Errors: chain-unavailable / chain-transaction-failed (intents stay open).
   */
  async function syncName(listingId: string, intentIds: readonly string[]): Promise<boolean> {
    const ids = [...intentIds];
    for (let round = 0; round < SYNC_ROUNDS; round++) {
      const l = await repo.get(listingId);
      if (!l) {
        for (const id of ids) await repo.failIntent(id, (await repo.getIntent(id))?.signature ?? null, 'listing not found');
        return true;
      }
      const name = tokenName(l.title);
      await chain.updateListingToken(l.tokenMint, { name }, {
        onSigned: async (a) => {
          ids.push((await repo.recordRename(listingId, name, a)).id);
        },
      });
      if (await repo.confirmRenames(ids, listingId, l.title)) return true;
    }
    return false;
  }

  /**
   * Recovery of a listing's open rename intents: wait while any attempt may still land, then make
   * the on-chain name match the database title (a landed rename whose title was never stored is
   * put back: compensation) and confirm them.
   */
  async function settleRenames(listingId: string, intents: readonly ListingIntent[]): Promise<MintOutcome> {
    for (const i of intents) {
      if (!i.signature) continue;
      const outcome = await chain.transactionOutcome({
        signature: i.signature,
        lastValidBlockHeight: i.lastValidBlockHeight ?? Number.MAX_SAFE_INTEGER,
      });
      if (outcome.state === 'in_flight') return 'open';
    }
    const done = await syncName(listingId, intents.map((i) => i.id));
    if (done) deps.log?.info({ listing_id: listingId, intents: intents.length }, 'listing recovery: token name reconciled with the title');
    return done ? 'confirmed' : 'open';
  }

  return { attemptMint, resumeMint, settleMint, syncName, settleRenames, pendingMint };
}

export type TokenSteps = ReturnType<typeof createTokenSteps>;
