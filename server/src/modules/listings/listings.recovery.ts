/**
 * The listings recovery pass: converge every open listing intent with the chain (start-up, then
 * every `intervalMs` on the shared Poller). It finishes or compensates; it never mints anything:
 *
 *  - `mint_listing`: the token exists -> the listing row is written (the listing appears);
 *    the attempt may still land -> left open; it can never land (rejected, or its blockhash expired
 *    without it) -> the intent is retired (`failed`): no token, no listing;
 *  - `update_listing_token` (per listing): once no attempt can still land, the on-chain name is set
 *    to the name of the title the database holds (re-applied after a lost database write, put back
 *    after a rename whose title was never stored) and the intents are confirmed.
 *
 * A chain or database error on one intent leaves it open for the next pass.
 */
import { Poller } from '../../lib/poller.js';
import type { Log } from '../../lib/log.js';
import type { TokenSteps } from './listings.token-steps.js';
import type { ListingIntent, ListingsRepo } from './listings.types.js';

export type RecoveryOutcome = 'confirmed' | 'failed' | 'open';

export interface ListingsRecoveryDeps {
  repo: ListingsRepo;
  steps: TokenSteps;
  log?: Log;
}

export class ListingsRecovery {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.deps.log?.error({ err }, 'listing recovery pass failed'),
    { actor: 'listing-recovery' },
  );

  constructor(private readonly deps: ListingsRecoveryDeps) {}

  /** One pass over the open intents (oldest first, at most `limit`); the outcome per intent id. */
  async runOnce(limit = 100): Promise<Record<string, RecoveryOutcome>> {
    const { repo, steps, log } = this.deps;
    const out: Record<string, RecoveryOutcome> = {};
    const open = await repo.listOpenIntents(limit);
    const renames = new Map<string, ListingIntent[]>();
    for (const intent of open) {
      if (intent.action === 'update_listing_token') {
        renames.set(intent.listingId, [...(renames.get(intent.listingId) ?? []), intent]);
        continue;
      }
      out[intent.id] = await steps.settleMint(intent).catch((err: unknown) => {
        log?.warn({ err, intent_id: intent.id, listing_id: intent.listingId }, 'listing recovery: mint intent left open');
        return 'open' as const;
      });
    }
    for (const [listingId, intents] of renames) {
      const outcome = await steps.settleRenames(listingId, intents).catch((err: unknown) => {
        log?.warn({ err, listing_id: listingId }, 'listing recovery: rename intents left open');
        return 'open' as const;
      });
      for (const i of intents) out[i.id] = outcome;
    }
    return out;
  }

  /** Repeat `runOnce` every `intervalMs` milliseconds (0: never); the start-up pass is the caller's. */
  start(intervalMs: number): void {
    this.poller.start(intervalMs);
  }

  /** Stop the loop and wait for a pass in progress. */
  stop(): Promise<void> {
    return this.poller.stop();
  }
}
