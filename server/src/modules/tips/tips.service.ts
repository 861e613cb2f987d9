/**
 * Tips facade: the one object the HTTP handlers and the watcher hold; composes the use cases and only
 * delegates (docs/design.md "Use cases").
 */
import { confirmTip } from './use-cases/confirm-tip.js';
import type { TipsContext } from './use-cases/context.js';
import { createTip } from './use-cases/create-tip.js';
import { listTips } from './use-cases/list-tips.js';

export function createTipsService(c: TipsContext) {
  const create = createTip(c);
  const confirm = confirmTip(c);
  const list = listTips(c);
  return {
    /** POST /orders/{order_id}/tips */
    create: create.create,
    /** POST /orders/{order_id}/tips/{tip_id}/transaction */
    submit: confirm.submit,
    /** GET /orders/{order_id}/tips */
    list: list.list,
    /** one background pass over pending tips */
    checkPending: confirm.checkPending,
    /** confirm one tip by one transaction signature when the chain shows the payment */
    confirmBy: confirm.confirmBy,
  };
}

export type TipsService = ReturnType<typeof createTipsService>;
