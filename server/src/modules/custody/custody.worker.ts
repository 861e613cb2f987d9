/**
 * Custody background work, one pass (`runOnce`) at start-up and then every `intervalMs`:
 *
 *  1. reconcile open transfers (withdrawals, sweeps, order fundings): pending ones are sent (they
 *     were never signed), submitted ones converge to the chain (confirmed -> booked; failed or
 *     expired -> failed, hold released);
 *  2. detect deposits: for every deposit address and custody mint, the transactions of its
 *     associated token account newer than the scan cursor (getSignaturesForAddress, `finalized`);
 *     each one that raised the balance and did not invoke the escrow program is a deposit, recorded
 *     and credited once, keyed by (signature, token account);
 *  3. sweep: every deposit address holding credited tokens gets one sweep (deposit key signs, the
 *     service pays) of min(on-chain balance, credited-not-swept) to the hot wallet;
 *  4. book the escrow outcome of custodially funded orders that reached a terminal status (refunds
 *     and splits come back to the buyer's available balance).
 * A pass never throws; per-item failures are logged and retried on the next pass.
 */
import type { CustodyChainPort } from './custody.chain.js';
import { userAccount } from './custody.ledger.js';
import type { CustodyRepo } from './custody.repo.js';
import { type CustodyService, depositEntry } from './custody.service.js';
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
    { immediate: true },
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
        const mv = await chain.readMovement(s.signature, tokenAccount);
        if (!mv) break; // not readable yet: stop here, the cursor stays before it
        if (!mv.failed && !mv.touchesEscrow && mv.delta > 0n) {
          const credited = mv.delta >= minDeposit;
          const recorded = await repo.recordDeposit(
            { userId, address, tokenAccount, mint, currency, amount: mv.delta, signature: s.signature, slot: mv.slot, status: credited ? 'credited' : 'below_minimum' },
            credited ? depositEntry({ signature: s.signature, tokenAccount, userId, mint, amount: mv.delta }) : null,
          );
          if (recorded) {
            (credited ? pass.credited : pass.belowMinimum).push(`${s.signature}:${tokenAccount}`);
            this.log.info({ user_id: userId, mint, amount: mv.delta.toString(), signature: s.signature, credited }, 'custody: deposit detected');
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
        const source = chain.tokenAccount(address, mint, cur.tokenProgram);
        const onChain = await chain.tokenBalance(source);
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
