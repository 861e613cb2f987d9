/**
 * Custody background work, one pass (`runOnce`) at start-up and then every `intervalMs`:
 *
 *  1. reconcile open transfers (withdrawals, sweeps, order fundings): pending ones are sent (they
 *     were never signed), submitted ones converge to the chain (confirmed -> booked; failed or
 *     expired -> failed, hold released);
 *  2. detect deposits: for every deposit address and custody mint, the transactions of its
 *     associated token account newer than the scan cursor (getSignaturesForAddress, `finalized`);
 *     each one that raised the balance is a deposit for the rise less what escrow vaults paid into it
 *     (`depositCredit`: an escrow payout is booked through its order in step 4, never twice),
 *     recorded and credited once, keyed by (signature, token account);
 *  3. sweep: every deposit address holding credited tokens gets one sweep (deposit key signs, the
 *     service pays) of min(tokens in its token accounts of the mint, credited-not-swept) to the hot
 *     wallet;
 *  4. book the escrow outcome of custodially funded orders that reached a terminal status (refunds
 *     and splits come back to the buyer's available balance).
 * A pass never throws; per-item failures are logged and retried on the next pass.
 */
import type { CustodyChainPort } from './custody.chain.js';
import { userAccount } from './custody.ledger.js';
import type { CustodyRepo } from './custody.repo.js';
import type { CustodyService } from './custody.service.js';
import { depositCredit, depositEntry } from './custody.entries.js';
import { type Log, silentLog } from './custody.types.js';
import { Poller } from '../../lib/poller.js';

export interface CustodyWorkerDeps {
  service: CustodyService;
  repo: CustodyRepo;
  chain: CustodyChainPort;
  log?: Log;
  batchSize?: number;
}

/** What one pass did (ids / signatures), for logs and tests. */
export interface CustodyPass {
  /** transfer id -> status after reconciliation */
  reconciled: Record<string, string>;
  /** deposit keys `signature:token_account` credited in this pass */
  credited: string[];
  /** deposits recorded below the minimum (not credited) */
  belowMinimum: string[];
  /** sweep transfer ids created in this pass */
  sweeps: string[];
  /** order ids whose escrow outcome was booked */
  closedOrders: string[];
}

export class CustodyWorker {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.log.error({ err }, 'custody worker pass failed'),
    { immediate: true, actor: 'custody-worker' },
  );
  private readonly log: Log;

  constructor(private readonly deps: CustodyWorkerDeps) {
    this.log = deps.log ?? silentLog;
  }

  /** One full pass (steps 1-4); safe to call concurrently with request handling. */
  async runOnce(): Promise<CustodyPass> {
    const pass: CustodyPass = { reconciled: {}, credited: [], belowMinimum: [], sweeps: [], closedOrders: [] };
    await this.step('reconcile', () => this.reconcile(pass));
    await this.step('deposits', () => this.scanDeposits(pass));
    await this.step('sweeps', () => this.sweep(pass));
    await this.step('reconcile', () => this.reconcile(pass));
    await this.step('orders', () => this.closeOrders(pass));
    return pass;
  }

  private async step(name: string, fn: () => Promise<void>) {
    try {
      await fn();
    } catch (err) {
      this.log.warn({ err, step: name }, 'custody worker step failed');
    }
  }

  private async reconcile(pass: CustodyPass): Promise<void> {
    for (const t of await this.deps.repo.listOpen(this.deps.batchSize ?? 100)) {
      try {
        pass.reconciled[t.id] = await this.deps.service.reconcile(t);
      } catch (err) {
        this.log.warn({ err, transfer_id: t.id }, 'custody reconciler: transfer left open');
      }
    }
  }

  /** Step 2 for every deposit address (paged by user id). */
  async scanDeposits(pass: CustodyPass): Promise<void> {
    let after: string | undefined;
    for (;;) {
      const page = await this.deps.repo.listAddresses(200, after);
      for (const addr of page) {
        for (const cur of this.deps.service.currencies) {
          try {
            await this.scanTokenAccount(addr.userId, addr.address, cur.mint, cur.code, cur.minDeposit, cur.tokenProgram, pass);
          } catch (err) {
            this.log.warn({ err, address: addr.address, mint: cur.mint }, 'custody: deposit scan failed');
          }
        }
      }
      if (page.length < 200) break;
      after = page[page.length - 1].userId;
    }
  }

  private async scanTokenAccount(
    userId: string,
    address: string,
    mint: string,
    currency: string,
    minDeposit: bigint,
    tokenProgram: string | undefined,
    pass: CustodyPass,
  ): Promise<void> {
    const { repo, chain } = this.deps;
    const tokenAccount = chain.tokenAccount(address, mint, tokenProgram);
    const cursor = await repo.getCursor(tokenAccount);
    const sigs = await chain.newSignatures(tokenAccount, cursor);
    let last: string | null = null;
    for (const s of sigs) {
      if (!s.failed) {
        const r = await chain.readDeposit(s.signature, tokenAccount);
        if (!r) break; // not readable yet: stop here, the cursor stays before it
        const sources = r.delta > 0n ? r.inflows.map((i) => i.source).filter((x): x is string => x !== null) : [];
        const c = depositCredit(r, await repo.orderVaults(sources));
        if (!c) {
          this.log.warn({ signature: s.signature, token_account: tokenAccount }, 'custody: a balance change that cannot be attributed yet (lookup tables or CPIs not reported); read again next pass');
          break;
        }
        if (c.fromEscrow > 0n) {
          this.log.info({ user_id: userId, mint, amount: c.fromEscrow.toString(), signature: s.signature }, 'custody: escrow payout, booked through its order, not as a deposit');
        }
        if (c.credit > 0n) {
          const credited = c.credit >= minDeposit;
          const recorded = await repo.recordDeposit(
            { userId, address, tokenAccount, mint, currency, amount: c.credit, signature: s.signature, slot: r.slot, status: credited ? 'credited' : 'below_minimum' },
            credited ? depositEntry({ signature: s.signature, tokenAccount, userId, mint, amount: c.credit }) : null,
          );
          if (recorded) {
            (credited ? pass.credited : pass.belowMinimum).push(`${s.signature}:${tokenAccount}`);
            this.log.info({ user_id: userId, mint, amount: c.credit.toString(), signature: s.signature, credited }, 'custody: deposit detected');
          }
        }
      }
      last = s.signature;
    }
    if (last) await repo.setCursor(tokenAccount, last);
  }

  /** Step 3: one sweep per deposit address and mint holding credited, unswept tokens. */
  async sweep(pass: CustodyPass): Promise<void> {
    const { repo, chain, service } = this.deps;
    for (const { userId, mint, address } of await repo.listUnswept(this.deps.batchSize ?? 100)) {
      const cur = service.currencyByMint(mint);
      if (!cur) continue;
      try {
        // every token account of the deposit key for the mint: a refund may land outside its ATA
        const holdings = await chain.depositHoldings(address, mint, cur.tokenProgram);
        const onChain = holdings.reduce((sum, h) => sum + h.amount, 0n);
        const t = await repo.createSweep(
          {
            userId,
            currency: cur.code,
            mint,
            destination: chain.hotWallet,
            destinationTokenAccount: chain.tokenAccount(chain.hotWallet, mint, cur.tokenProgram),
          },
          onChain,
          async (tx) => {
            const locked = await repo.ledger.lock(tx, [userAccount(userId, mint, 'deposit_address')]);
            return [...locked.values()][0]?.balance ?? 0n;
          },
        );
        if (t) {
          pass.sweeps.push(t.id);
          await service.process(t.id);
        }
      } catch (err) {
        this.log.warn({ err, address, mint }, 'custody: sweep failed');
      }
    }
  }

  /** Step 4. */
  async closeOrders(pass: CustodyPass): Promise<void> {
    const { repo, service } = this.deps;
    if (!service.orders) return;
    for (const t of await repo.listFundedOpenOrders(this.deps.batchSize ?? 100)) {
      const order = await service.orders.get(t.orderId!);
      if (order && (await service.bookOrderOutcome(order))) pass.closedOrders.push(order.id);
    }
  }

  /** Run `runOnce` every `intervalMs` milliseconds (see Poller). */
  start(intervalMs: number): void {
    this.poller.start(intervalMs);
  }

  /** Stop the loop and wait for a pass in progress. */
  stop(): Promise<void> {
    return this.poller.stop();
  }
}
