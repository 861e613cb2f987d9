/**
 * Ports that fail where a crashed process would stop, for the crash-recovery tests. The modules take
 * them as port decorators (`ports` of createOrdersModule / createCustodyModule, `AppContext.orders.ports`
 * / `AppContext.custody.ports`) or as the ports given to a service; production code knows nothing of
 * them. Each returns a switch: set one of its callbacks to crash there (a throw: the process died with
 * an error; a promise that never settles: the process died silently), unset it to run normally.
 */
import type { TxResult } from '../../server/src/chain/types.js';
import type { CustodyRepo } from '../../server/src/modules/custody/custody.repo.js';
import type { TransferRecord } from '../../server/src/modules/custody/custody.types.js';
import type { EscrowPort, OrdersRepo } from '../../server/src/modules/orders/orders.types.js';

type Maybe = Promise<void> | void;

/** `target` with some methods replaced; every other member is the target's own (methods bound to it). */
function override<T extends object>(target: T, methods: Partial<Record<keyof T, unknown>>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.prototype.hasOwnProperty.call(methods, prop)) return methods[prop as keyof T];
      const v = Reflect.get(t, prop, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

/**
 * An escrow whose send (`afterSend`) or submission of a buyer-signed transaction (`afterSubmit`) lands on
 * chain and then "crashes": before the service records the outcome.
 */
export function crashingEscrow() {
  const sw: {
    afterSend?: (info: { orderId: string; instruction: string; tx: TxResult }) => Maybe;
    /** a buyer-signed transaction (a fund) landed; the service has not recorded it yet */
    afterSubmit?: (tx: TxResult) => Maybe;
    wrap: (e: EscrowPort) => EscrowPort;
  } = {
    wrap: (e) =>
      override(e, {
        send: async (...args: Parameters<EscrowPort['send']>) => {
          const tx = await e.send(...args);
          await sw.afterSend?.({ orderId: args[1], instruction: args[0], tx });
          return tx;
        },
        submitSignedTransaction: async (...args: Parameters<EscrowPort['submitSignedTransaction']>) => {
          const tx = await e.submitSignedTransaction(...args);
          await sw.afterSubmit?.(tx);
          return tx;
        },
      }),
  };
  return sw;
}

/**
 * An orders repository that "crashes" at the named steps of POST /orders: `order-inserted` = right after
 * the order row (and its listing hold) is committed; `payment-ready` = right after the fund transaction
 * issued for it is noted (the response not yet sent).
 */
export function crashingOrdersRepo() {
  const sw: {
    createStep?: (step: 'order-inserted' | 'payment-ready', info: { orderId: string }) => Maybe;
    wrap: (r: OrdersRepo) => OrdersRepo;
  } = {
    wrap: (r) =>
      override(r, {
        createHeld: async (...args: Parameters<OrdersRepo['createHeld']>) => {
          const out = await r.createHeld(...args);
          if ('created' in out) await sw.createStep?.('order-inserted', { orderId: out.created.id });
          return out;
        },
        noteFundIssued: async (...args: Parameters<OrdersRepo['noteFundIssued']>) => {
          await r.noteFundIssued(...args);
          await sw.createStep?.('payment-ready', { orderId: args[0] });
        },
      }),
  };
  return sw;
}

/**
 * A custody repository that "crashes" around a transfer's send: `beforeSend` right after the signature
 * is recorded (the process dies before the first send); `afterSend` when the confirmed transfer is
 * about to be booked (the process dies between the chain and the books).
 */
export function crashingCustodyRepo() {
  const sw: {
    beforeSend?: (t: TransferRecord) => Maybe;
    afterSend?: (t: TransferRecord, tx: TxResult) => Maybe;
    wrap: (r: CustodyRepo) => CustodyRepo;
  } = {
    wrap: (r) =>
      override(r, {
        markSubmitted: async (...args: Parameters<CustodyRepo['markSubmitted']>) => {
          const recorded = await r.markSubmitted(...args);
          if (recorded && sw.beforeSend) await sw.beforeSend((await r.getTransfer(args[0]))!);
          return recorded;
        },
        settle: async (...args: Parameters<CustodyRepo['settle']>) => {
          if (sw.afterSend) {
            const t = (await r.getTransfer(args[0]))!;
            await sw.afterSend(t, { signature: t.signature!, slot: args[1] ?? 0 });
          }
          return r.settle(...args);
        },
      }),
  };
  return sw;
}
